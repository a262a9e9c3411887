#include "daemon/http_server.hpp"

#include <CivetServer.h>
#include <spdlog/spdlog.h>

#include <mutex>

#include "exporters/prometheus/exposition.hpp"

namespace memdiag {
namespace {

// Header and body leave in one write: two small writes on a socket without TCP_NODELAY made
// every scrape wait ~40 ms for the peer's delayed ACK.
void send_text(mg_connection* conn, int status, const char* reason, std::string_view body,
               const char* content_type = "text/plain; charset=utf-8") {
  std::string response = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " + content_type +
                         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nCache-Control: no-store\r\n\r\n";
  response += body;
  mg_write(conn, response.data(), response.size());
}

class MetricsHandler final : public CivetHandler {
 public:
  explicit MetricsHandler(std::function<void(std::string&)> render) : render_(std::move(render)) {}
  bool handleGet(CivetServer*, mg_connection* conn) override {
    // Render after room for the header, then write the header in front: one buffer, one send.
    constexpr std::size_t kHeaderRoom = 160;
    std::string response(kHeaderRoom, ' ');
    render_(response);
    const std::size_t body_size = response.size() - kHeaderRoom;
    const std::string header = std::string("HTTP/1.1 200 OK\r\nContent-Type: ") + prom::kExpositionContentType +
                               "\r\nContent-Length: " + std::to_string(body_size) + "\r\nCache-Control: no-store\r\n\r\n";
    const std::size_t start = kHeaderRoom - header.size();  // the header is well under kHeaderRoom
    response.replace(start, header.size(), header);
    mg_write(conn, response.data() + start, response.size() - start);
    return true;
  }

 private:
  std::function<void(std::string&)> render_;
};

class HealthHandler final : public CivetHandler {
 public:
  explicit HealthHandler(std::function<bool()> healthy) : healthy_(std::move(healthy)) {}
  bool handleGet(CivetServer*, mg_connection* conn) override {
    if (healthy_()) {
      send_text(conn, 200, "OK", "ok\n");
    } else {
      send_text(conn, 503, "Service Unavailable", "sampler stuck: no sample completed recently\n");
    }
    return true;
  }

 private:
  std::function<bool()> healthy_;
};

class IndexHandler final : public CivetHandler {
 public:
  bool handleGet(CivetServer*, mg_connection* conn) override {
    send_text(conn, 200, "OK",
              "<html><head><title>memdiagd</title></head><body><h1>memdiagd</h1>"
              "<ul><li><a href=\"/metrics\">/metrics</a></li><li><a href=\"/healthz\">/healthz</a></li></ul>"
              "</body></html>\n",
              "text/html; charset=utf-8");
    return true;
  }
};

// civetweb reports bind failures through its log callback ("cannot bind to ...: Address
// already in use", then a generic line); keep the first line for our error.
std::mutex g_civet_log_mutex;
std::string g_civet_last_log;

int capture_civet_log(const mg_connection*, const char* message) {
  std::lock_guard lock(g_civet_log_mutex);
  if (g_civet_last_log.empty() && message) g_civet_last_log = message;
  spdlog::debug("civetweb: {}", message ? message : "");
  return 1;  // handled: keep civetweb from printing it itself
}

// civetweb spells "all interfaces" as a bare port.
std::string civet_listening_port(const std::string& address) {
  if (!address.empty() && address.front() == ':') return address.substr(1);
  return address;
}

}  // namespace

struct HttpServer::Impl {
  std::unique_ptr<CivetServer> server;
  std::unique_ptr<MetricsHandler> metrics;
  std::unique_ptr<HealthHandler> health;
  std::unique_ptr<IndexHandler> index;
};

Expected<std::unique_ptr<HttpServer>> HttpServer::start(const std::string& listen_address, Handlers handlers) {
  if (!listen_address.empty() && listen_address.front() == '[' && mg_check_feature(8) == 0) {
    return make_error("cannot listen on " + listen_address +
                      ": this build's civetweb has no IPv6 support (Debian's does not); use an IPv4 address");
  }
  std::unique_ptr<HttpServer> http(new HttpServer());
  http->listen_address_ = listen_address;
  http->impl_ = std::make_unique<Impl>();
  const std::vector<std::string> options = {
      "listening_ports", civet_listening_port(listen_address),
      // civetweb parks a worker on every idle kept-alive connection: enough workers for a few
      // Prometheus servers, people and agents, and a short idle timeout so none is held long.
      "num_threads", "16",
      "tcp_nodelay", "1",                 // responses are complete when written: send them now
      "enable_keep_alive", "yes",
      "keep_alive_timeout_ms", "5000",
      "request_timeout_ms", "10000",
      "enable_auth_domain_check", "no",
  };
  CivetCallbacks callbacks{};
  callbacks.log_message = capture_civet_log;
  {
    std::lock_guard lock(g_civet_log_mutex);
    g_civet_last_log.clear();
  }
  try {
    http->impl_->server = std::make_unique<CivetServer>(options, &callbacks);
  } catch (const CivetException&) {
    std::lock_guard lock(g_civet_log_mutex);
    std::string why = g_civet_last_log.empty() ? "address in use or not permitted" : g_civet_last_log;
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return make_error("cannot listen on " + listen_address + ": " + why);
  }
  http->impl_->metrics = std::make_unique<MetricsHandler>(std::move(handlers.render_metrics));
  http->impl_->health = std::make_unique<HealthHandler>(std::move(handlers.healthy));
  http->impl_->index = std::make_unique<IndexHandler>();
  http->impl_->server->addHandler("/metrics", *http->impl_->metrics);
  http->impl_->server->addHandler("/healthz", *http->impl_->health);
  http->impl_->server->addHandler("/$", *http->impl_->index);
  return http;
}

HttpServer::~HttpServer() {
  if (impl_ && impl_->server) impl_->server->close();
}

}  // namespace memdiag
