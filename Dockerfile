# SPDX-License-Identifier: Apache-2.0
# The image the DaemonSet runs (deploy/kubernetes/memdiagd.yaml: memdiag/memdiagd:VERSION):
# Debian bookworm-slim with the .deb of this checkout installed, so its libraries are Debian's
# and the binary is the one the .deb ships. Build the .deb first, then the image:
#   cmake -S . -B build -G Ninja && cmake --build build && (cd build && cpack -G DEB)
#   docker build --build-arg DEB=build/memdiag_0.1.0_amd64.deb -t memdiag/memdiagd:0.1.0 .
# tests/e2e/test_container_image.py builds the same root file system from Debian's packages
# with mmdebstrap (no registry) and runs the daemon from it, scraped.
FROM debian:bookworm-slim
ARG DEB
COPY ${DEB} /tmp/memdiag.deb
RUN apt-get update \
 && apt-get install -y --no-install-recommends /tmp/memdiag.deb \
 && rm -rf /var/lib/apt/lists/* /tmp/memdiag.deb
EXPOSE 9842
# The DaemonSet mounts its ConfigMap over /etc/memdiag and the host's /proc and /sys under /host.
ENTRYPOINT ["/usr/bin/memdiagd"]
CMD ["--config", "/etc/memdiag/memdiagd.yaml"]
