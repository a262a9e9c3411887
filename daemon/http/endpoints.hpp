// SPDX-License-Identifier: Apache-2.0
// What the daemon answers, by path: /metrics (the text exposition), /healthz (200 while the
// sampler keeps sampling, 503 when it is stuck), /api/v1/diagnosis (the diagnosis report, JSON
// or ?format=text; 400 for a bad query, 503 before the first sample), /api/v1/history (the key
// signals over the snapshot ring, JSON), / (the status page, status_page.hpp), 404 elsewhere;
// GET and HEAD only. Separate from the connection handling so that auth (or anything else per
// request) can sit in front of it without touching the event loop.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "daemon/http/diagnosis_query.hpp"
#include "daemon/http/request_head.hpp"
#include "daemon/http/response.hpp"

namespace memdiag::http {

struct Handlers {
  // The text exposition of the latest snapshot. Shared and immutable: rendered once per
  // snapshot (SnapshotCollector::shared_text), and every connection sending it holds the
  // same buffer. Never null.
  std::function<std::shared_ptr<const std::string>()> metrics;
  std::function<bool()> healthy;  // sampler alive?
  // The diagnosis report of the latest snapshot (exporters/report), JSON or text; null before
  // the first sample. Unset: /api/v1/diagnosis is not served.
  std::function<std::shared_ptr<const std::string>(const DiagnosisQuery&)> diagnosis;
  // The key signals of the snapshots in the ring (exporters/report/history_json.hpp), never
  // null. Unset: /api/v1/history is not served.
  std::function<std::shared_ptr<const std::string>()> history = {};
  // The same exposition gzipped, for scrapers that accept it (gzip_cache.hpp); null when
  // it cannot be made. Unset: /metrics is sent as it is to everyone.
  std::function<std::shared_ptr<const std::string>()> metrics_gzip = {};
};

// The response to one parsed request.
WireResponse respond(const RequestHead& request, const Handlers& handlers);

// The response to a head that was refused (400, 431, 505): closes the connection, since what
// follows the refused bytes cannot be trusted to start a request.
WireResponse refuse(const HeadError& error);

}  // namespace memdiag::http
