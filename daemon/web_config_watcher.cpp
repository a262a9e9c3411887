// SPDX-License-Identifier: Apache-2.0
#include "daemon/web_config_watcher.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <system_error>

namespace memdiag {
namespace {

std::string stamp(const std::string& file) {
  std::error_code error;
  const auto written = std::filesystem::last_write_time(file, error);
  if (error) return file + ":missing;";
  const auto size = std::filesystem::file_size(file, error);
  return file + ":" + std::to_string(written.time_since_epoch().count()) + ":" + std::to_string(error ? 0 : size) + ";";
}

}  // namespace

WebConfigWatcher::WebConfigWatcher(std::string path, std::shared_ptr<const WebSecurity> loaded,
                                   std::chrono::milliseconds check_every)
    : check_every_(check_every) {
  retarget(std::move(path), std::move(loaded));
}

void WebConfigWatcher::retarget(std::string path, std::shared_ptr<const WebSecurity> loaded) {
  std::lock_guard lock(mutex_);
  path_ = std::move(path);
  security_ = std::move(loaded);
  named_files_ = security_ ? security_->config.named_files() : std::vector<std::string>{};
  fingerprint_ = path_.empty() ? std::string() : fingerprint();
  checked_ = Clock::now();
}

std::string WebConfigWatcher::fingerprint() const {
  std::string all = stamp(path_);
  for (const std::string& file : named_files_) all += stamp(file);
  return all;
}

std::shared_ptr<const WebSecurity> WebConfigWatcher::current() {
  std::lock_guard lock(mutex_);
  if (path_.empty()) return security_;
  const Clock::time_point now = Clock::now();
  if (now - checked_ < check_every_) return security_;
  checked_ = now;
  std::string seen = fingerprint();
  if (seen == fingerprint_) return security_;
  fingerprint_ = std::move(seen);
  auto reloaded = load_web_security(path_);
  if (!reloaded) {
    spdlog::error("web config changed but is invalid, keeping the last good one: {}", reloaded.error().to_string());
    // Watch the files the new text names even so: a config written before the certificate and
    // key it names is good once they arrive, and their arrival must count as a change.
    if (auto parsed = load_web_config_file(path_)) {
      named_files_ = parsed->named_files();
      fingerprint_ = fingerprint();
    }
    return security_;
  }
  security_ = std::move(reloaded).value();
  // The new config may name other files: watch those from now on (their stamps as of now).
  named_files_ = security_->config.named_files();
  fingerprint_ = fingerprint();
  spdlog::info("web config {} reloaded: {}, {} basic auth user(s), {} header(s)", path_,
               security_->tls ? "TLS" : "plain HTTP", security_->config.users.size(), security_->config.headers.size());
  return security_;
}

}  // namespace memdiag
