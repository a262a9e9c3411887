#include "daemon/logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace memdiag {

void setup_logging() {
  auto logger = spdlog::stderr_logger_mt("memdiagd");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::info);
}

void set_log_level(const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); }

}  // namespace memdiag
