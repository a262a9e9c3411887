# SPDX-License-Identifier: Apache-2.0
"""SIGHUP and web.listen_address, from outside (docs/operations.md: "A new web.listen_address is bound before
the old one is let go"): while the daemon moves, a client trying both addresses always finds one
of them listening; afterwards the new one serves and the old port is free again; an address
that cannot be bound leaves the old one serving and the log says why."""
import errno
import os
import shutil
import signal
import socket
import tempfile
import threading
import unittest

from harness import Daemon, free_port, http_get, wait_for

SOURCES = """sampler: {interval: 200ms}
sources:
  reclaim_stall: {enabled: false}
  processes: {enabled: false}
  canary: {enabled: false}
"""


def listening(port):
    """False only if nothing is bound and listening on 127.0.0.1:port: the kernel then answers
    the SYN with a reset (ECONNREFUSED) at once. A connection accepted, or a SYN left unanswered
    because the listener's backlog is full (this test's own connections can fill it), is a
    listening socket."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        try:
            s.connect(("127.0.0.1", port))
        except ConnectionRefusedError:
            return False
        except (socket.timeout, ConnectionResetError):
            # reset: the listener was closed with this connection still in its queue, i.e.
            # it was listening when the SYN came
            pass
        return True


def can_bind(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError as e:
            if e.errno != errno.EADDRINUSE:
                raise
            return False


class Watcher(threading.Thread):
    """Tries the old address, then at once the new one, over and over: if the old one was let
    go before the new one was bound, some round finds neither listening."""

    def __init__(self, old, new):
        super().__init__(daemon=True)
        self.old, self.new = old, new
        self.rounds = 0
        self.neither = 0
        self.failure = None
        self.stop = threading.Event()

    def run(self):
        try:
            while not self.stop.is_set():
                if not listening(self.old) and not listening(self.new):
                    self.neither += 1
                self.rounds += 1
        except OSError as e:  # anything but a plain answer: the test cannot tell, and says so
            self.failure = e


class ListenAddressReload(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memdiag-e2e-reload-")
        self.config = os.path.join(self.tmp, "memdiagd.yaml")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, port):
        with open(self.config, "w") as f:
            f.write('web: {listen_address: "127.0.0.1:%d"}\n' % port + SOURCES)

    def reload(self, d):
        """SIGHUP and wait for the daemon to say it is done (the n-th "reloaded" line)."""
        done = d.logs().count("SIGHUP: reloaded") + 1
        d.signal(signal.SIGHUP)
        self.assertTrue(wait_for(lambda: d.logs().count("SIGHUP: reloaded") >= done), d.logs())

    def test_the_new_address_is_bound_before_the_old_one_is_let_go(self):
        port = free_port()
        self.write(port)
        with Daemon("--config", self.config, port=port, listen_flag=False) as d:
            d.wait_ready()
            for move in range(10):
                new = free_port()
                self.write(new)
                watcher = Watcher(port, new)
                watcher.start()
                self.assertTrue(wait_for(lambda: watcher.rounds >= 20 or watcher.failure), watcher.failure)
                self.reload(d)
                rounds = watcher.rounds
                self.assertTrue(wait_for(lambda: watcher.rounds >= rounds + 20 or watcher.failure), watcher.failure)
                watcher.stop.set()
                watcher.join()
                self.assertIsNone(watcher.failure)
                self.assertEqual(watcher.neither, 0,
                                 "move %d, %d -> %d: neither address listened in %d of %d rounds"
                                 % (move, port, new, watcher.neither, watcher.rounds))
                # Afterwards the new one serves and the old port is free for anyone.
                self.assertEqual(http_get(new, "/healthz")[0], 200)
                self.assertFalse(listening(port))
                self.assertTrue(can_bind(port), "port %d still held after the move" % port)
                port = new
            self.assertEqual(d.proc.poll(), None)
            self.assertEqual(d.stop(), 0)

    def test_an_address_that_cannot_be_bound_keeps_the_old_one(self):
        port = free_port()
        self.write(port)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken, \
                Daemon("--config", self.config, port=port, listen_flag=False) as d:
            taken.bind(("127.0.0.1", 0))
            taken.listen(1)
            busy = taken.getsockname()[1]
            d.wait_ready()
            self.write(busy)
            watcher = Watcher(port, busy)  # `busy` listens too (ours): only the old one counts here
            watcher.new = port
            watcher.start()
            self.reload(d)
            watcher.stop.set()
            watcher.join()
            self.assertIsNone(watcher.failure)
            self.assertEqual(watcher.neither, 0, "the old address stopped listening during the reload")
            log = d.logs()
            said = [l for l in log.splitlines() if "keeping 127.0.0.1:%d" % port in l]
            self.assertEqual(len(said), 1, log)
            self.assertIn(str(busy), said[0])
            self.assertRegex(said[0].lower(), "in use|address already|cannot|bind", said[0])
            self.assertIn("SIGHUP: reloaded %s (except web.listen_address)" % self.config, log)
            status, body = http_get(port, "/metrics")
            self.assertEqual(status, 200)
            self.assertIn("memdiag_source_up", body)
            # The next reload to a free address moves it as usual.
            new = free_port()
            self.write(new)
            self.reload(d)
            self.assertEqual(http_get(new, "/healthz")[0], 200)
            self.assertFalse(listening(port))
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
