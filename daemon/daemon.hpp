// SPDX-License-Identifier: Apache-2.0
// The long-running daemon and the one-shot modes, wired from a validated Config.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "daemon/cli.hpp"
#include "daemon/config.hpp"
#include "daemon/control_events.hpp"
#include "daemon/http/diagnosis_query.hpp"
#include "daemon/sampler.hpp"
#include "exporters/prometheus/daemon_posture.hpp"
#include "probes/core/source.hpp"

namespace memdiag {

// The enabled sources of this OS, in registration order.
std::vector<std::unique_ptr<Source>> build_sources(const Config& config);

// The sources of `next` for a reload from `running`: those whose paths and settings did not
// change keep their running instance (state, counters, eBPF programs, canary children).
std::vector<Sampler::SourcePlan> plan_sources(const Config& running, const Config& next);

// The diagnosis report of the store's latest snapshot as /api/v1/diagnosis serves it; null
// before the first sample.
std::shared_ptr<const std::string> diagnosis_report(const SnapshotStore& store, const http::DiagnosisQuery& query);

// Samples once and prints the exposition to stdout. Returns the exit code.
int run_once(const Config& config);

// What the caller of serve() hears of its course (each may be empty).
struct ServeHooks {
  std::function<void()> on_serving;  // HTTP listens and the sampler runs
  // Why it cannot serve, just before it returns 1 (the listen address cannot be bound). Empty:
  // one line on stderr.
  std::function<void(const std::string&)> on_fatal;
  // Just before the process leaves with _Exit(1), the sampler stuck in a read (a Windows
  // service reports itself stopped: nothing after this runs).
  std::function<void()> on_forced_exit;
  // After every sample, on the sampler's thread (systemd's watchdog and status).
  std::function<void(const Snapshot&)> on_sample;
  // With every sample, on the sampler's thread, before the sample is published (so no scrape
  // sees a sample without it): what the daemon runs with (memdiag_daemon_*).
  std::function<std::shared_ptr<const prom::DaemonPosture>(const Snapshot&)> posture_after_sample;
  // A reload begins; it is over (the new config taken or refused); the daemon stops.
  std::function<void()> on_reloading;
  std::function<void()> on_reloaded;
  std::function<void()> on_stopping;
};

// Samples and serves HTTP until `next_event` says stop; a reload event re-reads
// `options.config_path`. Returns the exit code: 1 when the listen address cannot be bound, 2
// when the web config cannot be loaded (checked before, so only when it changed in between).
int serve(const CliOptions& options, Config config, const NextControlEvent& next_event, const ServeHooks& hooks = {});

#ifndef _WIN32
// serve() with signals as the control events (signal_control.cpp): SIGTERM/SIGINT stop it,
// SIGHUP reloads. Call it before starting any thread of your own: it blocks the signals it
// waits for.
int run_daemon(const CliOptions& options, Config config);

// Blocks SIGHUP, SIGTERM and SIGINT in the calling thread (and the threads it creates later),
// so the daemon receives them with sigwait instead of in async handlers.
void block_daemon_signals();
#endif

}  // namespace memdiag
