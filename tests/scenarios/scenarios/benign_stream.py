"""Page-cache streaming: a file larger than the cgroup's limit read over and over. Reclaim of
clean cache at the limit is the cgroup working as meant."""
from expect import calm, no_step

FINDING = "benign"
WHAT = "/stream (256M limit) cats a 600 MiB file in a loop"
EXPECTED = "node and /stream none/low, no roles, no step to stop anything"
MiB = 1 << 20


def prepare(lab):
    lab.cgroup("/stream", 256 * MiB)
    lab.data = lab.file("data600", 600)


PHASES = [("settle", 3, lambda lab: lab.start("cat", lab.cg("/stream"), wait_ready=False,
                                             shell="while :; do cat %s > /dev/null; done" % lab.data)),
          ("observe", 12, None)]

EXPECT = calm("node") + calm("/stream") + [no_step(r"Stop or limit")]
