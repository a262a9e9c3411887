# SPDX-License-Identifier: Apache-2.0
"""A parallel compile in a limited cgroup: busy CPUs, a few hundred MiB, no memory shortage."""
from expect import calm, no_step

FINDING = "benign"
WHAT = "/cc (1G limit) compiles 6 generated C files with gcc -O2, two at a time, in a loop"
EXPECTED = "node and /cc none/low, no roles, no step to stop anything"
MiB = 1 << 20
TOOLS = ("gcc",)


def prepare(lab):
    lab.cgroup("/cc", 1024 * MiB)
    for i in range(6):
        with open(lab.path("unit%d.c" % i), "w") as f:
            for k in range(300):
                f.write("int f%d(int x){int s=0;for(int i=0;i<x;i++){s+=i*%d^(s>>3);if(s%%7==%d)s-=x;}return s;}\n"
                        % (k, k + i, k % 7))


PHASES = [("settle", 3, lambda lab: lab.start("cc", lab.cg("/cc"), wait_ready=False,
                                             shell="cd %s && while :; do ls unit*.c | xargs -P2 -n1 gcc -O2 -c "
                                                   "-o /dev/null; done" % lab.tmp)),
          ("observe", 12, None)]

EXPECT = calm("node") + calm("/cc") + [no_step(r"Stop or limit")]
