# SPDX-License-Identifier: Apache-2.0
"""End to end: --web.config.file, the Prometheus exporter-toolkit's web config (docs/operations.md "Running it", "Web security"), on the real daemon over real sockets on 127.0.0.1: basic auth with bcrypt
hashes, TLS with and without client certificates, minimum protocol versions, the configured
response headers, the file re-read when it changes (a broken edit keeping the last good one),
clients trickling TLS handshakes and request heads, a flood of wrong passwords beside a scraper,
--check-config and the start refusing a bad web config, and web.unix_socket: the endpoints on a
Unix socket for root without TLS or basic auth (mode 0600, other users refused by the file's mode
and by the daemon's SO_PEERCRED check, diagnose using it, the file replaced when stale, moved on
SIGHUP and removed at exit).

Certificates are made with the openssl command; bcrypt hashes with libxcrypt through ctypes
(Python's crypt module is gone from newer Pythons). Figures (latencies) are printed to stderr."""
import base64
import ctypes
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import harness
from harness import Daemon, wait_until

HEADER_DEADLINE = 10  # seconds: daemon/http/server_limits.hpp, docs/operations.md "Running it"
USER, PASSWORD = "prometheus", "s3cret-scraper"


def bcrypt(password, cost=10):
    """A $2b$ hash of `password` from libxcrypt, as htpasswd -nBC would make it."""
    lib = ctypes.CDLL("libcrypt.so.1")
    lib.crypt_gensalt_rn.restype = ctypes.c_char_p
    lib.crypt_gensalt_rn.argtypes = [ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                     ctypes.c_int]
    lib.crypt.restype = ctypes.c_char_p
    lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    salt = ctypes.create_string_buffer(128)
    assert lib.crypt_gensalt_rn(b"$2b$", cost, None, 0, salt, len(salt)), "crypt_gensalt_rn failed"
    hashed = lib.crypt(password.encode(), salt.value)
    assert hashed and hashed.startswith(b"$2b$"), hashed
    return hashed.decode()


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_certificates(d):
    """A CA, a server certificate for 127.0.0.1 signed by it, two client certificates signed by it
    (SAN DNS:prometheus.test and DNS:other.test), a second server certificate (for rotation), and
    a rogue CA with a client certificate of its own. P-256 keys: quick to make and to sign with."""
    def key(name):
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name + ".key", cwd=d)

    def ca(name):
        key(name)
        openssl("req", "-x509", "-new", "-key", name + ".key", "-subj", "/CN=" + name, "-days", "2",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
                "-out", name + ".crt", cwd=d)

    def leaf(name, issuer, subject, san, usage):
        key(name)
        openssl("req", "-new", "-key", name + ".key", "-subj", "/CN=" + subject, "-out", name + ".csr", cwd=d)
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write("subjectAltName=%s\nextendedKeyUsage=%s\nbasicConstraints=CA:FALSE\n" % (san, usage))
        openssl("x509", "-req", "-in", name + ".csr", "-CA", issuer + ".crt", "-CAkey", issuer + ".key",
                "-CAcreateserial", "-days", "2", "-extfile", name + ".ext", "-out", name + ".crt", cwd=d)

    ca("ca")
    ca("rogue-ca")
    leaf("server", "ca", "server-1", "IP:127.0.0.1,DNS:localhost", "serverAuth")
    leaf("server2", "ca", "server-2", "IP:127.0.0.1,DNS:localhost", "serverAuth")
    leaf("client", "ca", "prometheus", "DNS:prometheus.test", "clientAuth")
    leaf("client-other", "ca", "other", "DNS:other.test", "clientAuth")
    leaf("client-rogue", "rogue-ca", "prometheus", "DNS:prometheus.test", "clientAuth")


def client_context(d, ca="ca.crt", cert=None, max_version=None):
    ctx = ssl.create_default_context(cafile=os.path.join(d, ca))
    if cert:
        ctx.load_cert_chain(os.path.join(d, cert + ".crt"), os.path.join(d, cert + ".key"))
    if max_version:
        ctx.maximum_version = max_version
    return ctx


def basic(user, password):
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


class Reply:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def header(self, name):
        values = [v for k, v in self.headers if k.lower() == name.lower()]
        return values


def get(port, path="/metrics", tls=None, auth=None, timeout=5, conn=None):
    """One GET on a new connection (or `conn`, kept open by the caller)."""
    own = conn is None
    if own:
        conn = (http.client.HTTPSConnection("127.0.0.1", port, context=tls, timeout=timeout) if tls else
                http.client.HTTPConnection("127.0.0.1", port, timeout=timeout))
    try:
        conn.request("GET", path, headers={"Authorization": basic(*auth)} if auth else {})
        resp = conn.getresponse()
        return Reply(resp.status, resp.getheaders(), resp.read().decode(errors="replace"))
    finally:
        if own:
            conn.close()


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100.0 * (len(ordered) - 1))))]


def figures(name, seconds):
    ms = [s * 1000 for s in seconds]
    text = "%s: n=%d p50=%.2f ms p99=%.2f ms max=%.2f ms" % (name, len(ms), percentile(ms, 50), percentile(ms, 99),
                                                            max(ms))
    print("\n  figure: " + text, file=sys.stderr)
    return text


def client_hello(d):
    """The bytes of a real TLS ClientHello for the daemon, to trickle."""
    ctx = client_context(d)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def setUpModule():
    if shutil.which("openssl") is None:
        message = "the openssl command is not installed (deploy/install-deps.sh --test installs it)"
        if harness.require_all():
            raise AssertionError(message)
        raise unittest.SkipTest(message)
    global CERTS, HASH
    CERTS = tempfile.mkdtemp(prefix="memdiag-web-")
    make_certificates(CERTS)
    HASH = bcrypt(PASSWORD)


def tearDownModule():
    shutil.rmtree(CERTS, ignore_errors=True)


