#include "serve/server.h"

#include <atomic>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <pthread.h>
#include <sys/socket.h>
#include <thread>

#include <httplib.h>

#include "log/log.h"
#include "problems/reference.h"
#include "serve/api_error.h"
#include "serve/eval_call.h"

namespace kbench::serve {
namespace {

using httplib::Request;
using httplib::Response;
using HandlerResponse = httplib::Server::HandlerResponse;

void send_json(Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump() + "\n", "application/json");
}

void send_error(Response& res, int status, const std::string& message, int retry_after_s = 0) {
  nlohmann::json body = {{"error", message}, {"status", status}};
  if (retry_after_s > 0) {
    res.set_header("Retry-After", std::to_string(retry_after_s));
    body["retry_after_s"] = retry_after_s;
  }
  send_json(res, status, body);
}

// Compares a secret in time that does not depend on where the first difference is.
bool same_secret(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() != expected.size();
  for (size_t i = 0; i < expected.size(); ++i) diff |= static_cast<unsigned char>(i < given.size() ? given[i] : 0) ^
                                                       static_cast<unsigned char>(expected[i]);
  return diff == 0;
}

const char* kEndpoints = "POST /v1/eval, GET /v1/health, GET /v1/problems";

}  // namespace

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

struct Server::Impl {
  ServeOptions options;
  problems::Catalog catalog;
  EvalService service;
  httplib::Server http;
  std::mutex mutex;
  std::map<int, size_t> responses;  // by HTTP status
  std::atomic<bool> running{false}, stop_requested{false};
  int listening_socket = -1;

  explicit Impl(const ServeOptions& o)
      : options(o), catalog(problems::Catalog::load(problems::project_root(o.root))), service(o.service, catalog) {
    // Every admitted evaluation holds a connection's thread until its record is ready; the rest
    // answer health checks and refusals while the queue is full.
    const size_t threads = o.service.max_queue + 16;
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    // SO_REUSEADDR only: httplib's default SO_REUSEPORT would let a second server bind the same
    // port and silently take half of its requests. Not inherited by workers (FD_CLOEXEC).
    http.set_socket_options([this](int sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      ::fcntl(sock, F_SETFD, FD_CLOEXEC);
      listening_socket = sock;  // the last one tried is the one bound
    });
    // JSON-escaped sources grow (quotes, backslashes and newlines take two bytes).
    http.set_payload_max_length(2 * o.max_source_bytes + (64 << 10));
    http.set_keep_alive_max_count(1000);
    routes();
  }

  void routes() {
    http.set_pre_routing_handler([this](const Request& req, Response& res) -> HandlerResponse {
      if (options.token.empty() || same_secret(req.get_header_value("Authorization"), "Bearer " + options.token))
        return HandlerResponse::Unhandled;
      res.set_header("WWW-Authenticate", "Bearer");
      send_error(res, 401, req.has_header("Authorization") ? "wrong token" : "this server needs \"Authorization: Bearer <token>\"");
      return HandlerResponse::Handled;
    });
    http.Post("/v1/eval", [this](const Request& req, Response& res) { eval(req, res); });
    http.Get("/v1/health", [this](const Request&, Response& res) { health(res); });
    http.Get("/v1/problems", [this](const Request& req, Response& res) { problem_list(req, res); });
    for (const auto* path : {"/v1/health", "/v1/problems"})
      http.Post(path, [](const Request&, Response& res) {
        res.set_header("Allow", "GET");
        send_error(res, 405, "use GET here");
      });
    http.Get("/v1/eval", [](const Request&, Response& res) {
      res.set_header("Allow", "POST");
      send_error(res, 405, "use POST with {\"source\": ..., \"level\": ..., \"problem\": ...}");
    });
    // Errors httplib answers itself (no route, a body over the limit, a malformed request) get a
    // JSON body too; the handlers' own errors have theirs.
    http.set_error_handler(httplib::Server::HandlerWithResponse([this](const Request& req, Response& res) {
      if (!res.body.empty()) return HandlerResponse::Unhandled;
      std::string message = "HTTP status " + std::to_string(res.status);
      if (res.status == 404) message = "no such endpoint: " + req.method + " " + req.path + " (endpoints: " + kEndpoints + ")";
      if (res.status == 413)
        message = "request body over this server's limit of " + std::to_string(2 * options.max_source_bytes + (64 << 10)) +
                  " bytes (sources up to " + std::to_string(options.max_source_bytes) + " bytes)";
      if (res.status == 400) message = "malformed HTTP request";
      send_error(res, res.status, message);
      return HandlerResponse::Handled;
    }));
    http.set_exception_handler([](const Request&, Response& res, std::exception_ptr error) {
      std::string what = "unknown exception";
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      send_error(res, 500, "internal error: " + what);
    });
    // Counted before the response is written (the logger runs after): a client that asks for
    // /v1/health once it has its answer finds that answer counted.
    http.set_post_routing_handler([this](const Request&, Response& res) {
      std::lock_guard<std::mutex> lock(mutex);
      ++responses[res.status];
    });
    http.set_logger([](const Request& req, const Response& res) {
      log::debug(req.method + " " + req.path + " -> " + std::to_string(res.status));
    });
  }

