// SPDX-License-Identifier: Apache-2.0
#include "daemon/logging.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#ifdef __linux__
#include <spdlog/sinks/systemd_sink.h>
#include <sys/stat.h>
#endif

namespace memdiag {
namespace {

#ifdef __linux__
// systemd connects a service's stderr to the journal and says so in JOURNAL_STREAM
// ("device:inode" of that stream). Only when stderr is still that stream: a child whose
// stderr was redirected inherits the variable too.
bool stderr_is_the_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  unsigned long long device = 0, inode = 0;
  if (stream == nullptr || std::sscanf(stream, "%llu:%llu", &device, &inode) != 2) return false;
  struct stat st {};
  return ::fstat(2, &st) == 0 && st.st_dev == device && st.st_ino == inode;
}
#endif

}  // namespace

void setup_logging() {
  std::shared_ptr<spdlog::logger> logger;
#ifdef __linux__
  if (stderr_is_the_journal()) {
    // Straight to journald with each line's priority (journalctl -p warning shows the warnings,
    // and they are coloured), and no timestamp or level in the text: the journal has both.
    logger = spdlog::systemd_logger_mt("memdiagd", "memdiagd");
  }
#endif
  if (!logger) {
    logger = spdlog::stderr_logger_mt("memdiagd");
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %v");
  }
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::info);
}

Status add_log_file(const std::string& path) {
  try {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, /*truncate=*/false);
    file->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %v");
    spdlog::default_logger()->sinks().push_back(std::move(file));
    // A file is read after the fact (a service that stopped, or one that hangs): every line
    // said must be in it at once. The log says what happened once, not per sample, so this is
    // a few writes a minute.
    spdlog::default_logger()->flush_on(spdlog::level::trace);
    return Ok{};
  } catch (const std::exception& e) {
    return make_error("cannot log to " + path + ": " + e.what());
  }
}

void set_log_level(const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); }

}  // namespace memdiag
