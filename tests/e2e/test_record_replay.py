# SPDX-License-Identifier: Apache-2.0
"""`memdiagd record` and `memdiagd diagnose --replay` from outside: a recording of
this node replays into the same report as the daemon gives (origin "replay", one snapshot per
sample, the recorder's host named); SIGINT ends a recording cleanly; a truncated recording is
refused with exit 2 unless --allow-truncated, which replays what precedes the cut; garbage, an
empty file and a missing one are refused with exit 2 and a clear message; bad arguments exit 2.
"""
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest

from harness import MEMDIAGD, die_with_parent

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interval-200ms.yaml")
MAGIC = b"MEMDIAG-RECORDING\n"


def memdiagd(*args, timeout=60):
    return subprocess.run([MEMDIAGD, *args], capture_output=True, text=True, timeout=timeout)


class RecordReplayTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="memdiag-record-")
        cls.recording = os.path.join(cls.tmp, "node.mdrec")
        out = memdiagd("record", "--config", CONFIG, "--output", cls.recording, "--duration", "2s")
        assert out.returncode == 0, out.stderr
        cls.record_stderr = out.stderr

    @classmethod
    def tearDownClass(cls):
        for name in os.listdir(cls.tmp):
            os.unlink(os.path.join(cls.tmp, name))
        os.rmdir(cls.tmp)

    def snapshots_recorded(self):
        # "memdiagd record: 11 snapshots over 2 s, 23456 bytes, in FILE (stopped by the duration)"
        return int(self.record_stderr.split("memdiagd record: ")[1].split()[0])

    def test_a_recording_replays_into_the_report(self):
        self.assertIn("stopped by the duration", self.record_stderr)
        recorded = self.snapshots_recorded()
        # 2 s at 200 ms: at most 11 samples, fewer when one is slow (the first loads eBPF; the
        # ASan build is slower throughout).
        self.assertGreaterEqual(recorded, 3)
        self.assertLessEqual(recorded, 11)
        with open(self.recording, "rb") as f:
            self.assertEqual(f.read(len(MAGIC)), MAGIC)

        out = memdiagd("diagnose", "--replay", self.recording, "--format", "json")
        self.assertEqual(out.returncode, 0, out.stderr)
        report = json.loads(out.stdout)
        self.assertEqual(report["schema"], "memdiag.diagnosis/v1")
        self.assertEqual(report["origin"], "replay")
        self.assertEqual(report["sequence"], recorded)  # the last snapshot, as the recorder numbered it
        self.assertIn(report["stall"]["level"]["name"], ["none", "low", "medium", "high", "critical"])
        self.assertIn("meminfo", report["stall"]["signals"])
        self.assertGreater(report["stall"]["available_bytes"], 0)
        self.assertTrue(report["overcommit"]["mode_known"])
        self.assertIn("replayed %d snapshots of %s" % (recorded, socket.gethostname()), out.stderr)
        self.assertIn("every 0.2 s", out.stderr)

        text = memdiagd("diagnose", "--replay", self.recording)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("(replay)", text.stdout.splitlines()[0])
        self.assertIn("NODE STALL: ", text.stdout)
        self.assertTrue(all(len(line) <= 80 for line in text.stdout.splitlines()), text.stdout)

    def test_sigint_ends_a_recording_cleanly(self):
        path = os.path.join(self.tmp, "interrupted.mdrec")
        proc = subprocess.Popen([MEMDIAGD, "record", "--config", CONFIG, "--output", path, "--duration", "1m"],
                                stderr=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
        # Until it has written 3 snapshots (a sanitized recorder on a busy machine takes seconds
        # to load eBPF first: a fixed 2 s once saw 1): what is on disk meanwhile is a truncated
        # recording, readable up to its last whole frame.
        def recorded():
            part = memdiagd("diagnose", "--replay", path, "--allow-truncated", "--format", "json")
            return part.returncode == 0 and json.loads(part.stdout)["sequence"] >= 3
        deadline = time.monotonic() + 60
        while not recorded():
            self.assertIsNone(proc.poll(), "the recorder ended early")
            self.assertLess(time.monotonic(), deadline, "no 3 snapshots recorded in 60 s")
            time.sleep(0.2)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        self.assertLess(time.monotonic() - started, 5, "SIGINT did not end the recording promptly")
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn("stopped by a signal", err)
        out = memdiagd("diagnose", "--replay", path, "--format", "json")
        self.assertEqual(out.returncode, 0, out.stderr)  # the end mark was written
        self.assertGreaterEqual(json.loads(out.stdout)["sequence"], 3)

    def test_a_truncated_recording_is_refused_unless_allowed(self):
        with open(self.recording, "rb") as f:
            whole = f.read()
        cut = os.path.join(self.tmp, "cut.mdrec")
        with open(cut, "wb") as f:
            f.write(whole[: len(whole) * 2 // 3])
        out = memdiagd("diagnose", "--replay", cut)
        self.assertEqual(out.returncode, 2)
        self.assertEqual(out.stdout, "")
        self.assertIn("truncated", out.stderr)
        self.assertIn("complete snapshots", out.stderr)
        self.assertIn("--allow-truncated", out.stderr)

        partial = memdiagd("diagnose", "--replay", cut, "--allow-truncated", "--format", "json")
        self.assertEqual(partial.returncode, 0, partial.stderr)
        self.assertIn("up to where it was cut", partial.stderr)
        sequence = json.loads(partial.stdout)["sequence"]
        self.assertGreaterEqual(sequence, 1)
        self.assertLess(sequence, self.snapshots_recorded())

    def test_garbage_empty_and_missing_files_are_refused(self):
        garbage = os.path.join(self.tmp, "garbage.mdrec")
        with open(garbage, "wb") as f:
            f.write(os.urandom(4096))
        empty = os.path.join(self.tmp, "empty.mdrec")
        open(empty, "wb").close()
        damaged = os.path.join(self.tmp, "damaged.mdrec")
        with open(self.recording, "rb") as f:
            whole = bytearray(f.read())
        whole[len(MAGIC) + 1] = ord("X")  # the header frame's kind
        with open(damaged, "wb") as f:
            f.write(whole)
        for path, says in ((garbage, "not a memdiag recording"), (empty, "truncated"),
                           (damaged, "unknown frame kind"), (os.path.join(self.tmp, "absent.mdrec"), "cannot read")):
            out = memdiagd("diagnose", "--replay", path)
            self.assertEqual(out.returncode, 2, (path, out.stderr))
            self.assertEqual(out.stdout, "")
            self.assertIn(says, out.stderr)

    def test_bad_arguments_exit_2(self):
        for args, says in ((["record", "--duration", "1s"], "--output FILE is required"),
                           (["record", "--output", "x", "--duration", "0s"], "--duration must be above 0"),
                           (["record", "--output", "x", "--max-size", "lots"], "--max-size must be"),
                           (["record", "--outptu", "x"], "did you mean '--output'"),
                           (["diagnose", "--replay", "x", "--duration", "1s"], "do not go with it"),
                           (["diagnose", "--allow-truncated"], "goes with --replay")):
            out = memdiagd(*args)
            self.assertEqual(out.returncode, 2, (args, out.stderr))
            self.assertIn(says, out.stderr)


if __name__ == "__main__":
    unittest.main()
