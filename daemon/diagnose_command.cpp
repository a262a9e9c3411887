// SPDX-License-Identifier: Apache-2.0
#include "daemon/diagnose_command.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "daemon/cli.hpp"
#include "daemon/config_values.hpp"
#include "daemon/daemon.hpp"
#include "daemon/http_client.hpp"
#include "daemon/logging.hpp"
#include "daemon/sampler.hpp"
#include "daemon/subcommand_args.hpp"
#include "daemon/web_config.hpp"
#include "exporters/report/diagnosis_report.hpp"
#include "probes/analysis/diagnosis_replay.hpp"
#include "probes/recording/recording_reader.hpp"

namespace memdiag {

namespace {

constexpr std::chrono::milliseconds kDefaultLocalDuration{5000};

std::string render(const Snapshot& snapshot, const DiagnoseOptions& options, std::string_view origin);

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
  return render(*latest, options, "local");
}

std::string render(const Snapshot& snapshot, const DiagnoseOptions& options, std::string_view origin) {
  const report::ReportOptions report_options{.since = options.since, .origin = origin};
  return options.json ? report::render_diagnosis_json(snapshot, report_options)
                      : report::render_diagnosis_text(snapshot, report_options);
}

std::string utc_time(std::chrono::system_clock::time_point t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

// A recording is at most this large: it is read whole (a day at 1 s with ~500 cgroups is ~1 GiB).
constexpr std::uintmax_t kMaxRecordingBytes = 4ull << 30;

// Replays a recording through the models and prints the report of its last snapshot.
// 0 printed, 1 nothing to report, 2 not a readable recording.
int replay(const Config& config, const DiagnoseOptions& options) {
  const std::string& path = *options.replay;
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    std::fprintf(stderr, "memdiagd diagnose: cannot read %s: %s\n", path.c_str(), ec.message().c_str());
    return 2;
  }
  if (size > kMaxRecordingBytes) {
    std::fprintf(stderr, "memdiagd diagnose: %s is %ju bytes, more than a recording can be (%ju)\n", path.c_str(),
                 size, kMaxRecordingBytes);
    return 2;
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    std::fprintf(stderr, "memdiagd diagnose: cannot read %s\n", path.c_str());
    return 2;
  }
  auto reader = recording::RecordingReader::open(std::move(bytes));
  if (!reader) {
    std::fprintf(stderr, "memdiagd diagnose: %s: %s\n", path.c_str(), reader.error().message.c_str());
    return 2;
  }
  analysis::DiagnosisReplay models(config.diagnosis, config.ring);
  std::string cut;
  for (;;) {
    auto next = reader->next();
    if (!next) {
      if (!(reader->truncated() && options.allow_truncated)) {
        std::fprintf(stderr, "memdiagd diagnose: %s: %s%s\n", path.c_str(), next.error().message.c_str(),
                     reader->truncated() ? " (--allow-truncated replays what comes before)" : "");
        return 2;
      }
      cut = " up to where it was cut";
      break;
    }
    if (!*next) break;
    models.add(std::move(**next));
  }
  const SnapshotPtr latest = models.latest();
  if (!latest) {
    std::fprintf(stderr, "memdiagd diagnose: %s holds no snapshot\n", path.c_str());
    return 1;
  }
  const recording::RecordingHeader& h = reader->header();
  std::fprintf(stderr, "memdiagd diagnose: replayed %llu snapshots of %s (%s, recorded by %s every %.1f s from %s)%s\n",
               static_cast<unsigned long long>(reader->snapshots()), h.host.c_str(), h.system.c_str(),
               h.recorder.c_str(), std::chrono::duration<double>(h.interval).count(), utc_time(h.started_at).c_str(),
               cut.c_str());
  const std::string report = render(*latest, options, "replay");
  std::fwrite(report.data(), 1, report.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

std::string diagnose_usage() {
  return "usage: memdiagd diagnose [--url URL | --socket PATH] [--config FILE] [--duration DURATION]\n"
         "                         [--format text|json] [--basic-auth-file FILE] [--ca-file FILE]\n"
         "                         [--cert-file FILE --key-file FILE]\n"
         "                         [--since DURATION] [--timeout DURATION]\n"
         "       memdiagd diagnose --replay FILE [--allow-truncated] [--config FILE] [--format text|json]\n"
         "                         [--since DURATION]\n"
         "\n"
         "  --url URL             the daemon's /api/v1/diagnosis (default: the config's web.unix_socket when\n"
         "                        this user can connect to it (root), else its listen address on loopback)\n"
         "  --socket PATH         ask the daemon on this Unix socket (its web.unix_socket): plain HTTP, no\n"
         "                        TLS and no credentials; only root and the daemon's user may connect\n"
         "  --config FILE         the daemon's config: its listen address, and the sources to sample locally\n"
         "                        (default: /etc/memdiag/memdiagd.yaml when it is there)\n"
         "  --duration DURATION   sample locally for this long instead of asking a daemon (\"10s\"; a bare\n"
         "                        number is seconds)\n"
         "  --format text|json    text for a person (default), JSON for tools (docs/diagnose.md)\n"
         "  --since DURATION      how far back the timeline of transitions reaches (default: all kept)\n"
         "  --timeout DURATION    how long to wait for the daemon before sampling locally (default 5s)\n"
         "  --replay FILE         run the models over a recording (memdiagd record) and report its end;\n"
         "                        the config's diagnosis settings apply, so other thresholds can be tried\n"
         "  --allow-truncated     replay a recording that was cut short up to the cut\n"
         "  --basic-auth-file FILE  user:password for a daemon whose web config has basic_auth_users\n"
         "                        (or the MEMDIAG_BASIC_AUTH environment variable)\n"
         "  --ca-file FILE        https: verify the daemon against these CA certificates (default: trust the\n"
         "                        certificate its web config names, as read from the config)\n"
         "  --cert-file FILE      https: the client certificate (PEM) for a daemon whose web config asks for\n"
         "                        one (client_auth_type), with --key-file FILE, its private key (PEM)\n"
         "  --key-file FILE       the private key of --cert-file\n";
}

std::string diagnosis_url_for(const std::string& listen_address, bool tls) {
  const std::size_t colon = listen_address.rfind(':');
  std::string host = listen_address.substr(0, colon);
  const std::string port = colon == std::string::npos ? "9842" : listen_address.substr(colon + 1);
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host == "[::]") host = "[::1]";
  return (tls ? "https://" : "http://") + host + ":" + port + "/api/v1/diagnosis";
}

Expected<DiagnoseOptions> parse_diagnose_args(const std::vector<std::string>& args) {
  DiagnoseOptions options;
  auto split = split_subcommand_args(
      args,
      {"--url", "--socket", "--config", "--duration", "--format", "--since", "--timeout", "--replay", "--basic-auth-file",
       "--ca-file", "--cert-file", "--key-file"},
      {"--allow-truncated"});
  if (!split) return split.error();
  for (const SubcommandArg& each : *split) {
    // Named references, not a structured binding: clang 14 cannot capture one in a lambda.
    const std::string& arg = each.flag;
    const std::string& value = each.value;
    auto duration = [&](std::optional<std::chrono::milliseconds>& into) -> Status {
      auto parsed = parse_command_line_duration(value);
      if (!parsed) return make_error(arg + ": " + parsed.error().message);
      if (parsed->count() <= 0) return make_error(arg + " must be above 0");
      into = *parsed;
      return Ok{};
    };
    if (arg == "--help") {
      options.help = true;
    } else if (arg == "--allow-truncated") {
      options.allow_truncated = true;
    } else if (arg == "--url") {
      options.url = value;
    } else if (arg == "--socket") {
      // The daemon's own check of web.unix_socket; "" (none there) names no socket here.
      if (value.empty()) return make_error("--socket needs a path");
      if (auto st = check_unix_socket_path(value); !st) return make_error("--socket: " + st.error().message);
      options.socket = value;
    } else if (arg == "--config") {
      options.config_path = value;
    } else if (arg == "--replay") {
      options.replay = value;
    } else if (arg == "--basic-auth-file") {
      options.basic_auth_file = value;
    } else if (arg == "--ca-file") {
      options.ca_file = value;
    } else if (arg == "--cert-file") {
      options.cert_file = value;
    } else if (arg == "--key-file") {
      options.key_file = value;
    } else if (arg == "--format") {
      if (value != "text" && value != "json") return make_error("--format must be text or json, not '" + value + "'");
      options.json = value == "json";
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
  if (options.replay && (options.url || options.socket || options.duration)) {
    return make_error("--replay reads a recording: --url, --socket and --duration do not go with it");
  }
  if (options.url && options.socket) return make_error("--url and --socket name two daemons: give one");
  if (options.cert_file.has_value() != options.key_file.has_value()) {
    return make_error("--cert-file and --key-file go together: a certificate and its private key");
  }
  if (options.allow_truncated && !options.replay) return make_error("--allow-truncated goes with --replay");
  return options;
}

namespace {

struct DaemonClient {
  bool tls = false;  // the daemon's web config has TLS
  bool requires_client_certificate = false;  // ... and a client certificate is required
  HttpClientOptions options;
};

// How to reach the daemon as its config says: https when its web config has TLS, trusting the
// certificate that web config names (this node's daemon: the file is right here), or the CA
// certificates given; basic auth from the file given or the environment.
Expected<DaemonClient> client_for(const Config& config, const DiagnoseOptions& options) {
  DaemonClient client;
  if (!config.web_config_file.empty()) {
    auto web = load_web_config_file(config.web_config_file);
    if (!web) return make_error("the daemon's web config: " + web.error().to_string());
    client.tls = web->tls_enabled;
    if (web->tls_enabled) client.options.pinned_certificate = web->tls.cert_file;
    client.requires_client_certificate =
        web->tls_enabled && (web->tls.client_auth == ClientAuth::kRequireAnyClientCert ||
                             web->tls.client_auth == ClientAuth::kRequireAndVerifyClientCert);
  }
  if (options.cert_file) {
    client.options.client_cert_file = *options.cert_file;
    client.options.client_key_file = *options.key_file;
  }
  if (options.ca_file) {
    client.options.ca_file = *options.ca_file;
    client.options.pinned_certificate.clear();
  }
  if (options.basic_auth_file) {
    std::ifstream file(*options.basic_auth_file);
    std::string line;
    if (!file || !std::getline(file, line)) return make_error("cannot read " + *options.basic_auth_file);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find(':') == std::string::npos) return make_error(*options.basic_auth_file + ": expected user:password");
    client.options.basic_auth = line;
  } else if (const char* env = std::getenv("MEMDIAG_BASIC_AUTH"); env != nullptr && *env != '\0') {
    if (std::string_view(env).find(':') == std::string_view::npos) {
      return make_error("MEMDIAG_BASIC_AUTH: expected user:password");
    }
    client.options.basic_auth = std::string(env);
  }
  return client;
}

}  // namespace

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
  cli.config_path = config_or_installed(options->config_path);
  auto config = resolve_config(cli);
  if (!config) {
    std::fprintf(stderr, "memdiagd diagnose: invalid config: %s\n", config.error().to_string().c_str());
    return 2;
  }

  if (options->replay) return replay(*config, *options);

  std::chrono::milliseconds local_duration = options->duration.value_or(kDefaultLocalDuration);
  if (!options->duration) {
    // A daemon that closes a TLS connection under OpenSSL's write must not kill this process.
    std::signal(SIGPIPE, SIG_IGN);
    // The Unix socket first when it is named (or the config names one this user can reach): no
    // TLS and no credentials to find, and the daemon's user and root are the ones it serves.
    std::optional<std::string> socket = options->socket;
    if (!socket && !options->url && !config->unix_socket.empty() && unix_socket_connectable(config->unix_socket)) {
      socket = config->unix_socket;
    }
    Expected<DaemonClient> client = DaemonClient{};
    if (socket) {
      client->options.unix_socket = *socket;
    } else {
      client = client_for(*config, *options);
      if (!client) {
        std::fprintf(stderr, "memdiagd diagnose: %s\n", client.error().message.c_str());
        return 2;
      }
    }
    std::string url = socket ? "http://localhost/api/v1/diagnosis"
                             : options->url.value_or(diagnosis_url_for(config->listen_address, client->tls));
    url += url.find('?') == std::string::npos ? "?" : "&";
    url += options->json ? "format=json" : "format=text";
    if (options->since) url += "&since=" + std::to_string(options->since->count()) + "ms";
    auto reply = http_get(url, options->timeout, client->options);
    if (reply && reply->status == 200) {
      std::fwrite(reply->body.data(), 1, reply->body.size(), stdout);
      return std::fflush(stdout) == 0 ? 0 : 1;
    }
    std::string why = reply ? "answered " + std::to_string(reply->status) + ": " + reply->body
                            : reply.error().message;
    if (!reply && client->requires_client_certificate && client->options.client_cert_file.empty()) {
      why += "; its web config requires a client certificate: give --cert-file FILE and --key-file FILE";
    }
    if (reply && reply->status == 401) {
      while (!why.empty() && why.back() == '\n') why.pop_back();
      why += client->options.basic_auth ? "; the user and password were refused"
                                         : "; give a user and password with --basic-auth-file FILE or MEMDIAG_BASIC_AUTH";
    }
    const std::string from = socket ? "unix:" + *socket : url;
    std::fprintf(stderr, "memdiagd diagnose: no diagnosis from %s (%s); sampling this node for %.0f s instead\n",
                 from.c_str(), why.c_str(), std::chrono::duration<double>(local_duration).count());
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