def wait_serving(daemon, tls=None, auth=None, timeout=15):
    """Until `daemon` answers /metrics with a sample (it takes one in the first second), over TLS
    with `tls` and with the credentials `auth`."""
    def answered():
        if daemon.proc.poll() is not None:
            raise AssertionError("memdiagd exited (%s): %s" % (daemon.proc.returncode, daemon.logs()))
        try:
            r = get(daemon.port, tls=tls, auth=auth, timeout=2)
            return r.status == 200 and "memdiag_source_up" in r.body
        except (OSError, http.client.HTTPException):
            return False
    wait_until(answered, timeout, "the daemon serving /metrics")
    return daemon


class WebConfigDaemon(Daemon):
    """The daemon with --web.config.file pointing at `text`, written to a file of the test's own
    (certificate paths in it relative to the certificates' directory, as the toolkit resolves
    them: the file is written there)."""

    def __init__(self, text, *args):
        self.web_file = os.path.join(CERTS, "web-%d-%d.yml" % (os.getpid(), time.monotonic_ns()))
        harness.write(self.web_file, text)
        super().__init__("--web.config.file", self.web_file, *args)

    def rewrite(self, text):
        """Replaces the file at once (as an editor or config management does), never half written."""
        harness.write(self.web_file + ".new", text)
        os.replace(self.web_file + ".new", self.web_file)

    def wait_up(self, tls=None, auth=None):
        return wait_serving(self, tls, auth)

    def close(self):
        super().close()
        for f in (self.web_file, self.web_file + ".new"):
            if os.path.exists(f):
                os.unlink(f)


def users(*pairs):
    return "basic_auth_users:\n" + "".join("  %s: %s\n" % (u, h) for u, h in pairs)


TLS_SECTION = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
HEADERS = ("http_server_config:\n  headers:\n    X-Frame-Options: deny\n    X-Content-Type-Options: nosniff\n"
           "    Strict-Transport-Security: max-age=31536000\n")


class BasicAuth(unittest.TestCase):
    """Plain HTTP with basic_auth_users and headers: one daemon for the class."""

    @classmethod
    def setUpClass(cls):
        cls.d = WebConfigDaemon(users((USER, HASH)) + HEADERS)
        cls.d.wait_up(auth=(USER, PASSWORD))

    @classmethod
    def tearDownClass(cls):
        cls.d.close()

    def test_no_credentials_are_401_with_www_authenticate(self):
        r = get(self.d.port)
        self.assertEqual(r.status, 401)
        self.assertEqual(r.header("WWW-Authenticate"), ["Basic"])
        self.assertNotIn("memdiag_", r.body)
        for path in ("/", "/healthz", "/api/v1/diagnosis"):  # every path, as the toolkit guards them
            self.assertEqual(get(self.d.port, path).status, 401, path)

    def test_a_wrong_password_or_unknown_user_is_401(self):
        for auth in ((USER, "wrong"), ("nobody", PASSWORD), (USER, PASSWORD + "x"), (USER, "")):
            r = get(self.d.port, auth=auth)
            self.assertEqual(r.status, 401, auth)
            self.assertEqual(r.header("WWW-Authenticate"), ["Basic"])
        # Not basic auth at all.
        conn = http.client.HTTPConnection("127.0.0.1", self.d.port, timeout=5)
        conn.request("GET", "/metrics", headers={"Authorization": "Bearer abc"})
        r = conn.getresponse()
        r.read()
        self.assertEqual(r.status, 401)
        # HEAD's 401 has no body: the next request on the connection is read right.
        conn.request("HEAD", "/metrics")
        r = conn.getresponse()
        r.read()
        self.assertEqual(r.status, 401)
        conn.request("GET", "/metrics", headers={"Authorization": basic(USER, PASSWORD)})
        r = conn.getresponse()
        self.assertEqual(r.status, 200)
        self.assertIn("memdiag_source_up", r.read().decode())
        conn.close()

    def test_a_refused_request_with_a_body_closes_the_connection(self):
        """The body is never read: kept open, it would be answered as a request of its own (a
        proxy reusing the connection would hand that answer to the next client)."""
        smuggled = b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
        with socket.create_connection(("127.0.0.1", self.d.port), timeout=5) as sock:
            sock.sendall(b"POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n" % len(smuggled) + smuggled)
            received = b""
            while True:  # until the daemon closes (a socket timeout fails the test)
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
        self.assertEqual(received.count(b"HTTP/1.1 "), 1, received)
        self.assertTrue(received.startswith(b"HTTP/1.1 401 "), received)
        self.assertIn(b"\r\nConnection: close\r\n", received)

    def test_the_right_credentials_get_the_metrics(self):
        r = get(self.d.port, auth=(USER, PASSWORD))
        self.assertEqual(r.status, 200)
        self.assertIn("memdiag_source_up", r.body)
        self.assertEqual(get(self.d.port, "/healthz", auth=(USER, PASSWORD)).status, 200)

    def test_configured_headers_are_on_every_response(self):
        for r in (get(self.d.port, auth=(USER, PASSWORD)), get(self.d.port),
                  get(self.d.port, "/nowhere", auth=(USER, PASSWORD))):
            self.assertEqual(r.header("X-Frame-Options"), ["deny"], r.status)
            self.assertEqual(r.header("X-Content-Type-Options"), ["nosniff"], r.status)
            self.assertEqual(r.header("Strict-Transport-Security"), ["max-age=31536000"], r.status)
        # The status page keeps its own Content-Security-Policy, once.
        page = get(self.d.port, "/", auth=(USER, PASSWORD))
        self.assertEqual(page.status, 200)
        self.assertEqual(len(page.header("Content-Security-Policy")), 1)
        self.assertEqual(page.header("X-Frame-Options"), ["deny"])

    def test_a_flood_of_wrong_passwords_does_not_delay_a_scraper(self):
        """24 threads send wrong passwords as fast as the daemon answers them (each a bcrypt check
        at cost 10, ~70 ms, on the daemon's one checking thread; beyond 16 waiting, 503 at once
        with Retry-After) while a scraper with the right credentials, cached after its first
        success, scrapes every 20 ms on a kept-alive connection and on new ones."""
        self.assertEqual(get(self.d.port, auth=(USER, PASSWORD)).status, 200)  # cached from here on
        stop = threading.Event()
        flood = {"401": 0, "503": 0, "other": 0}
        retry_after = set()
        lock = threading.Lock()

        def guess(n):
            deadline = time.monotonic() + 8
            while not stop.is_set() and time.monotonic() < deadline:
                try:
                    r = get(self.d.port, auth=(USER, "guess-%d-%d" % (n, time.monotonic_ns())), timeout=10)
                    status = r.status
                except (OSError, http.client.HTTPException):
                    status, r = None, None
                with lock:
                    key = str(status) if status in (401, 503) else "other"
                    flood[key] += 1
                    if status == 503:
                        retry_after.update(r.header("Retry-After"))
                if status == 503:
                    time.sleep(0.05)  # as a client told to retry later would, a little

        threads = [threading.Thread(target=guess, args=(n,)) for n in range(24)]
        for t in threads:
            t.start()
        kept, fresh = [], []
        try:
            time.sleep(0.5)  # the flood under way: the checking thread busy, its queue filling
            conn = http.client.HTTPConnection("127.0.0.1", self.d.port, timeout=5)
            end = time.monotonic() + 5
            while time.monotonic() < end:
                for timings, c in ((kept, conn), (fresh, None)):
                    start = time.monotonic()
                    r = get(self.d.port, auth=(USER, PASSWORD), conn=c)
                    timings.append(time.monotonic() - start)
                    self.assertEqual(r.status, 200)
                    self.assertIn("memdiag_source_up", r.body)
                time.sleep(0.02)
            conn.close()
        finally:
            stop.set()
            for t in threads:
                t.join()
        print("\n  figure: wrong-password flood: %s" % flood, file=sys.stderr)
        text = figures("scrape under the flood, kept-alive", kept) + "; " + figures("scrape under the flood, new "
                                                                                    "connection", fresh)
        self.assertGreater(flood["401"], 20, flood)  # the flood was real: checked and refused
        self.assertGreater(flood["503"], 0, flood)  # and over the queue's bound
        self.assertEqual(retry_after, {"1"})
        self.assertEqual(flood["other"], 0, flood)
        self.assertLess(percentile(kept, 99), 0.2, text)
        self.assertLess(percentile(fresh, 99), 0.2, text)
        self.assertIsNone(self.d.proc.poll())


