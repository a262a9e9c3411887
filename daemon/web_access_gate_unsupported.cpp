// SPDX-License-Identifier: Apache-2.0
// make_access_gate where there is no OpenSSL (the Windows build): no gate. A web config never
// gets this far there (load_web_security refuses it).
#include "daemon/web_access_gate.hpp"

namespace memdiag {

std::shared_ptr<http::AccessGate> make_access_gate(std::shared_ptr<WebConfigWatcher>) { return nullptr; }

}  // namespace memdiag
