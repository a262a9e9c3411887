# SPDX-License-Identifier: Apache-2.0
"""End to end: clients that hold connections without finishing a request must not keep
Prometheus out. Found from outside: with the server's 16 workers each parked on a connection
that had sent half a request, 17 such connections made 3 of 20 scrapes fail and ~240 made all
of them fail. The daemon's HTTP server reads request heads without tying anything but a
descriptor to a socket, closes a connection whose head is not complete within its deadline,
and at its connection cap drops the oldest connection without a complete request rather than
refusing the new one."""
import collections
import http.client
import resource
import socket
import threading
import time
import unittest

from harness import Daemon

# Half a request, as a slow or hostile client leaves it: the request line and a header, but
# not the blank line that ends the head.
HALF_REQUEST = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
SCRAPES = 20
SCRAPE_TIMEOUT = 5  # seconds, per scrape: generous for a render that takes well under 10 ms
# The daemon's limits (daemon/http/server_limits.hpp), as docs/operations.md states them.
HEADER_DEADLINE = 10
MAX_CONNECTIONS = 512


def raise_own_descriptor_limit(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))


class HeldConnections:
    """`count` connections to the daemon, each having sent `first_bytes` and nothing more,
    held open until the block ends. A server that stops accepting leaves the rest unopened
    (`refused` counts them): the scrapes then show what that does to Prometheus."""

    def __init__(self, port, count, first_bytes=HALF_REQUEST, receive_buffer=None):
        self.sockets = []
        self.refused = 0
        for _ in range(count):
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                if receive_buffer:  # before connecting: it sets the window the daemon sees
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
                s.settimeout(1)
                s.connect(("127.0.0.1", port))
                s.sendall(first_bytes)
                self.sockets.append(s)
            except OSError:
                self.refused += 1
                if self.refused >= 3:
                    break

    def closed_by_server(self, s):
        """True when the daemon has closed `s` (EOF or reset), False while it is still open."""
        s.setblocking(False)
        try:
            return s.recv(4096) == b""
        except BlockingIOError:
            return False
        except ConnectionResetError:
            return True
        finally:
            s.setblocking(True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for s in self.sockets:
            s.close()


def scrape(port):
    """(status, body) of one GET /metrics on a fresh connection, or the exception it raised."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=SCRAPE_TIMEOUT)
        try:
            conn.request("GET", "/metrics")
            resp = conn.getresponse()
            return resp.status, resp.read().decode()
        finally:
            conn.close()
    except OSError as e:
        return None, repr(e)


class IdleAndSlowClients(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise_own_descriptor_limit(4096)

    def assert_scrapes_succeed(self, port):
        failures = []
        for i in range(SCRAPES):
            start = time.monotonic()
            status, body = scrape(port)
            took = time.monotonic() - start
            if status != 200 or "memdiag_source_up" not in body:
                failures.append("scrape %d: %s %s after %.1fs" % (i, status, body[:120], took))
        self.assertEqual(failures, [], "%d of %d scrapes failed" % (len(failures), SCRAPES))

    def test_500_half_open_connections_do_not_keep_scrapes_out(self):
        with Daemon() as d:
            d.wait_ready()
            with HeldConnections(d.port, 500):
                self.assert_scrapes_succeed(d.port)
            self.assertIsNone(d.proc.poll(), d.logs())

    def test_more_half_open_connections_than_the_cap_drop_the_oldest_not_the_scraper(self):
        with Daemon() as d:
            d.wait_ready()
            with HeldConnections(d.port, MAX_CONNECTIONS + 100) as held:
                self.assert_scrapes_succeed(d.port)
                self.assertEqual((held.refused, len(held.sockets)), (0, MAX_CONNECTIONS + 100))
                # The first ones opened made room for the later ones and the scrapes; the last
                # ones opened are still being waited for.
                self.assertTrue(all(held.closed_by_server(s) for s in held.sockets[:50]))
                self.assertFalse(any(held.closed_by_server(s) for s in held.sockets[-50:]))

    def test_clients_that_ask_and_never_read_do_not_keep_scrapes_out(self):
        """More connections than the cap, each asking for /metrics and never reading the answer
        (with a tiny receive window). The kernel takes up to ~256 KiB of each response (the
        daemon's SO_SNDBUF): one it takes whole leaves an idle kept-alive connection, one it
        does not a stalled response, and the cap drops both (stalled responses last, as the
        unit tests ConnectionEviction check; what such clients hold: HttpServer.*)."""
        with Daemon() as d:
            d.wait_ready()
            with HeldConnections(d.port, MAX_CONNECTIONS + 20, b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n",
                                 receive_buffer=4096) as held:
                self.assertEqual(held.refused, 0)
                self.assert_scrapes_succeed(d.port)
            self.assertIsNone(d.proc.poll(), d.logs())

    def test_kept_alive_idlers_at_the_cap_and_a_flood_of_connections_do_not_keep_scrapes_out(self):
        """The cap's worth of kept-alive connections, each idle after one GET /healthz, and a
        thread opening new connections (sending nothing) as fast as it can: every scrape still
        gets in. Each scrape's request is read as soon as it is accepted, and at the cap the
        connection that has waited longest goes, the idlers first; ranking "no request yet"
        below "idle" dropped each scrape for the next flood connection before it was read."""
        with Daemon() as d:
            d.wait_ready()
            idlers = []
            try:
                for _ in range(MAX_CONNECTIONS):
                    s = socket.create_connection(("127.0.0.1", d.port), timeout=SCRAPE_TIMEOUT)
                    idlers.append(s)
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
                    answer = b""
                    while not answer.endswith(b"ok\n"):
                        chunk = s.recv(4096)
                        self.assertTrue(chunk, "closed before answering: %r" % answer)
                        answer += chunk
                stop = threading.Event()
                opened = [0]

                def flood():
                    held = collections.deque()
                    while not stop.is_set():
                        try:
                            held.append(socket.create_connection(("127.0.0.1", d.port), timeout=1))
                            opened[0] += 1
                        except OSError:
                            pass
                        while len(held) > MAX_CONNECTIONS + 200:
                            held.popleft().close()
                    for s in held:
                        s.close()

                flooder = threading.Thread(target=flood)
                flooder.start()
                try:
                    time.sleep(0.5)  # the flood has pushed past the cap
                    self.assertGreater(opened[0], 0)
                    self.assert_scrapes_succeed(d.port)
                finally:
                    stop.set()
                    flooder.join()
                self.assertGreater(opened[0], MAX_CONNECTIONS, "the flood never reached the cap")
            finally:
                for s in idlers:
                    s.close()
            self.assertIsNone(d.proc.poll(), d.logs())

    def test_a_request_head_not_finished_in_time_is_closed(self):
        with Daemon() as d:
            d.wait_ready()
            with HeldConnections(d.port, 3) as held:
                # One byte more now and then does not extend the deadline (a slow-loris client).
                deadline = time.monotonic() + HEADER_DEADLINE + 5
                while time.monotonic() < deadline and not held.closed_by_server(held.sockets[0]):
                    try:
                        held.sockets[0].send(b"X")
                    except OSError:
                        break
                    time.sleep(0.5)
                closed_after = HEADER_DEADLINE + 5 - (deadline - time.monotonic())
                self.assertTrue(all(held.closed_by_server(s) for s in held.sockets),
                                "still open %.1fs after the first bytes" % closed_after)
                self.assertGreater(closed_after, HEADER_DEADLINE - 1)

    def test_keep_alive_serves_several_scrapes_on_one_connection(self):
        with Daemon() as d:
            d.wait_ready()
            conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=SCRAPE_TIMEOUT)
            try:
                sockets = set()
                for path in ("/metrics", "/healthz", "/metrics", "/no-such-page"):
                    conn.request("GET", path)
                    resp = conn.getresponse()
                    resp.read()
                    self.assertIn(resp.status, (200, 404))
                    self.assertIsNotNone(conn.sock, "the daemon closed a kept-alive connection")
                    sockets.add(id(conn.sock))
                self.assertEqual(len(sockets), 1)
            finally:
                conn.close()

    def test_pipelined_requests_are_answered_in_order(self):
        with Daemon() as d:
            d.wait_ready()
            with socket.create_connection(("127.0.0.1", d.port), timeout=SCRAPE_TIMEOUT) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n"
                          b"Connection: close\r\n\r\n")
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            self.assertTrue(data.startswith(b"HTTP/1.1 200 OK\r\n"), data[:200])
            self.assertEqual(data.count(b"HTTP/1.1 200 OK\r\n"), 2, data)
            self.assertLess(data.index(b"ok\n"), data.index(b"<html>"))

    def test_oversized_and_malformed_heads_are_refused_and_closed(self):
        with Daemon() as d:
            d.wait_ready()
            cases = [
                (b"GET /metrics HTTP/1.1\r\nHost: a\r\nX-Padding: " + b"a" * 65536 + b"\r\n\r\n", b" 431 "),
                (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64 + b"\r\n\r\n", b" 400 "),
                (b"GET /metrics HTTP/2.0\r\n\r\n", b" 505 "),
                (b"POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc", b" 405 "),
            ]
            for request, status in cases:
                with socket.create_connection(("127.0.0.1", d.port), timeout=SCRAPE_TIMEOUT) as s:
                    try:
                        s.sendall(request)
                    except OSError:
                        pass  # the daemon may close before it has read everything we sent
                    data = b""
                    try:
                        while True:
                            chunk = s.recv(65536)
                            if not chunk:
                                break
                            data += chunk
                    except ConnectionResetError:
                        pass
                self.assertIn(status, data.split(b"\r\n", 1)[0], (request[:40], data[:200]))
            self.assertEqual(scrape(d.port)[0], 200)


if __name__ == "__main__":
    unittest.main()