class Tls(unittest.TestCase):
    """TLS without client certificates: one daemon for the class, and a plain one to compare."""

    @classmethod
    def setUpClass(cls):
        cls.d = WebConfigDaemon(TLS_SECTION)
        cls.ctx = client_context(CERTS)
        cls.d.wait_up(tls=cls.ctx)

    @classmethod
    def tearDownClass(cls):
        cls.d.close()

    def test_plain_http_to_the_tls_listener_gets_no_http_answer(self):
        with socket.create_connection(("127.0.0.1", self.d.port), timeout=5) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            received = b""
            try:
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    received += chunk
            except ConnectionResetError:
                pass
        self.assertFalse(received.startswith(b"HTTP/"), received[:80])
        self.assertNotIn(b"memdiag_", received)
        # Whatever came back is TLS (an alert record, 0x15) or nothing.
        self.assertTrue(received == b"" or received[0] == 0x15, received[:16])
        with self.assertRaises((http.client.HTTPException, OSError)):
            get(self.d.port)

    def test_tls_with_the_right_ca_gets_the_metrics(self):
        r = get(self.d.port, tls=self.ctx)
        self.assertEqual(r.status, 200)
        self.assertIn("memdiag_source_up", r.body)

    def test_pipelined_requests_in_one_record_larger_than_a_read_are_all_answered(self):
        """Three requests of ~3 KB each in one TLS record: the daemon reads at most a head's worth
        (8 KiB) at a time, so the rest stays decrypted inside OpenSSL, where the socket does not
        announce it. It must be read all the same: three answers, not two and a stall."""
        filler = "x" * 3000
        one = ("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: %s\r\n\r\n" % filler).encode()
        raw = socket.create_connection(("127.0.0.1", self.d.port), timeout=5)
        with self.ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            s.sendall(one * 3)  # one write: one record (up to 16 KiB)
            received = b""
            deadline = time.monotonic() + 5
            while received.count(b"HTTP/1.1 200") < 3 and time.monotonic() < deadline:
                try:
                    chunk = s.recv(65536)
                except socket.timeout:
                    break
                if not chunk:
                    break
                received += chunk
        self.assertEqual(received.count(b"HTTP/1.1 200"), 3, received[:300])

    def test_a_client_that_does_not_trust_the_ca_fails_the_handshake(self):
        with self.assertRaises(ssl.SSLCertVerificationError):
            get(self.d.port, tls=client_context(CERTS, ca="rogue-ca.crt"))

    def test_handshake_and_scrape_latency_against_plain_http(self):
        """Figures: a new connection per scrape (a full TLS handshake each) and a kept-alive one."""
        with Daemon() as plain:
            plain.wait_ready()
            new_plain = []
            for _ in range(50):
                start = time.monotonic()
                self.assertEqual(get(plain.port).status, 200)
                new_plain.append(time.monotonic() - start)
        new_tls, kept_tls = [], []
        for _ in range(50):
            start = time.monotonic()
            self.assertEqual(get(self.d.port, tls=self.ctx).status, 200)
            new_tls.append(time.monotonic() - start)
        conn = http.client.HTTPSConnection("127.0.0.1", self.d.port, context=self.ctx, timeout=5)
        for _ in range(50):
            start = time.monotonic()
            self.assertEqual(get(self.d.port, conn=conn).status, 200)
            kept_tls.append(time.monotonic() - start)
        conn.close()
        figures("plain HTTP, new connection per scrape", new_plain)
        figures("TLS, new connection per scrape (handshake included)", new_tls)
        text = figures("TLS, kept-alive connection", kept_tls)
        self.assertLess(percentile(new_tls, 99), 0.5, text)

    def test_clients_trickling_handshakes_and_heads_do_not_block_scrapes(self):
        """Slowloris over TLS: 20 connections trickle a real ClientHello a byte every 0.2 s, and 10
        finish their handshake and then trickle a request head the same way. Scrapes keep
        succeeding fast meanwhile, and the handshakes trickled in are dropped at the head deadline
        from accepting them, like a head that never completes: the bytes do not extend it."""
        hello = client_hello(CERTS)
        trickling = []
        for _ in range(20):
            s = socket.create_connection(("127.0.0.1", self.d.port), timeout=5)
            trickling.append([s, hello, 0, time.monotonic(), None])  # socket, bytes, sent, opened, closed at
        head = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        heads = []
        for _ in range(10):
            raw = socket.create_connection(("127.0.0.1", self.d.port), timeout=5)
            heads.append([self.ctx.wrap_socket(raw, server_hostname="127.0.0.1"), head, 0, time.monotonic(), None])
        stop = threading.Event()

        def trickle():
            while not stop.is_set():
                now = time.monotonic()
                for entry in trickling + heads:
                    s, data, sent, opened, closed = entry
                    if closed is not None:
                        continue
                    try:
                        if sent < len(data):
                            s.send(data[sent:sent + 1])
                            entry[2] += 1
                        else:  # all sent (a head's end never reached: it is one byte short)
                            pass
                    except OSError:
                        entry[4] = now
                time.sleep(0.2)

        # One byte short of the end: never a complete head or handshake.
        for entry in trickling + heads:
            entry[1] = entry[1][:-1]
        t = threading.Thread(target=trickle)
        t.start()
        latencies = []
        try:
            end = time.monotonic() + 4
            while time.monotonic() < end:
                start = time.monotonic()
                r = get(self.d.port, tls=self.ctx)
                latencies.append(time.monotonic() - start)
                self.assertEqual(r.status, 200)
                time.sleep(0.1)
            text = figures("TLS scrape while 30 connections trickle handshakes and heads", latencies)
            self.assertLess(percentile(latencies, 99), 0.5, text)

            # The daemon drops them at the head deadline (it closes; the next send or a read sees it).
            def all_closed():
                for entry in trickling + heads:
                    if entry[4] is None:
                        s = entry[0]
                        try:
                            s.setblocking(False)
                            if s.recv(1) == b"":
                                entry[4] = time.monotonic()
                        except (BlockingIOError, ssl.SSLWantReadError):
                            pass
                        except OSError:
                            entry[4] = time.monotonic()
                return all(entry[4] is not None for entry in trickling + heads)
            wait_until(all_closed, HEADER_DEADLINE + 5, "every trickling connection closed by the daemon")
        finally:
            stop.set()
            t.join()
            for entry in trickling + heads:
                entry[0].close()
        lasted = [entry[4] - entry[3] for entry in trickling]
        print("\n  figure: trickled handshakes dropped after %.1f-%.1f s" % (min(lasted), max(lasted)), file=sys.stderr)
        self.assertTrue(all(HEADER_DEADLINE - 1 <= s <= HEADER_DEADLINE + 3 for s in lasted), lasted)


