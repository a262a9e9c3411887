// SPDX-License-Identifier: Apache-2.0
// The status page at / ("a page for people"): one constant HTML document, with its
// style and script inline and no other asset, so it works offline and behind any proxy. Its
// script fetches /api/v1/diagnosis and /api/v1/history every 5 s and draws the verdicts and
// their reasons, contributors and victims, the overcommit picture, the promise holders and
// small charts of the ring's last minutes. Everything from the daemon goes into the page as
// text nodes and attribute values (cgroup paths and comm names are chosen by whoever runs a
// workload), never as markup. Served with a Content-Security-Policy that lets only this
// script and this style run, by their hashes.
#pragma once

#include <memory>
#include <string>

namespace memdiag::http {

struct StatusPage {
  std::shared_ptr<const std::string> document;  // text/html; charset=utf-8
  std::string content_security_policy;
};

// Built once (the hashes of its script and style computed then), shared by every response.
const StatusPage& status_page();

}  // namespace memdiag::http
