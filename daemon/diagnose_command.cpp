#include "daemon/diagnose_command.hpp"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "daemon/cli.hpp"
#include "daemon/config_values.hpp"
#include "daemon/daemon.hpp"
#include "daemon/http_client.hpp"
#include "daemon/logging.hpp"
#include "daemon/sampler.hpp"
#include "exporters/report/diagnosis_report.hpp"

namespace memdiag {

namespace {

constexpr std::chrono::milliseconds kDefaultLocalDuration{5000};

// Samples the node for `duration` as the daemon would, and gives the report of the last sample.
Expected<std::string> diagnose_locally(const Config& config, std::chrono::milliseconds duration,
                                       const DiagnoseOptions& options) {
  SnapshotStore store(config.ring);
  Sampler sampler(store, build_sources(config), config.interval, config.diagnosis);
  const auto end = std::chrono::steady_clock::now() + duration;
  for (;;) {
    sampler.sample_now();
    if (std::chrono::steady_clock::now() + config.interval > end) break;
    std::this_thread::sleep_for(config.interval);
  }
  const SnapshotPtr latest = store.latest();
  if (!latest) return make_error("no sample was taken");
  const report::ReportOptions report_options{.since = options.since, .origin = "local"};
  return options.json ? report::render_diagnosis_json(*latest, report_options)
                      : report::render_diagnosis_text(*latest, report_options);
}

}  // namespace

std::string diagnose_usage() {
  return "usage: memdiagd diagnose [--url URL] [--config FILE] [--duration DURATION] [--format text|json]\n"
         "                         [--since DURATION] [--timeout DURATION]\n"
         "\n"
         "  --url URL             the daemon's /api/v1/diagnosis (default: the config's listen address on loopback)\n"
         "  --config FILE         the daemon's config: its listen address, and the sources to sample locally\n"
         "  --duration DURATION   sample locally for this long instead of asking a daemon (\"10s\")\n"
         "  --format text|json    text for a person (default), JSON for tools (README: Diagnosis report)\n"
         "  --since DURATION      how far back the timeline of transitions reaches (default: all kept)\n"
         "  --timeout DURATION    how long to wait for the daemon before sampling locally (default 5s)\n";
}

std::string diagnosis_url_for(const std::string& listen_address) {
  const std::size_t colon = listen_address.rfind(':');
  std::string host = listen_address.substr(0, colon);
  const std::string port = colon == std::string::npos ? "9842" : listen_address.substr(colon + 1);
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "[::]") host = "[::1]";
  return "http://" + host + ":" + port + "/api/v1/diagnosis";
}

Expected<DiagnoseOptions> parse_diagnose_args(const std::vector<std::string>& args) {
  DiagnoseOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::optional<std::string> value;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      continue;
    }
    static const std::vector<std::string_view> kFlags = {"--url",    "--config",  "--duration", "--format",
                                                         "--since",  "--timeout"};
    if (std::find(kFlags.begin(), kFlags.end(), arg) == kFlags.end()) {
      std::string message = "unknown argument '" + args[i] + "'";
      if (auto hint = closest_match(arg, kFlags)) message += "; did you mean '" + *hint + "'?";
      return make_error(message);
    }
    if (!value) {
      if (i + 1 >= args.size()) return make_error(arg + " needs a value");
      value = args[++i];
    }
    auto duration = [&](std::optional<std::chrono::milliseconds>& into) -> Status {
      auto parsed = parse_duration(*value);
      if (!parsed) return make_error(arg + ": " + parsed.error().message);
      if (parsed->count() <= 0) return make_error(arg + " must be above 0");
      into = *parsed;
      return Ok{};
    };
    if (arg == "--url") {
      options.url = *value;
    } else if (arg == "--config") {
      options.config_path = *value;
    } else if (arg == "--format") {
      if (*value != "text" && *value != "json") return make_error("--format must be text or json, not '" + *value + "'");
      options.json = *value == "json";
    } else if (arg == "--duration") {
      if (auto st = duration(options.duration); !st) return st.error();
    } else if (arg == "--since") {
      if (auto st = duration(options.since); !st) return st.error();
    } else if (arg == "--timeout") {
      std::optional<std::chrono::milliseconds> timeout;
      if (auto st = duration(timeout); !st) return st.error();
      options.timeout = *timeout;
    }
  }
  return options;
}

int run_diagnose(const std::vector<std::string>& args) {
  auto options = parse_diagnose_args(args);
  if (!options) {
    std::fprintf(stderr, "memdiagd diagnose: %s\n%s", options.error().message.c_str(), diagnose_usage().c_str());
    return 2;
  }
  if (options->help) {
    std::fputs(diagnose_usage().c_str(), stdout);
    return 0;
  }
  CliOptions cli;
  cli.config_path = options->config_path;
  auto config = resolve_config(cli);
  if (!config) {
    std::fprintf(stderr, "memdiagd diagnose: invalid config: %s\n", config.error().to_string().c_str());
    return 2;
  }

  std::chrono::milliseconds local_duration = options->duration.value_or(kDefaultLocalDuration);
  if (!options->duration) {
    std::string url = options->url.value_or(diagnosis_url_for(config->listen_address));
    url += url.find('?') == std::string::npos ? "?" : "&";
    url += options->json ? "format=json" : "format=text";
    if (options->since) url += "&since=" + std::to_string(options->since->count()) + "ms";
    auto reply = http_get(url, options->timeout);
    if (reply && reply->status == 200) {
      std::fwrite(reply->body.data(), 1, reply->body.size(), stdout);
      return std::fflush(stdout) == 0 ? 0 : 1;
    }
    const std::string why = reply ? "answered " + std::to_string(reply->status) + ": " + reply->body
                                  : reply.error().message;
    std::fprintf(stderr, "memdiagd diagnose: no diagnosis from %s (%s); sampling this node for %.0f s instead\n",
                 url.c_str(), why.c_str(), std::chrono::duration<double>(local_duration).count());
  }
  // Sampling here logs like the daemon; only what goes wrong matters to a person waiting.
  set_log_level("warn");
  auto report = diagnose_locally(*config, local_duration, *options);
  if (!report) {
    std::fprintf(stderr, "memdiagd diagnose: %s\n", report.error().message.c_str());
    return 1;
  }
  std::fwrite(report->data(), 1, report->size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace memdiag
