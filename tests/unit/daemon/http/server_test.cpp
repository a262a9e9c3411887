// SPDX-License-Identifier: Apache-2.0
// The event loop over real loopback sockets, with clients that ask for a large /metrics and
// never read it: what they may hold of the daemon's memory, in user space and in the kernel.
#include "daemon/http/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/http/listener.hpp"

namespace memdiag::http {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kBody = std::size_t{4} << 20;  // a large exposition (max_cgroups ~800)
const std::string kRequest = "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n";

struct Served {
  std::unique_ptr<Server> server;
  int port = 0;
};

Served serve(Handlers handlers, ServerLimits limits) {
  auto listener = listen_on("127.0.0.1:0");
  EXPECT_TRUE(listener) << listener.error().message;
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  ::getsockname(listener->get(), reinterpret_cast<sockaddr*>(&addr), &len);
  auto server = Server::start(std::move(listener).value(), std::move(handlers), limits);
  EXPECT_TRUE(server);
  return {std::move(server).value(), ntohs(addr.sin_port)};
}

// A client that asks for /metrics with a 4 KiB receive window and then reads nothing.
UniqueFd ask_and_never_read(int port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int window = 4096;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &window, sizeof window);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::send(fd.get(), kRequest.data(), kRequest.size(), 0), static_cast<ssize_t>(kRequest.size()));
  return fd;
}

// Bytes the kernel holds unacknowledged in the send queues of the server's sockets on `port`
// (tx_queue in /proc/net/tcp): the part of the responses that left user space.
std::size_t kernel_send_queues(int port) {
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  std::getline(tcp, line);  // header
  std::size_t total = 0;
  while (std::getline(tcp, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues;
    fields >> slot >> local >> remote >> state >> queues;
    const std::size_t colon = local.find(':');
    if (colon == std::string::npos || std::stoi(local.substr(colon + 1), nullptr, 16) != port) continue;
    total += std::stoul(queues.substr(0, queues.find(':')), nullptr, 16);
  }
  return total;
}

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds within = 5s) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

TEST(HttpServer, ClientsThatNeverReadShareOneExpositionAndHoldLittleKernelMemory) {
  constexpr std::size_t kClients = 32;
  auto body = std::make_shared<const std::string>(kBody, 'x');
  const std::size_t before = resident_bytes();
  Served s = serve({[body] { return body; }, [] { return true; }, {}}, ServerLimits{});
  std::vector<UniqueFd> clients;
  for (std::size_t i = 0; i < kClients; ++i) clients.push_back(ask_and_never_read(s.port));
  // Every client's response is pending on the one buffer: ours, the handler's, one each.
  EXPECT_TRUE(eventually([&] { return body.use_count() == static_cast<long>(kClients + 2); }))
      << "use count " << body.use_count();
  // A copy per client would be 128 MiB here.
  EXPECT_LT(resident_bytes() - std::min(before, resident_bytes()), std::size_t{16} << 20);
  // The kernel holds at most ~256 KiB each (SO_SNDBUF); autotuned, each would take the whole 4 MiB.
  const std::size_t queued = kernel_send_queues(s.port);
  EXPECT_LE(queued, kClients * (std::size_t{320} << 10)) << queued / kClients << " bytes per client";
  EXPECT_GT(queued, 0u);
  s.server.reset();
  EXPECT_EQ(body.use_count(), 1);
}

TEST(HttpServer, HoldersOfOlderExpositionsAreDroppedOverTheBudgetHoldersOfTheLatestNever) {
  std::mutex m;
  std::vector<std::weak_ptr<const std::string>> rendered;
  Handlers handlers{[&] {  // a new snapshot between every two scrapes
                      auto body = std::make_shared<const std::string>(kBody, 'y');
                      std::lock_guard lock(m);
                      rendered.push_back(body);
                      return body;
                    },
                    [] { return true; }, {}};
  ServerLimits limits;
  limits.max_held_bytes = kBody + kBody / 2;  // room for one exposition, not two
  Served s = serve(std::move(handlers), limits);
  auto count = [&] {
    std::lock_guard lock(m);
    return rendered.size();
  };
  auto alive = [&](std::size_t i) {
    std::lock_guard lock(m);
    return !rendered[i].expired();
  };
  UniqueFd first = ask_and_never_read(s.port);
  ASSERT_TRUE(eventually([&] { return count() == 1; }));
  UniqueFd second = ask_and_never_read(s.port);
  ASSERT_TRUE(eventually([&] { return count() == 2; }));
  EXPECT_TRUE(eventually([&] { return !alive(0); })) << "the first client still holds its exposition";
  EXPECT_TRUE(alive(1));
  // The first client gets what the kernel had taken, then the end: less than its response.
  const timeval wait{5, 0};
  ::setsockopt(first.get(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  std::size_t got = 0;
  char buf[65536];
  for (ssize_t n; (n = ::recv(first.get(), buf, sizeof buf, 0)) > 0;) got += static_cast<std::size_t>(n);
  EXPECT_LT(got, kBody);
  EXPECT_TRUE(alive(1));  // the latest stays with its holder
}

}  // namespace
}  // namespace memdiag::http
