// SPDX-License-Identifier: Apache-2.0
// identify_cgroup on arbitrary paths: no crash, and every label it returns is well-formed and
// taken from the path (a label value invented from garbage would become a bogus series).
#include <string>
#include <string_view>

#include "probes/linux/cgroup/kubernetes_identity.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Whether `name` is one whole '/'-separated component of `path`.
bool is_component(std::string_view path, std::string_view name) {
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (path.substr(start, slash - start) == name) return true;
    start = slash + 1;
  }
  return false;
}

bool same(const memdiag::WorkloadIdentity& a, const memdiag::WorkloadIdentity& b) {
  return a.pod_uid == b.pod_uid && a.qos_class == b.qos_class && a.container_id == b.container_id &&
         a.unit == b.unit;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size) {
  const std::string_view path = memdiag::fuzz::as_text(data, size);
  const memdiag::WorkloadIdentity id = memdiag::identify_cgroup(path);

  const std::string& qos = id.qos_class;
  FUZZ_CHECK(qos.empty() || qos == "guaranteed" || qos == "burstable" || qos == "besteffort");
  if (!qos.empty()) FUZZ_CHECK(contains(path, "kubepods"));

  if (!id.pod_uid.empty()) {
    FUZZ_CHECK(!qos.empty());
    FUZZ_CHECK(id.pod_uid.size() <= 64);
    for (char c : id.pod_uid) FUZZ_CHECK(is_hex(c) || c == '-');
    std::string systemd_spelling = id.pod_uid;
    for (char& c : systemd_spelling) c = c == '-' ? '_' : c;
    FUZZ_CHECK(contains(path, "pod" + id.pod_uid) || contains(path, "pod" + systemd_spelling));
  }

  if (!id.container_id.empty()) {
    FUZZ_CHECK(!id.pod_uid.empty());
    FUZZ_CHECK(id.container_id.size() <= 128);
    for (char c : id.container_id) FUZZ_CHECK(is_alnum(c));
    FUZZ_CHECK(contains(path, id.container_id));
  }

  if (!id.unit.empty()) {
    FUZZ_CHECK(qos.empty() && id.pod_uid.empty());
    FUZZ_CHECK(is_component(path, id.unit));
    FUZZ_CHECK(id.unit.find('.') != std::string::npos);
  }

  // Where a hierarchy is rooted does not change who a cgroup belongs to: the same path one
  // plain directory deeper gives the same answer.
  FUZZ_CHECK(same(memdiag::identify_cgroup("/memdiag/" + std::string(path)), id));
  return 0;
}