  void eval(const Request& req, Response& res) {
    try {
      auto record = service.submit(parse_eval_call(req.body, catalog, options.defaults, options.max_source_bytes)).get();
      // The worker could not evaluate it at all (not the submission's doing): a server error.
      if (record.contains("error"))
        return send_json(res, 500, {{"error", record.value("message", "harness error")}, {"status", 500}, {"record", record}});
      send_json(res, 200, record);
    } catch (const ApiError& e) {
      if (e.status == 503) res.set_header("Connection", "close");
      send_error(res, e.status, e.what(), e.retry_after_s);
    }
  }

  void health(Response& res) {
    const auto body = summary();
    send_json(res, body["status"] == "ok" ? 200 : 503, body);
  }

  nlohmann::json summary() {
    auto body = service.health();
    const auto& b = options.defaults.budgets;
    body["limits"] = {{"max_source_bytes", options.max_source_bytes}, {"max_queue", options.service.max_queue},
                      {"compile_budget", b.compile_s}, {"check_budget", b.correctness_s}, {"timing_budget", b.timing_s},
                      {"host_memory_budget", b.host_memory_gib}, {"gpu_memory", options.defaults.request.gpu_memory_gib}};
    body["authentication"] = !options.token.empty();
    std::lock_guard<std::mutex> lock(mutex);
    body["responses"] = nlohmann::json::object();
    for (const auto& [status, n] : responses) body["responses"][std::to_string(status)] = n;
    return body;
  }

  void problem_list(const Request& req, Response& res) {
    int level = 0;
    if (req.has_param("level")) {
      const auto text = req.get_param_value("level");
      if (text != "1" && text != "2" && text != "3") return send_error(res, 400, "level must be 1, 2 or 3, not \"" + text + "\"");
      level = std::stoi(text);
    }
    nlohmann::json list = nlohmann::json::array();
    for (const auto& p : catalog.all()) {
      if (level && p.level != level) continue;
      auto entry = problems::to_json(p);
      entry["exported"] = !problems::needs_newer_torch(p) &&
                          std::filesystem::exists(problems::archive_path(p, problems::libtorch_version()));
      list.push_back(entry);
    }
    send_json(res, 200, {{"problems", list}});
  }
};

Server::Server(const ServeOptions& options) : impl_(std::make_unique<Impl>(options)) {}
Server::~Server() = default;

int Server::bind() {
  auto& o = impl_->options;
  const int port = o.port == 0 ? impl_->http.bind_to_any_port(o.host) : (impl_->http.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0)
    throw std::runtime_error("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                             " (in use, or not an address of this machine)");
  // Debian's cpp-httplib listens with a backlog of 5: 32 clients connecting at once had some
  // connections reset before any thread took them. Listening again sets a larger one.
  ::listen(impl_->listening_socket, SOMAXCONN);
  return port;
}

bool Server::run() {
  impl_->running = true;
  const bool served = impl_->stop_requested || impl_->http.listen_after_bind();
  impl_->running = false;
  return served;
}

nlohmann::json Server::health() const { return impl_->summary(); }

void Server::drain_and_stop() {
  impl_->service.drain();
  impl_->stop_requested = true;
  // A stop before the listener runs would be lost: wait for it (run() checks the request first).
  while (impl_->running && !impl_->http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->http.stop();
}

int serve_until_signalled(const ServeOptions& options, bool json) {
  // One thread takes SIGTERM and SIGINT (sigwait); blocked here, before any thread starts, so that
  // every thread inherits the mask and none is interrupted by them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  if (!is_loopback(options.host) && options.token.empty())
    log::warn("listening on " + options.host + " without --token: anyone who can reach this port can run code on its GPUs");

  Server server(options);
  const int port = server.bind();
  const std::string host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  const std::string url = "http://" + host + ":" + std::to_string(port);
  if (json) std::printf("%s\n", nlohmann::json{{"listening", url}, {"port", port}}.dump().c_str());
  else std::printf("kbench serve: listening on %s (POST /v1/eval; SIGTERM or Ctrl-C drains and stops)\n", url.c_str());
  std::fflush(stdout);

  std::atomic<bool> signalled{false};
  std::thread signals([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    if (!signalled.exchange(true))
      log::info(std::string(strsignal(signal)) + ": refusing new requests, finishing the admitted ones");
    std::thread([&] {
      int again = 0;
      sigwait(&stop_signals, &again);
      log::warn("second signal: exiting now; the evaluations in progress get no answer");
      std::_Exit(1);  // workers end with the threads that started them (PR_SET_PDEATHSIG)
    }).detach();
    server.drain_and_stop();
  });
  const bool listened = server.run();
  if (!signalled.exchange(true)) pthread_kill(signals.native_handle(), SIGTERM);  // run() failed: end that thread
  signals.join();
  if (!listened) throw std::runtime_error("the server stopped listening on " + url);
  const auto served = server.health();
  if (json) std::printf("%s\n", nlohmann::json{{"drained", served}}.dump().c_str());
  else std::printf("kbench serve: drained after %zu evaluations, exiting\n", served["evaluations"]["served"].get<size_t>());
  return 0;
}

}  // namespace kbench::serve