class ClientCertificates(unittest.TestCase):
    def test_required_and_verified_client_certificate(self):
        with WebConfigDaemon(TLS_SECTION + "  client_auth_type: RequireAndVerifyClientCert\n"
                             "  client_ca_file: ca.crt\n") as d:
            d.wait_up(tls=client_context(CERTS, cert="client"))
            self.assertEqual(get(d.port, tls=client_context(CERTS, cert="client")).status, 200)
            # Without a certificate, or with one from another CA: no HTTP answer. (TLS 1.3 lets the
            # client finish its side of the handshake first; the server's alert ends it on the read.)
            for ctx in (client_context(CERTS), client_context(CERTS, cert="client-rogue")):
                with self.assertRaises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
                    get(d.port, tls=ctx)
            self.assertIsNone(d.proc.poll())

    def test_client_allowed_sans(self):
        with WebConfigDaemon(TLS_SECTION + "  client_auth_type: RequireAndVerifyClientCert\n"
                             "  client_ca_file: ca.crt\n  client_allowed_sans: [prometheus.test]\n") as d:
            d.wait_up(tls=client_context(CERTS, cert="client"))
            with self.assertRaises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
                get(d.port, tls=client_context(CERTS, cert="client-other"))  # right CA, SAN not allowed

    def test_min_version_tls13_refuses_a_tls12_client(self):
        with WebConfigDaemon(TLS_SECTION + "  min_version: TLS13\n") as d:
            d.wait_up(tls=client_context(CERTS))
            with self.assertRaises(ssl.SSLError):
                get(d.port, tls=client_context(CERTS, max_version=ssl.TLSVersion.TLSv1_2))
            conn = http.client.HTTPSConnection("127.0.0.1", d.port, context=client_context(CERTS), timeout=5)
            conn.connect()
            self.assertEqual(conn.sock.version(), "TLSv1.3")
            conn.close()


