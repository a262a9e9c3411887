// SPDX-License-Identifier: Apache-2.0
#include "daemon/systemd_notifier.hpp"

#include <systemd/sd-daemon.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <ctime>

#include "exporters/report/status_line.hpp"

namespace memdiag {

SystemdNotifier::SystemdNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  active_ = socket != nullptr && *socket != '\0';
  std::uint64_t usec = 0;
  // > 0 only when WATCHDOG_USEC is set and WATCHDOG_PID, if set, is this process.
  if (active_ && sd_watchdog_enabled(0, &usec) > 0 && usec > 0) watchdog_ = std::chrono::microseconds(usec);
}

void SystemdNotifier::send(const std::string& message) {
  if (!active_) return;
  const int sent = sd_notify(0, message.c_str());
  if (sent < 0) {
    // Said once: a service manager that went away is not news every second.
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) spdlog::warn("cannot notify systemd ({}): {}", -sent, message.substr(0, message.find('\n')));
  }
}

void SystemdNotifier::sampled(const Snapshot& snapshot) {
  if (!active_) return;
  std::string message;
  const std::string status = report::status_line(snapshot);
  if (status != last_status_) {
    message += "STATUS=" + status + "\n";
    last_status_ = status;
  }
  if (!ready_.exchange(true)) message += "READY=1\n";
  if (watchdog_) message += "WATCHDOG=1\n";
  if (!message.empty()) send(message);
}

void SystemdNotifier::reloading() {
  if (!ready_) return;
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const auto usec = static_cast<unsigned long long>(now.tv_sec) * 1000000ull +
                    static_cast<unsigned long long>(now.tv_nsec) / 1000ull;
  send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec) + "\n");
}

void SystemdNotifier::reloaded() {
  if (ready_) send("READY=1\n");
}

void SystemdNotifier::stopping() { send("STOPPING=1\n"); }

}  // namespace memdiag
