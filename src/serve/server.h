// kbench serve's HTTP front end (libmicrohttpd, event-driven: an idle or slow connection holds no
// thread): POST /v1/eval, GET /v1/health, GET /v1/problems, every answer a JSON body, every error
// one that says what was wrong.
#pragma once

#include <memory>
#include <string>

#include "sandbox/eval_options.h"
#include "serve/connection_guard.h"
#include "serve/eval_service.h"

namespace kbench::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                   // 0: any free port
  std::string token;                 // not empty: every request needs "Authorization: Bearer <token>"
  size_t max_source_bytes = 1 << 20;
  std::string root;                  // the kbench checkout ("" = default)
  sandbox::EvalSettings defaults;    // what every request starts from; its budgets are the ceilings
  ServiceOptions service;
  ConnectionLimits connections;
};

class Server {
 public:
  explicit Server(const ServeOptions& options);  // loads the catalog, starts the workers
  ~Server();

  // Binds the listening socket and returns its port; throws std::runtime_error when it cannot.
  int bind();
  // Serves until drain_and_stop(); returns once the listener is closed and every evaluation
  // answered: true, or false when the HTTP daemon could not start.
  bool run();
  // New requests get 503; every admitted evaluation finishes and is answered; then run() returns.
  void drain_and_stop();
  // What GET /v1/health answers: workers, queue, evaluations served, HTTP answers by status.
  nlohmann::json health() const;

 private:
  struct Impl;  // keeps libmicrohttpd out of this header
  std::unique_ptr<Impl> impl_;
};

bool is_loopback(const std::string& host);

// `kbench serve`: binds, prints where it listens (one JSON line with `json`), serves until SIGTERM
// or SIGINT, then drains and prints what it served (with `json`: {"drained": <health>}); a second
// signal ends it at once. Returns the exit code.
int serve_until_signalled(const ServeOptions& options, bool json);

}  // namespace kbench::serve
