// SPDX-License-Identifier: Apache-2.0
#include "daemon/http/endpoints.hpp"

#include "daemon/http/content_coding.hpp"
#include "daemon/http/status_page.hpp"
#include "exporters/prometheus/exposition.hpp"

namespace memdiag::http {

WireResponse respond(const RequestHead& request, const Handlers& handlers) {
  // A request body is never read: answer, then close, so its bytes are not taken for the
  // next request.
  const bool close = !request.keep_alive || request.has_body;
  const bool head_only = request.method == "HEAD";
  if (request.method != "GET" && !head_only) {
    return text_response({.status = 405, .close = close, .allow = "GET, HEAD"}, "only GET and HEAD are served\n");
  }
  if (request.path == "/metrics") {
    // Compressed when the scraper takes gzip (Prometheus does), once per exposition.
    if (handlers.metrics_gzip && accepts_gzip(request)) {
      if (auto compressed = handlers.metrics_gzip()) {
        return shared_response({.content_type = prom::kExpositionContentType, .close = close, .gzip = true},
                               std::move(compressed), head_only);
      }
    }
    return shared_response(
        {.content_type = prom::kExpositionContentType, .close = close, .vary_accept_encoding = bool(handlers.metrics_gzip)},
        handlers.metrics(), head_only);
  }
  if (request.path == "/healthz") {
    if (handlers.healthy()) return text_response({.close = close}, "ok\n", head_only);
    return text_response({.status = 503, .close = close}, "sampler stuck: no sample completed recently\n", head_only);
  }
  if (request.path == "/api/v1/diagnosis" && handlers.diagnosis) {
    const std::size_t question = request.target.find('?');
    const auto query =
        parse_diagnosis_query(question == std::string_view::npos ? std::string_view{} : request.target.substr(question + 1));
    if (!query) return text_response({.status = 400, .close = close}, query.error().message + "\n", head_only);
    auto body = handlers.diagnosis(*query);
    if (!body) return text_response({.status = 503, .close = close}, "no sample yet\n", head_only);
    return shared_response({.content_type = query->text ? "text/plain; charset=utf-8" : "application/json", .close = close},
                           std::move(body), head_only);
  }
  if (request.path == "/api/v1/history" && handlers.history) {
    if (request.target.find('?') != std::string_view::npos) {
      return text_response({.status = 400, .close = close}, "/api/v1/history takes no parameters\n", head_only);
    }
    return shared_response({.content_type = "application/json", .close = close}, handlers.history(), head_only);
  }
  if (request.path == "/") {
    const StatusPage& page = status_page();
    return shared_response(
        {.content_type = "text/html; charset=utf-8", .close = close, .content_security_policy = page.content_security_policy},
        page.document, head_only);
  }
  return text_response({.status = 404, .close = close}, "not found\n", head_only);
}

WireResponse refuse(const HeadError& error) {
  return text_response({.status = error.status, .close = true}, error.message + "\n");
}

}  // namespace memdiag::http
