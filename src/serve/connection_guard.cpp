#include "serve/connection_guard.h"

#include <algorithm>
#include <sys/socket.h>

#include "log/log.h"

namespace kbench::serve {
namespace {

// A refused connection gets its answer as soon as its request arrives; one that sends nothing is
// not kept waiting for it longer than this.
constexpr double kRefusedDeadlineS = 2;
// How often the sweep looks for connections past their deadline.
constexpr auto kSweepEvery = std::chrono::milliseconds(250);

}  // namespace

ConnectionGuard::ConnectionGuard(const ConnectionLimits& limits) : limits_(limits) {
  sweeper_ = std::thread([this] { sweep(); });
}

ConnectionGuard::~ConnectionGuard() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  sweeper_.join();
}

ConnectionGuard::Connection* ConnectionGuard::opened(int fd, const std::string& client) {
  auto c = std::make_unique<Connection>();
  c->fd = fd;
  c->client = client;
  c->since = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t from_client = per_client_[client]++;
  if (open_.size() >= limits_.max_connections) {
    c->refusal_status = 503;
    c->refusal = "this server has " + std::to_string(open_.size()) + " connections open, its limit: try again later";
  } else if (from_client >= limits_.max_per_client) {
    c->refusal_status = 429;
    c->refusal = std::to_string(from_client) + " connections are open from " + client + ", this server's limit per client";
  }
  if (c->refusal_status) ++refused_;
  auto* raw = c.get();
  open_.emplace(raw, std::move(c));
  return raw;
}

void ConnectionGuard::closed(Connection* connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = open_.find(connection);
  if (it == open_.end()) return;
  if (--per_client_[connection->client] == 0) per_client_.erase(connection->client);
  open_.erase(it);
}

void ConnectionGuard::request_received(Connection* connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  connection->reading = false;
}

void ConnectionGuard::answered(Connection* connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  connection->reading = true;
  connection->since = Clock::now();
}

double ConnectionGuard::deadline_s(const Connection& c) const {
  return c.refusal_status ? std::min(kRefusedDeadlineS, limits_.request_deadline_s) : limits_.request_deadline_s;
}

void ConnectionGuard::sweep() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_.wait_for(lock, kSweepEvery, [this] { return stopping_; })) {
    const auto now = Clock::now();
    for (auto& [key, c] : open_) {
      if (!c->reading || c->closing || std::chrono::duration<double>(now - c->since).count() < deadline_s(*c)) continue;
      // Under the mutex, so before closed() lets the HTTP layer close (and the system reuse) the
      // descriptor. The HTTP layer then sees the connection end and closes it as any other.
      ::shutdown(c->fd, SHUT_RDWR);
      c->closing = true;
      ++closed_at_deadline_;
      log::debug("closed a connection from " + c->client + ": no request within " + std::to_string(deadline_s(*c)) + " s");
    }
  }
}

nlohmann::json ConnectionGuard::health() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t busiest = 0;
  for (const auto& [client, n] : per_client_) busiest = std::max(busiest, n);
  return {{"open", open_.size()}, {"clients", per_client_.size()}, {"most_from_one_client", busiest},
          {"refused", refused_}, {"closed_at_deadline", closed_at_deadline_},
          {"limit", limits_.max_connections}, {"limit_per_client", limits_.max_per_client},
          {"request_deadline_s", limits_.request_deadline_s}};
}

}  // namespace kbench::serve