class Reload(unittest.TestCase):
    def test_an_edit_takes_effect_and_a_broken_one_keeps_the_last_good(self):
        bob_hash = bcrypt("bob-password")
        with WebConfigDaemon(users((USER, HASH))) as d:
            d.wait_up(auth=(USER, PASSWORD))
            self.assertEqual(get(d.port, auth=("bob", "bob-password")).status, 401)
            d.rewrite(users((USER, HASH), ("bob", bob_hash)))
            changed = time.monotonic()
            wait_until(lambda: get(d.port, auth=("bob", "bob-password")).status == 200, 5, "bob let in")
            took = time.monotonic() - changed
            print("\n  figure: a user added took effect after %.2f s" % took, file=sys.stderr)
            self.assertLess(took, 2.5)

            d.rewrite(users((USER, HASH), ("bob", bob_hash)) + "tls_server_config:\n  cert_fil: x\n")
            wait_until(lambda: "keeping the last good one" in d.logs(), 5, "the broken edit logged")
            for _ in range(25):  # 2.5 s of requests: still the last good config, logged once
                self.assertEqual(get(d.port, auth=("bob", "bob-password")).status, 200)
                self.assertEqual(get(d.port, auth=(USER, PASSWORD)).status, 200)
                time.sleep(0.1)
            self.assertEqual(d.logs().count("keeping the last good one"), 1, d.logs())
            self.assertIn("tls_server_config.cert_fil: unknown key", d.logs())

            d.rewrite(users(("bob", bob_hash)))  # fixed again, without the scraper's user
            wait_until(lambda: get(d.port, auth=(USER, PASSWORD)).status == 401, 5, "the scraper's user removed")
            self.assertEqual(get(d.port, auth=("bob", "bob-password")).status, 200)
            self.assertIsNone(d.proc.poll())

    def test_a_config_written_before_its_certificate_applies_once_the_certificate_arrives(self):
        """As configuration management may do it: the web config first, naming files not there
        yet (refused, logged), then the certificate and key: their arrival is the change."""
        prefix = "late-%d-" % os.getpid()
        with WebConfigDaemon(HEADERS) as d:
            d.wait_up()
            d.rewrite("tls_server_config:\n  cert_file: %sserver.crt\n  key_file: %sserver.key\n" % (prefix, prefix))
            wait_until(lambda: "keeping the last good one" in d.logs(), 5, "the config without its files refused")
            self.assertEqual(get(d.port).status, 200)  # still plain HTTP
            try:
                for f in ("server.key", "server.crt"):
                    shutil.copy(os.path.join(CERTS, f), os.path.join(CERTS, prefix + f))
                ctx = client_context(CERTS)

                def tls_served():
                    try:
                        return get(d.port, tls=ctx, timeout=2).status == 200
                    except (OSError, http.client.HTTPException):
                        return False
                wait_until(tls_served, 5, "TLS once the certificate and key arrived")
            finally:
                for f in ("server.key", "server.crt"):
                    if os.path.exists(os.path.join(CERTS, prefix + f)):
                        os.unlink(os.path.join(CERTS, prefix + f))

    def test_sighup_retargets_web_config_file_and_refuses_a_broken_one(self):
        """web.config_file in the main config: SIGHUP pointing it at a broken web config keeps the
        running config (logged); pointing it at another good one applies it; "" turns auth off."""
        with tempfile.TemporaryDirectory() as d:
            main = os.path.join(d, "memdiagd.yaml")
            harness.write(os.path.join(d, "a.yml"), users((USER, HASH)))
            harness.write(os.path.join(d, "broken.yml"), "basic_auth_users:\n  alice: plaintext\n")
            harness.write(os.path.join(d, "b.yml"), users(("bob", bcrypt("bob-password", cost=4))))
            harness.write(main, "web:\n  config_file: a.yml\n")
            with Daemon("--config", main) as daemon:
                wait_serving(daemon, auth=(USER, PASSWORD))
                harness.write(main, "web:\n  config_file: broken.yml\n")
                daemon.signal(signal.SIGHUP)
                wait_until(lambda: "its web config is invalid" in daemon.logs(), 10, "the broken web config refused")
                self.assertIn("broken.yml:2: basic_auth_users.alice: not a bcrypt hash", daemon.logs())
                self.assertEqual(get(daemon.port, auth=(USER, PASSWORD)).status, 200)
                harness.write(main, "web:\n  config_file: b.yml\n")
                daemon.signal(signal.SIGHUP)
                wait_until(lambda: get(daemon.port, auth=("bob", "bob-password")).status == 200, 10, "b.yml applied")
                self.assertEqual(get(daemon.port, auth=(USER, PASSWORD)).status, 401)
                harness.write(main, "web:\n  config_file: \"\"\n")
                daemon.signal(signal.SIGHUP)
                wait_until(lambda: get(daemon.port).status == 200, 10, "no web config: open again")

    def test_turning_tls_on_closes_a_kept_alive_plain_connection(self):
        """A scraper's kept-alive connection would otherwise go on in plain HTTP for as long as it
        scrapes: its next request gets no answer, the connection is closed."""
        with WebConfigDaemon(HEADERS) as d:
            d.wait_up()
            kept = http.client.HTTPConnection("127.0.0.1", d.port, timeout=5)
            self.assertEqual(get(d.port, conn=kept).status, 200)
            d.rewrite(TLS_SECTION + HEADERS)
            wait_until(lambda: "reloaded: TLS" in d.logs(), 5, "the TLS config applied")
            with self.assertRaises((http.client.RemoteDisconnected, ConnectionError)):
                get(d.port, conn=kept)
            kept.close()
            self.assertEqual(get(d.port, tls=client_context(CERTS)).status, 200)

    def test_a_new_certificate_applies_to_new_connections(self):
        for f in ("server.crt", "server.key"):
            shutil.copy(os.path.join(CERTS, f), os.path.join(CERTS, "rotating-" + f))
        text = "tls_server_config:\n  cert_file: rotating-server.crt\n  key_file: rotating-server.key\n"
        ctx = client_context(CERTS)

        def common_name():
            conn = http.client.HTTPSConnection("127.0.0.1", d.port, context=ctx, timeout=5)
            try:
                conn.connect()
                return dict(x[0] for x in conn.sock.getpeercert()["subject"])["commonName"]
            finally:
                conn.close()
        with WebConfigDaemon(text) as d:
            d.wait_up(tls=ctx)
            self.assertEqual(common_name(), "server-1")
            kept = http.client.HTTPSConnection("127.0.0.1", d.port, context=ctx, timeout=5)
            self.assertEqual(get(d.port, conn=kept).status, 200)
            for f in ("server.crt", "server.key"):  # the certificate files replaced, the web config not
                shutil.copy(os.path.join(CERTS, f.replace("server", "server2")), os.path.join(CERTS, "rotating-" + f))
            wait_until(lambda: common_name() == "server-2", 5, "the new certificate served")
            self.assertEqual(get(d.port, conn=kept).status, 200)  # the open connection goes on
            kept.close()


