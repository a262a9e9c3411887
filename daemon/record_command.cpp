// SPDX-License-Identifier: Apache-2.0
#include "daemon/record_command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "daemon/build_info.hpp"
#include "daemon/cli.hpp"
#include "daemon/config_values.hpp"
#include "daemon/daemon.hpp"
#include "daemon/logging.hpp"
#include "daemon/sampler.hpp"
#include "daemon/subcommand_args.hpp"
#include "probes/recording/recording_writer.hpp"

namespace memdiag {

namespace {

Status write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  return Ok{};
}

recording::RecordingHeader header_for(std::chrono::milliseconds interval) {
  recording::RecordingHeader header;
  header.recorder = std::string("memdiagd ") + build::kVersion + " (" + build::kRevision + ")";
  struct utsname names {};
  if (::uname(&names) == 0) {
    header.host = names.nodename;
    header.system = std::string(names.sysname) + " " + names.release;
  }
  header.interval = interval;
  header.started_at = std::chrono::system_clock::now();
  return header;
}

// Waits up to `timeout` for SIGINT or SIGTERM (blocked, so they queue): true when one came.
bool stop_requested_within(std::chrono::milliseconds timeout) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  const auto ms = std::max<std::int64_t>(timeout.count(), 0);
  const timespec wait{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1'000'000};
  for (;;) {
    const int signal_number = ::sigtimedwait(&set, nullptr, &wait);
    if (signal_number > 0) return true;
    if (errno == EINTR) continue;
    return false;  // EAGAIN: the time passed
  }
}

}  // namespace

std::string record_usage() {
  return "usage: memdiagd record --output FILE [--duration DURATION] [--config FILE] [--interval DURATION]\n"
         "                       [--max-size MIB]\n"
         "\n"
         "  --output FILE         where the recording goes (\"-\": standard output)\n"
         "  --duration DURATION   how long to sample (default 60s; a bare number is seconds; SIGINT or\n"
         "                        SIGTERM ends it early)\n"
         "  --config FILE         the daemon's config: the sources to sample and their settings\n"
         "                        (default: /etc/memdiag/memdiagd.yaml when it is there)\n"
         "  --interval DURATION   time between samples (default: the config's interval)\n"
         "  --max-size MIB        stop before the file grows past this (default 256)\n"
         "\n"
         "Replay it anywhere with: memdiagd diagnose --replay FILE\n";
}

Expected<RecordOptions> parse_record_args(const std::vector<std::string>& args) {
  RecordOptions options;
  bool have_output = false;
  auto split = split_subcommand_args(args, {"--output", "--duration", "--config", "--interval", "--max-size"});
  if (!split) return split.error();
  for (const SubcommandArg& each : *split) {
    // Named references, not a structured binding: clang 14 cannot capture one in a lambda.
    const std::string& arg = each.flag;
    const std::string& value = each.value;
    if (arg == "--help") {
      options.help = true;
    } else if (arg == "--output") {
      if (value.empty()) return make_error("--output needs a file name");
      options.output = value;
      have_output = true;
    } else if (arg == "--config") {
      options.config_path = value;
    } else if (arg == "--duration" || arg == "--interval") {
      auto parsed = parse_command_line_duration(value);
      if (!parsed) return make_error(arg + ": " + parsed.error().message);
      if (arg == "--duration") {
        if (parsed->count() <= 0) return make_error("--duration must be above 0");
        options.duration = *parsed;
      } else {
        if (auto st = check_interval(*parsed); !st) return make_error("--interval: " + st.error().message);
        options.interval = *parsed;
      }
    } else if (arg == "--max-size") {
      char* end = nullptr;
      errno = 0;
      const unsigned long long mib = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0 || mib == 0 || mib > (1ull << 20)) {
        return make_error("--max-size must be a number of MiB from 1 to 1048576, not '" + value + "'");
      }
      options.max_bytes = mib << 20;
    }
  }
  if (!options.help && !have_output) return make_error("--output FILE is required");
  return options;
}

int run_record(const std::vector<std::string>& args) {
  auto options = parse_record_args(args);
  if (!options) {
    std::fprintf(stderr, "memdiagd record: %s\n%s", options.error().message.c_str(), record_usage().c_str());
    return 2;
  }
  if (options->help) {
    std::fputs(record_usage().c_str(), stdout);
    return 0;
  }
  CliOptions cli;
  cli.config_path = config_or_installed(options->config_path);
  auto config = resolve_config(cli);
  if (!config) {
    std::fprintf(stderr, "memdiagd record: invalid config: %s\n", config.error().to_string().c_str());
    return 2;
  }
  const std::chrono::milliseconds interval = options->interval.value_or(config->interval);

  const bool to_stdout = options->output == "-";
  const int fd = to_stdout ? STDOUT_FILENO
                           : ::open(options->output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "memdiagd record: cannot write %s: %s\n", options->output.c_str(), std::strerror(errno));
    return 1;
  }
  // Before the sampler starts threads (eBPF loader, process scans): they inherit the mask, so
  // the signals wait for stop_requested_within() instead of killing the recorder mid-frame.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  set_log_level("warn");  // sampling logs like the daemon; only trouble matters here
  recording::RecordingWriter writer;
  std::uint64_t written = 0;
  auto emit = [&](const std::string& bytes) -> Status {
    written += bytes.size();
    return write_all(fd, bytes);
  };
  Status status = emit(writer.begin(header_for(interval)));

  SnapshotStore store(config->ring);
  Sampler sampler(store, build_sources(*config), interval, config->diagnosis);
  const auto started = std::chrono::steady_clock::now();
  const auto end = started + options->duration;
  std::string stopped_by = "the duration";
  while (status) {
    const auto due = std::chrono::steady_clock::now() + interval;
    const SnapshotPtr snapshot = sampler.sample_now();
    std::string frame = writer.append(*snapshot);
    // The end mark is a few bytes; keep room for it.
    if (written + frame.size() + 16 > options->max_bytes) {
      stopped_by = "the size cap (--max-size)";
      break;
    }
    status = emit(frame);
    if (!status || due > end) break;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(due - std::chrono::steady_clock::now());
    if (stop_requested_within(wait)) {
      stopped_by = "a signal";
      break;
    }
  }
  if (status) status = emit(writer.finish());
  if (status && !to_stdout && ::fsync(fd) != 0) status = make_error(std::strerror(errno));
  if (!to_stdout) ::close(fd);
  if (!status) {
    std::fprintf(stderr, "memdiagd record: writing %s failed: %s\n", options->output.c_str(),
                 status.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "memdiagd record: %llu snapshots over %.0f s, %llu bytes, in %s (stopped by %s)\n",
               static_cast<unsigned long long>(writer.snapshots()),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
               static_cast<unsigned long long>(written), options->output.c_str(), stopped_by.c_str());
  return 0;
}

}  // namespace memdiag
