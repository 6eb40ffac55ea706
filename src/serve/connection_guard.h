// What keeps idle, slow and hostile connections from starving kbench serve's requests. The HTTP
// layer is event-driven (no thread waits on a connection); this bounds what connections may hold:
// how many are open (in all, and per client address), and how long a request may take to arrive
// (headers and body, from the connection's start or its previous answer).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace kbench::serve {

struct ConnectionLimits {
  size_t max_connections = 2048;  // open at once; more are refused (503)
  size_t max_per_client = 256;    // open at once from one address; more are refused (429)
  double request_deadline_s = 30; // to send a request's headers and body; then the connection is closed
};

class ConnectionGuard {
 public:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    int fd = -1;
    std::string client;      // its address
    Clock::time_point since;  // when the request it is sending started (or the connection)
    bool reading = true;      // sending a request (the deadline runs), not waiting for an answer
    bool closing = false;     // closed by the deadline
    int refusal_status = 0;   // over a cap: 503 or 429, and why
    std::string refusal;
  };

  explicit ConnectionGuard(const ConnectionLimits& limits);
  ~ConnectionGuard();  // stops the deadline's sweep
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  // A connection has opened: its state (refusal set when it is over a cap; it then has a short
  // deadline). The HTTP layer must call closed() before it closes `fd`: the sweep shuts down the
  // sockets of connections past their deadline, and must never reach a descriptor reused since.
  Connection* opened(int fd, const std::string& client);
  void closed(Connection* connection);
  void request_received(Connection* connection);  // no deadline while it is answered
  void answered(Connection* connection);          // the deadline runs again, for the next request

  const ConnectionLimits& limits() const { return limits_; }
  nlohmann::json health() const;  // open, refused, closed at the deadline, and the limits

 private:
  void sweep();
  double deadline_s(const Connection& c) const;

  ConnectionLimits limits_;
  mutable std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::map<Connection*, std::unique_ptr<Connection>> open_;
  std::map<std::string, size_t> per_client_;
  size_t refused_ = 0, closed_at_deadline_ = 0;
  std::thread sweeper_;
};

}  // namespace kbench::serve