class Diagnose(unittest.TestCase):
    """`memdiagd diagnose` with the daemon's own config when web security is on: it speaks TLS,
    trusting the certificate the daemon's web config names, and sends basic auth from a file or
    MEMDIAG_BASIC_AUTH; it says why when the daemon refuses it."""

    @classmethod
    def setUpClass(cls):
        cls.port = harness.free_port()
        cls.web_file = os.path.join(CERTS, "web-diagnose-%d.yml" % os.getpid())
        harness.write(cls.web_file, TLS_SECTION + users((USER, HASH)))
        cls.config = os.path.join(CERTS, "memdiagd-diagnose-%d.yaml" % os.getpid())
        harness.write(cls.config, 'web:\n  listen_address: "127.0.0.1:%d"\n  config_file: %s\n'
                      % (cls.port, os.path.basename(cls.web_file)))
        cls.d = Daemon("--config", cls.config, port=cls.port, listen_flag=False)
        wait_serving(cls.d, tls=client_context(CERTS), auth=(USER, PASSWORD))

    @classmethod
    def tearDownClass(cls):
        cls.d.close()
        for f in (cls.web_file, cls.config):
            os.unlink(f)

    def diagnose(self, *args, env=None):
        return subprocess.run([harness.MEMDIAGD, "diagnose", "--config", self.config, "--format", "json",
                               "--timeout", "5s", *args], capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, **(env or {})))

    def test_credentials_from_the_environment_over_tls(self):
        out = self.diagnose(env={"MEMDIAG_BASIC_AUTH": "%s:%s" % (USER, PASSWORD)})
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout)["origin"], "daemon", out.stderr)
        self.assertEqual(out.stderr, "")

    def test_credentials_from_a_file(self):
        path = os.path.join(CERTS, "auth-%d" % os.getpid())
        harness.write(path, "%s:%s\n" % (USER, PASSWORD))
        self.addCleanup(os.unlink, path)
        out = self.diagnose("--basic-auth-file", path)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout)["origin"], "daemon", out.stderr)

    def test_without_or_with_wrong_credentials_it_says_why(self):
        out = self.diagnose("--duration", "1s")  # --duration: samples locally, asks no one
        self.assertEqual(json.loads(out.stdout)["origin"], "local")
        out = self.diagnose()
        self.assertIn("answered 401", out.stderr)
        self.assertIn("--basic-auth-file FILE or MEMDIAG_BASIC_AUTH", out.stderr)
        self.assertEqual(json.loads(out.stdout)["origin"], "local")  # it sampled the node itself
        out = self.diagnose(env={"MEMDIAG_BASIC_AUTH": "%s:wrong" % USER})
        self.assertIn("the user and password were refused", out.stderr)

    def test_a_ca_that_did_not_sign_the_daemons_certificate_is_refused(self):
        out = self.diagnose("--ca-file", os.path.join(CERTS, "rogue-ca.crt"),
                            env={"MEMDIAG_BASIC_AUTH": "%s:%s" % (USER, PASSWORD)})
        self.assertIn("not trusted", out.stderr)
        self.assertEqual(json.loads(out.stdout)["origin"], "local")
        out = self.diagnose("--ca-file", os.path.join(CERTS, "ca.crt"), "--url",
                            "https://localhost:%d/api/v1/diagnosis" % self.port,
                            env={"MEMDIAG_BASIC_AUTH": "%s:%s" % (USER, PASSWORD)})
        self.assertEqual(json.loads(out.stdout)["origin"], "daemon", out.stderr)


class DiagnoseClientCertificate(unittest.TestCase):
    """`memdiagd diagnose` against a daemon whose web config requires a client certificate
    verified against its CA: --cert-file/--key-file present one; without it the refusal names
    the two flags."""

    @classmethod
    def setUpClass(cls):
        cls.port = harness.free_port()
        cls.web_file = os.path.join(CERTS, "web-diagnose-mtls-%d.yml" % os.getpid())
        harness.write(cls.web_file, TLS_SECTION + "  client_auth_type: RequireAndVerifyClientCert\n"
                                                  "  client_ca_file: ca.crt\n")
        cls.config = os.path.join(CERTS, "memdiagd-diagnose-mtls-%d.yaml" % os.getpid())
        harness.write(cls.config, 'web:\n  listen_address: "127.0.0.1:%d"\n  config_file: %s\n'
                      % (cls.port, os.path.basename(cls.web_file)))
        cls.d = Daemon("--config", cls.config, port=cls.port, listen_flag=False)
        wait_serving(cls.d, tls=client_context(CERTS, cert="client"))

    @classmethod
    def tearDownClass(cls):
        cls.d.close()
        for f in (cls.web_file, cls.config):
            os.unlink(f)

    def diagnose(self, *args):
        return subprocess.run([harness.MEMDIAGD, "diagnose", "--config", self.config, "--format", "json",
                               "--timeout", "5s", *args], capture_output=True, text=True, timeout=60)

    def cert(self, name):
        return ["--cert-file", os.path.join(CERTS, name + ".crt"), "--key-file", os.path.join(CERTS, name + ".key")]

    def test_the_client_certificate_is_presented(self):
        out = self.diagnose(*self.cert("client"))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout)["origin"], "daemon", out.stderr)
        self.assertEqual(out.stderr, "")

    def test_without_one_the_refusal_names_the_flags(self):
        out = self.diagnose()
        self.assertIn("requires a client certificate: give --cert-file FILE and --key-file FILE", out.stderr)
        self.assertEqual(json.loads(out.stdout)["origin"], "local")  # it sampled the node itself

    def test_a_certificate_from_another_ca_is_refused(self):
        out = self.diagnose(*self.cert("client-rogue"))
        self.assertIn("no diagnosis from https://127.0.0.1:%d" % self.port, out.stderr)
        self.assertNotIn("requires a client certificate", out.stderr, "one was given")
        self.assertEqual(json.loads(out.stdout)["origin"], "local")

    def test_bad_flags_and_files(self):
        out = self.diagnose("--cert-file", os.path.join(CERTS, "client.crt"))
        self.assertEqual(out.returncode, 2)
        self.assertIn("--cert-file and --key-file go together", out.stderr)
        out = self.diagnose("--cert-file", os.path.join(CERTS, "client.crt"),
                            "--key-file", os.path.join(CERTS, "client-rogue.key"))
        self.assertIn("client-rogue.key: cannot use it as the private key of", out.stderr)
        self.assertIn("key values mismatch", out.stderr)
        self.assertEqual(json.loads(out.stdout)["origin"], "local")
        out = self.diagnose("--cert-file", os.path.join(CERTS, "nowhere.crt"),
                            "--key-file", os.path.join(CERTS, "client.key"))
        self.assertIn("nowhere.crt: cannot load it as a certificate", out.stderr)


