// SPDX-License-Identifier: Apache-2.0
#include "daemon/daemon.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "daemon/build_info.hpp"
#include "daemon/http_server.hpp"
#include "daemon/local_http_server.hpp"
#ifndef _WIN32
#include "daemon/http/gzip_cache.hpp"
#endif
#include "daemon/logging.hpp"
#include "daemon/sampler.hpp"
#include "daemon/web_config_watcher.hpp"
#include "exporters/prometheus/snapshot_collector.hpp"
#include "exporters/report/diagnosis_report.hpp"
#include "exporters/report/history_json.hpp"
#include "probes/catalog/source_catalog.hpp"

namespace memdiag {
namespace {

prom::BuildInfo build_info() { return {build::kVersion, build::kRevision, build::kCompiler}; }

// ":9842" and "0.0.0.0:9842" are the same listener.
std::string normalized_address(const std::string& address) {
  return !address.empty() && address.front() == ':' ? "0.0.0.0" + address : address;
}

std::string_view port_of(const std::string& address) {
  return std::string_view(address).substr(address.rfind(':') + 1);
}

// Moves the HTTP listener on a reload; returns whatever serves afterwards (the old one if the
// new address cannot be bound). A different port is bound before the old one is released; the
// same port on another host must be released first, and is taken back if the new bind fails.
std::unique_ptr<HttpServer> move_listener(std::unique_ptr<HttpServer> current, const std::string& next_address,
                                          const HttpServer::Handlers& handlers,
                                          const std::shared_ptr<WebConfigWatcher>& web, const std::string& why) {
  const std::string old_address = current->listen_address();
  if (normalized_address(next_address) == normalized_address(old_address)) return current;
  const bool same_port = port_of(next_address) == port_of(old_address);
  if (same_port) current.reset();
  auto moved = HttpServer::start(next_address, handlers, web);
  if (moved) {
    spdlog::info("now serving on http://{}/metrics", next_address);
    return std::move(moved).value();
  }
  spdlog::error("{}: keeping {}: {}", why, old_address, moved.error().message);
  if (!same_port) return current;
  auto back = HttpServer::start(old_address, handlers, web);
  if (back) return std::move(back).value();
  spdlog::critical("cannot listen on {} again either: {}; serving nothing until the next reload", old_address,
                   back.error().message);
  return nullptr;
}

// The Unix socket of web.unix_socket, started at `path` ("": none). Its failure is logged, not
// fatal: the network listener is what the daemon is for, and diagnose falls back to it.
std::unique_ptr<LocalHttpServer> start_local(const std::string& path, const HttpServer::Handlers& handlers,
                                             const std::string& why) {
  if (path.empty()) return nullptr;
  auto local = LocalHttpServer::start(path, handlers);
  if (!local) {
    spdlog::error("{}: {}; serving on the network listener only", why, local.error().message);
    return nullptr;
  }
  spdlog::info("serving on unix:{} (root only, no TLS or basic auth)", path);
  return std::move(local).value();
}

// Follows web.unix_socket on a reload: a new path is bound before the old socket is removed, and
// the old one is kept if the new one cannot be made; the same path keeps its socket.
std::unique_ptr<LocalHttpServer> move_local(std::unique_ptr<LocalHttpServer> current, const std::string& next_path,
                                            const HttpServer::Handlers& handlers, const std::string& why) {
  if (current && current->path() == next_path) return current;
  if (next_path.empty()) {
    if (current) spdlog::info("{}: no longer serving on unix:{}", why, current->path());
    return nullptr;
  }
  auto moved = LocalHttpServer::start(next_path, handlers);
  if (!moved) {
    spdlog::error("{}: {}{}", why, moved.error().message, current ? "; keeping unix:" + current->path() : "");
    return current;
  }
  spdlog::info("now serving on unix:{} (root only, no TLS or basic auth)", next_path);
  return std::move(moved).value();
}

}  // namespace

namespace {

// The source's section of a config; nullptr when the config has none (not loaded through
// parse_config or default_config): such a source does not run.
const SourceConfig* section_of(const Config& config, std::string_view name) {
  auto it = config.sources.find(name);
  return it == config.sources.end() ? nullptr : &it->second;
}

}  // namespace

std::vector<std::unique_ptr<Source>> build_sources(const Config& config) {
  std::vector<std::unique_ptr<Source>> sources;
  for (const SourceRegistration& r : source_catalog()) {
    const SourceConfig* source = section_of(config, r.name);
    if (source != nullptr && source->enabled) sources.push_back(r.make(SourceContext{config.paths}, source->options));
  }
  return sources;
}

std::vector<Sampler::SourcePlan> plan_sources(const Config& running, const Config& next) {
  std::vector<Sampler::SourcePlan> plan;
  for (const SourceRegistration& r : source_catalog()) {
    const SourceConfig* was = section_of(running, r.name);
    const SourceConfig* will = section_of(next, r.name);
    if (will == nullptr || !will->enabled) continue;
    Sampler::SourcePlan p;
    p.source = r.make(SourceContext{next.paths}, will->options);
    p.keep_running = was != nullptr && was->enabled && running.paths == next.paths &&
                     r.same_options(was->options, will->options) && !r.rebuild_on_reload;
    plan.push_back(std::move(p));
  }
  return plan;
}

std::shared_ptr<const std::string> diagnosis_report(const SnapshotStore& store, const http::DiagnosisQuery& query) {
  const SnapshotPtr latest = store.latest();
  if (!latest) return nullptr;
  const report::ReportOptions options{.since = query.since, .origin = "daemon"};
  return std::make_shared<const std::string>(query.text ? report::render_diagnosis_text(*latest, options)
                                                        : report::render_diagnosis_json(*latest, options));
}

namespace {

// The key signals over the ring, for /api/v1/history and the status page's charts.
std::shared_ptr<const std::string> history_report(const SnapshotStore& store) {
  return std::make_shared<const std::string>(report::render_history_json(store.recent()));
}

}  // namespace

int run_once(const Config& config) {
  SnapshotStore store(1);
  Sampler sampler(store, build_sources(config), config.interval, config.diagnosis);
  sampler.sample_now();
  prom::SnapshotCollector collector(store, build_info());
  std::string body;
  collector.render_text(body);
  std::fwrite(body.data(), 1, body.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

int serve(const CliOptions& options, Config config, const NextControlEvent& next_event, const ServeHooks& hooks) {
  SnapshotStore store(config.ring);
  Sampler sampler(store, build_sources(config), config.interval, config.diagnosis);
  prom::SnapshotCollector collector(store, build_info());
  HttpServer::Handlers handlers{[&collector] { return collector.shared_text(); },
                               [&sampler] { return sampler.healthy(); },
                               [&store](const http::DiagnosisQuery& query) { return diagnosis_report(store, query); },
                               [&store] { return history_report(store); }};
#ifndef _WIN32
  // Scrapers that take gzip get the exposition compressed, once per snapshot (zlib: Linux).
  handlers.metrics_gzip = [&collector, gzipped = std::make_shared<http::GzipCache>()] {
    return gzipped->of(collector.shared_text());
  };
#endif

  // The web config in force, re-read when its files change and retargeted on reload. Checked
  // already at start (startup.cpp); loaded again here, so only a file changed in between fails.
  std::shared_ptr<WebConfigWatcher> web;
  std::shared_ptr<const WebSecurity> web_security;
  if (!config.web_config_file.empty()) {
    auto loaded = load_web_security(config.web_config_file);
    if (!loaded) {
      const std::string why = "invalid web config: " + loaded.error().to_string();
      if (hooks.on_fatal) {
        hooks.on_fatal(why);
      } else {
        std::fprintf(stderr, "memdiagd: %s\n", why.c_str());
      }
      return 2;
    }
    web_security = std::move(loaded).value();
  }
  if (web_security_supported()) web = std::make_shared<WebConfigWatcher>(config.web_config_file, web_security);

  auto http = HttpServer::start(config.listen_address, handlers, web);
  if (!http) {
    if (hooks.on_fatal) {
      hooks.on_fatal(http.error().message);
    } else {
      std::fprintf(stderr, "memdiagd: %s\n", http.error().message.c_str());
    }
    return 1;
  }
  std::unique_ptr<HttpServer> server = std::move(http).value();
  std::unique_ptr<LocalHttpServer> local = start_local(config.unix_socket, handlers, "web.unix_socket");
  if (hooks.posture_after_sample) {
    sampler.set_before_publish([&hooks, &collector](const Snapshot& snapshot) {
      collector.set_posture(hooks.posture_after_sample(snapshot));
    });
  }
  if (hooks.on_sample) sampler.set_on_sample(hooks.on_sample);
  sampler.start();
  spdlog::info("memdiagd {} serving on {}://{}/metrics{}, sampling every {}ms", build::kVersion,
               web_security && web_security->tls ? "https" : "http", config.listen_address,
               web_security && !web_security->config.users.empty() ? " (basic auth)" : "", config.interval.count());
  if (hooks.on_serving) hooks.on_serving();

  // Re-reads --config and applies what it says; the running config stays when the new one is
  // refused.
  const auto reload = [&](const ControlEvent& event) {
    if (!options.config_path) {
      spdlog::info("{}: no --config file to reload", event.what);
      return;
    }
    auto reloaded = resolve_config(options);
    if (!reloaded) {
      spdlog::error("{}: keeping the running config; new one is invalid: {}", event.what, reloaded.error().to_string());
      return;
    }
    Config next = std::move(reloaded).value();
    // The web config it names is part of it: a broken one keeps the whole running config.
    std::shared_ptr<const WebSecurity> next_web;
    if (!next.web_config_file.empty()) {
      auto loaded = load_web_security(next.web_config_file);
      if (!loaded) {
        spdlog::error("{}: keeping the running config; its web config is invalid: {}", event.what,
                      loaded.error().to_string());
        return;
      }
      next_web = std::move(loaded).value();
    }
    if (web) web->retarget(next.web_config_file, std::move(next_web));
    const std::string wanted_address = next.listen_address;
    if (!server) {  // an earlier move lost the listener: try the address we are asked for
      auto fresh = HttpServer::start(wanted_address, handlers, web);
      if (fresh) server = std::move(fresh).value();
    } else {
      server = move_listener(std::move(server), wanted_address, handlers, web, event.what);
    }
    next.listen_address = server ? server->listen_address() : wanted_address;
    const std::string wanted_socket = next.unix_socket;
    local = move_local(std::move(local), wanted_socket, handlers, event.what);
    next.unix_socket = local ? local->path() : "";
    set_log_level(next.log_level);
    store.set_ring_capacity(next.ring);
    sampler.reconfigure(plan_sources(config, next), next.interval);
    sampler.set_diagnosis(next.diagnosis);
    config = std::move(next);
    const bool address_taken = server && server->listen_address() == wanted_address;
    const bool socket_taken = config.unix_socket == wanted_socket;
    spdlog::info("{}: reloaded {}{}{}", event.what, config.file, address_taken ? "" : " (except web.listen_address)",
                 socket_taken ? "" : " (except web.unix_socket)");
  };

  for (;;) {
    const ControlEvent event = next_event();
    if (event.kind == ControlEvent::Kind::kStop) {
      spdlog::info("received {}, stopping", event.what);
      if (hooks.on_stopping) hooks.on_stopping();
      break;
    }
    if (hooks.on_reloading) hooks.on_reloading();
    reload(event);
    if (hooks.on_reloaded) hooks.on_reloaded();
  }

  server.reset();  // stop answering before the snapshot store goes away
  local.reset();   // and remove the socket file
  if (!sampler.stop(std::chrono::milliseconds(3000))) {
    // The sampler thread is blocked in a kernel read and would use this stack frame's objects
    // if it ever returned: leave without unwinding, and say with the exit code it was forced.
    spdlog::warn("sampler did not stop within 3s (stuck in a read); exiting anyway");
    spdlog::default_logger()->flush();
    if (hooks.on_forced_exit) hooks.on_forced_exit();
    std::fflush(nullptr);
    std::_Exit(1);
  }
  spdlog::info("stopped");
  return 0;
}

}  // namespace memdiag
