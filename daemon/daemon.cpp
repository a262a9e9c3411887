#include "daemon/daemon.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "daemon/build_info.hpp"
#include "daemon/http_server.hpp"
#include "daemon/logging.hpp"
#include "daemon/sampler.hpp"
#include "exporters/prometheus/snapshot_collector.hpp"

namespace memdiag {
namespace {

prom::BuildInfo build_info() { return {build::kVersion, build::kRevision, build::kCompiler}; }

sigset_t daemon_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

std::vector<std::unique_ptr<Source>> build_sources(const Config& config) {
  std::vector<std::unique_ptr<Source>> sources;
  for (std::string_view name : linux_source_names()) {
    if (config.source_enabled(name)) {
      sources.push_back(make_linux_source(name, config.paths, config.source_options(name)));
    }
  }
  return sources;
}

int run_once(const Config& config) {
  SnapshotStore store(1);
  Sampler sampler(store, build_sources(config), config.interval);
  sampler.sample_now();
  prom::SnapshotCollector collector(store, build_info());
  std::string body;
  collector.render_text(body);
  std::fwrite(body.data(), 1, body.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

void block_daemon_signals() {
  const sigset_t set = daemon_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int run_daemon(const CliOptions& options, Config config) {
  SnapshotStore store(config.ring);
  Sampler sampler(store, build_sources(config), config.interval);
  prom::SnapshotCollector collector(store, build_info());
  const HttpServer::Handlers handlers{[&collector](std::string& out) { collector.render_text(out); },
                                     [&sampler] { return sampler.healthy(); }};

  auto http = HttpServer::start(config.listen_address, handlers);
  if (!http) {
    std::fprintf(stderr, "memdiagd: %s\n", http.error().message.c_str());
    return 1;
  }
  std::unique_ptr<HttpServer> server = std::move(http).value();
  sampler.start();
  spdlog::info("memdiagd {} serving on http://{}/metrics, sampling every {}ms", build::kVersion,
               config.listen_address, config.interval.count());

  const sigset_t set = daemon_signals();
  for (;;) {
    int signal_number = 0;
    if (sigwait(&set, &signal_number) != 0) continue;
    if (signal_number != SIGHUP) {
      spdlog::info("received {}, stopping", signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
      break;
    }
    if (!options.config_path) {
      spdlog::info("SIGHUP: no --config file to reload");
      continue;
    }
    auto reloaded = resolve_config(options);
    if (!reloaded) {
      spdlog::error("SIGHUP: keeping the running config; new one is invalid: {}", reloaded.error().to_string());
      continue;
    }
    Config next = std::move(reloaded).value();
    if (next.listen_address != server->listen_address()) {
      // Bind the new address before letting go of the old one, so a bad address costs nothing.
      auto moved = HttpServer::start(next.listen_address, handlers);
      if (!moved) {
        spdlog::error("SIGHUP: keeping {}: {}", server->listen_address(), moved.error().message);
        next.listen_address = server->listen_address();
      } else {
        server = std::move(moved).value();
        spdlog::info("now serving on http://{}/metrics", next.listen_address);
      }
    }
    set_log_level(next.log_level);
    store.set_ring_capacity(next.ring);
    sampler.reconfigure(build_sources(next), next.interval);
    config = std::move(next);
    spdlog::info("SIGHUP: reloaded {}", config.file);
  }

  server.reset();  // stop answering before the snapshot store goes away
  if (!sampler.stop(std::chrono::milliseconds(3000))) {
    // The sampler thread is blocked in a kernel read; it holds no state worth saving.
    spdlog::warn("sampler did not stop within 3s (stuck in a read); exiting anyway");
    std::fflush(nullptr);
    std::_Exit(0);
  }
  spdlog::info("stopped");
  return 0;
}

}  // namespace memdiag