# A client run as nobody (uid 65534) that connects to the Unix socket argv[1], sends a request for
# /metrics and prints what happened as JSON: {"connect": errno name or "ok", "reply": bytes read}.
NOBODY_CLIENT = r"""
import errno, json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print(json.dumps({"connect": errno.errorcode.get(e.errno, str(e.errno)), "reply": ""}))
    sys.exit(0)
reply = b""
try:
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        reply += chunk
except OSError as e:
    reply += ("<%s>" % errno.errorcode.get(e.errno, str(e.errno))).encode()
print(json.dumps({"connect": "ok", "reply": reply.decode(errors="replace")[:200]}))
"""


def as_nobody(socket_path):
    """NOBODY_CLIENT's verdict, run under setpriv as uid/gid 65534 with no supplementary groups
    (the system's python: the test's own may sit under a directory nobody cannot enter)."""
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                        NOBODY_CLIENT, socket_path], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise AssertionError("the nobody client failed: %s" % p.stderr)
    return json.loads(p.stdout)


def unix_get(path, target="/metrics", timeout=5):
    """(status line, head, body) of a plain HTTP GET over the Unix socket `path`."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" % target).encode())
        reply = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
    head, _, body = reply.decode().partition("\r\n\r\n")
    return head.split("\r\n")[0], head, body


class UnixSocket(unittest.TestCase):
    """web.unix_socket beside a network listener with TLS and basic auth: one daemon for the
    class, its socket in a directory of the test's own that anyone may traverse (0711), so that
    the socket's own mode is what keeps other users out."""

    @classmethod
    def setUpClass(cls):
        if shutil.which("setpriv") is None:
            raise unittest.SkipTest("setpriv (util-linux) is not installed")
        if os.geteuid() != 0:
            raise unittest.SkipTest("needs root: the socket is root's, and a test client runs as nobody")
        cls.dir = tempfile.mkdtemp(prefix="memdiag-sock-")
        os.chmod(cls.dir, 0o711)
        cls.socket = os.path.join(cls.dir, "memdiagd.sock")
        cls.port = harness.free_port()
        cls.web_file = os.path.join(CERTS, "web-unix-%d.yml" % os.getpid())
        harness.write(cls.web_file, TLS_SECTION + users((USER, HASH)))
        cls.config = os.path.join(CERTS, "memdiagd-unix-%d.yaml" % os.getpid())
        harness.write(cls.config, 'web:\n  listen_address: "127.0.0.1:%d"\n  config_file: %s\n  unix_socket: %s\n'
                      % (cls.port, os.path.basename(cls.web_file), cls.socket))
        cls.d = Daemon("--config", cls.config, port=cls.port, listen_flag=False)
        wait_serving(cls.d, tls=client_context(CERTS), auth=(USER, PASSWORD))
        wait_until(lambda: os.path.exists(cls.socket), 10, "the socket " + cls.socket)
        cls.made = os.lstat(cls.socket)  # before any test loosens it

    @classmethod
    def tearDownClass(cls):
        cls.d.close()
        for f in (cls.web_file, cls.config):
            os.unlink(f)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def diagnose(self, *args):
        env = {k: v for k, v in os.environ.items() if k != "MEMDIAG_BASIC_AUTH"}
        return subprocess.run([harness.MEMDIAGD, "diagnose", "--timeout", "5s", *args], capture_output=True, text=True,
                              timeout=60, env=env)

    def test_the_socket_is_made_with_mode_0600(self):
        st = self.made
        self.assertTrue(stat.S_ISSOCK(st.st_mode))
        self.assertEqual(st.st_mode & 0o7777, 0o600, oct(st.st_mode))
        self.assertEqual(st.st_uid, 0)
        self.assertIn("serving on unix:%s" % self.socket, self.d.logs())

    def test_plain_http_without_credentials_on_the_socket_while_tcp_wants_tls_and_a_password(self):
        status, head, body = unix_get(self.socket)
        self.assertEqual(status, "HTTP/1.1 200 OK", head)
        self.assertIn("memdiag_source_up", body)
        self.assertNotIn("WWW-Authenticate", head)
        # The network listener still asks for both.
        r = get(self.port, tls=client_context(CERTS))
        self.assertEqual(r.status, 401)

    def test_diagnose_socket_needs_no_credentials(self):
        out = self.diagnose("--config", self.config, "--socket", self.socket)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stderr, "")
        self.assertTrue(out.stdout.startswith("memdiag diagnosis, "), out.stdout)
        self.assertIn("NODE STALL: ", out.stdout)
        out = self.diagnose("--socket", self.socket, "--format", "json")  # no config naming the daemon at all
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout)["origin"], "daemon", out.stderr)

    def test_diagnose_uses_the_socket_its_config_names_by_default(self):
        out = self.diagnose("--config", self.config, "--format", "json")
        self.assertEqual(out.returncode, 0, out.stderr)
        # Over TCP it would have been refused (401) and sampled the node itself, saying so.
        self.assertEqual(out.stderr, "")
        self.assertEqual(json.loads(out.stdout)["origin"], "daemon")
        # --url still goes to the address given: TLS and basic auth, refused without credentials.
        out = self.diagnose("--config", self.config, "--format", "json", "--duration", "1s")
        self.assertEqual(json.loads(out.stdout)["origin"], "local")
        out = self.diagnose("--config", self.config, "--format", "json",
                            "--url", "https://127.0.0.1:%d/api/v1/diagnosis" % self.port)
        self.assertIn("answered 401", out.stderr)

    def test_another_user_is_refused_by_the_sockets_mode(self):
        self.assertEqual(as_nobody(self.socket), {"connect": "EACCES", "reply": ""})

    def test_another_user_is_refused_by_the_daemon_when_the_mode_is_loosened(self):
        self.addCleanup(os.chmod, self.socket, stat.S_IMODE(os.lstat(self.socket).st_mode))
        os.chmod(self.socket, 0o666)
        verdict = as_nobody(self.socket)
        # The connection is accepted by the kernel and closed by the daemon before it reads a byte.
        self.assertEqual(verdict["connect"], "ok")
        self.assertNotIn("HTTP/1.1", verdict["reply"])
        self.assertIn(verdict["reply"], ("", "<ECONNRESET>", "<EPIPE>"))
        wait_until(lambda: "refused a connection from uid 65534" in self.d.logs(), 10, "the refusal logged")
        # Root still is served through the loosened file.
        self.assertEqual(unix_get(self.socket)[0], "HTTP/1.1 200 OK")


