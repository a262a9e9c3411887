// SPDX-License-Identifier: Apache-2.0
#include "daemon/logging.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <filesystem>

namespace memdiag {

void setup_logging() {
  auto logger = spdlog::stderr_logger_mt("memdiagd");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %v");
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