def read(path):
    with open(path) as f:
        return f.read()


class UnixSocketLifetime(unittest.TestCase):
    """The socket file over the daemon's life: a stale one replaced at start, a file that is no
    socket left alone (the daemon serves on TCP only and says why), moved on SIGHUP, removed at
    exit."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="memdiag-sock-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.config = os.path.join(self.dir, "memdiagd.yaml")

    def start(self, socket_path):
        port = harness.free_port()
        harness.write(self.config, 'web:\n  listen_address: "127.0.0.1:%d"\n  unix_socket: %s\n' % (port, socket_path))
        d = Daemon("--config", self.config, port=port, listen_flag=False)
        self.addCleanup(d.close)
        d.wait_ready(need_sample=False)
        return d

    def test_stale_socket_replaced_moved_on_sighup_removed_at_exit(self):
        first = os.path.join(self.dir, "first.sock")
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(first)
        stale.close()  # the file stays, nobody listens: what a killed daemon leaves
        d = self.start(first)
        wait_until(lambda: "serving on unix:" + first in d.logs(), 10, "the socket served")
        self.assertEqual(unix_get(first)[0], "HTTP/1.1 200 OK")

        second = os.path.join(self.dir, "second.sock")
        harness.write(self.config, read(self.config).replace(first, second))
        d.signal(signal.SIGHUP)
        wait_until(lambda: "reloaded" in d.logs(), 10, "the reload")
        self.assertNotIn("except web.unix_socket", d.logs())
        self.assertEqual(unix_get(second)[0], "HTTP/1.1 200 OK")
        self.assertFalse(os.path.exists(first), "the old socket is removed")

        self.assertEqual(d.stop(), 0, d.logs())
        self.assertFalse(os.path.exists(second), "the socket outlived the daemon")

    def test_a_missing_directory_is_made_0700_as_runtime_directory_would(self):
        path = os.path.join(self.dir, "run-memdiag", "memdiagd.sock")
        d = self.start(path)
        wait_until(lambda: "serving on unix:" + path in d.logs(), 10, "the socket served")
        self.assertEqual(oct(os.stat(os.path.dirname(path)).st_mode & 0o7777), "0o700")
        self.assertEqual(unix_get(path)[0], "HTTP/1.1 200 OK")
        # Only the last component: a deeper missing path is refused, and TCP serves regardless.
        deeper = os.path.join(self.dir, "a", "b", "memdiagd.sock")
        other = self.start(deeper)
        wait_until(lambda: "cannot make its directory " + os.path.dirname(deeper) in other.logs(), 10,
                   "the refusal logged")
        self.assertFalse(os.path.exists(os.path.join(self.dir, "a")))
        self.assertEqual(harness.http_get(other.port, "/healthz")[0], 200)

    def test_a_file_that_is_not_a_socket_is_left_alone(self):
        path = os.path.join(self.dir, "not-a-socket")
        harness.write(path, "keep me\n")
        d = self.start(path)
        wait_until(lambda: "the file there is not a socket" in d.logs(), 10, "the refusal logged")
        self.assertEqual(read(path), "keep me\n")
        self.assertEqual(harness.http_get(d.port, "/healthz")[0], 200)  # TCP serves regardless

    def test_a_socket_another_daemon_serves_is_not_taken(self):
        path = os.path.join(self.dir, "shared.sock")
        first = self.start(path)
        wait_until(lambda: os.path.exists(path), 10, "the first daemon's socket")
        inode = os.lstat(path).st_ino
        second = self.start(path)
        wait_until(lambda: "another process is serving on it" in second.logs(), 10, "the second daemon's refusal")
        self.assertEqual(second.stop(), 0, second.logs())
        # The second daemon removed nothing that was not its own.
        self.assertEqual(os.lstat(path).st_ino, inode)
        self.assertEqual(unix_get(path)[0], "HTTP/1.1 200 OK")
        self.assertEqual(first.stop(), 0)


class CheckConfig(unittest.TestCase):
    def test_check_config_names_the_web_configs_file_line_key_and_reason(self):
        with tempfile.TemporaryDirectory() as d:
            web = os.path.join(d, "web.yml")
            harness.write(web, "tls_server_config:\n  cert_file: server.crt\n  client_auth_tpye: NoClientCert\n")
            main = os.path.join(d, "memdiagd.yaml")
            harness.write(main, "web:\n  config_file: web.yml\n")  # relative to memdiagd.yaml's directory
            p = harness.run("--check-config", "--config", main)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("%s:3: tls_server_config.client_auth_tpye: unknown key; did you mean 'client_auth_type'?" % web,
                          p.stderr)

            harness.write(web, "# TLS\ntls_server_config:\n  cert_file: missing.crt\n  key_file: missing.key\n")
            p = harness.run("--check-config", "--web.config.file", web)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("%s:3: tls_server_config.cert_file: cannot read %s/missing.crt: No such file or directory"
                          % (web, d), p.stderr)

            shutil.copy(os.path.join(CERTS, "server.crt"), d)
            shutil.copy(os.path.join(CERTS, "server.key"), d)
            harness.write(web, TLS_SECTION + users((USER, HASH)))
            p = harness.run("--check-config", "--config", main)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("%s: ok" % web, p.stdout)

    def test_the_daemon_refuses_to_start_on_a_bad_web_config(self):
        with tempfile.TemporaryDirectory() as d:
            web = os.path.join(d, "web.yml")
            harness.write(web, "basic_auth_users:\n  alice: plaintext-password\n")
            with Daemon("--web.config.file", web) as daemon:
                self.assertEqual(daemon.proc.wait(10), 2)
                self.assertIn("%s:2: basic_auth_users.alice: not a bcrypt hash" % web, daemon.logs())
            p = harness.run("--web.config.file", os.path.join(d, "absent.yml"), "--web.listen-address",
                            "127.0.0.1:%d" % harness.free_port())
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("absent.yml: cannot read the web config file: No such file or directory", p.stderr)


if __name__ == "__main__":
    unittest.main()
