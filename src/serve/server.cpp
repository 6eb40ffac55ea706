#include "serve/server.h"

#include <arpa/inet.h>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdarg>
#include <cstring>
#include <cstdio>
#include <map>
#include <mutex>
#include <netdb.h>
#include <optional>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include <microhttpd.h>

#include "log/log.h"
#include "problems/reference.h"
#include "serve/api_error.h"
#include "serve/eval_call.h"

namespace kbench::serve {
namespace {

// One answer: its status, JSON body and extra headers.
struct Reply {
  int status = 200;
  nlohmann::json body;
  std::vector<std::pair<std::string, std::string>> headers;
};

Reply error_reply(int status, const std::string& message, int retry_after_s = 0) {
  Reply r{status, {{"error", message}, {"status", status}}, {}};
  if (retry_after_s > 0) {
    r.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
    r.body["retry_after_s"] = retry_after_s;
  }
  return r;
}

// Compares a secret in time that does not depend on where the first difference is.
bool same_secret(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() != expected.size();
  for (size_t i = 0; i < expected.size(); ++i) diff |= static_cast<unsigned char>(i < given.size() ? given[i] : 0) ^
                                                       static_cast<unsigned char>(expected[i]);
  return diff == 0;
}

const char* kEndpoints = "POST /v1/eval, GET /v1/health, GET /v1/problems";

// One request on a connection: its body so far and, for an evaluation, its answer once the record
// is ready (the connection is suspended meanwhile, holding no thread).
struct Exchange {
  std::string body;
  bool too_large = false;  // read to its end and dropped, then answered 413
  bool admitted = false;   // an evaluation admitted: its answer is awaited before the server stops
  std::mutex mutex;
  std::optional<Reply> reply;
  bool suspended = false;
};

std::string address_of(const sockaddr* addr) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (addr && addr->sa_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, text, sizeof text);
  else if (addr && addr->sa_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, text, sizeof text);
  return text;
}

// Every connection is a descriptor: the process's soft limit is raised to its hard one where the
// connection limit needs it.
void allow_descriptors(size_t connections) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t wanted = connections + 256;  // and the workers' pipes, the catalog's files
  if (limit.rlim_cur >= wanted) return;
  limit.rlim_cur = std::min(wanted, limit.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < wanted)
    log::warn("this process may open " + std::to_string(limit.rlim_cur) + " files, fewer than --max-connections " +
              std::to_string(connections) + " needs: raise ulimit -n");
}

void log_from_microhttpd(void*, const char* format, va_list args) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, args);
  std::string line(text);
  while (!line.empty() && line.back() == '\n') line.pop_back();
  log::debug("http: " + line);
}

}  // namespace

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

struct Server::Impl {
  ServeOptions options;
  problems::Catalog catalog;
  EvalService service;
  ConnectionGuard connections;
  MHD_Daemon* daemon = nullptr;
  int listening_socket = -1;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<int, size_t> responses;  // by HTTP status
  size_t evaluations_unanswered = 0;  // admitted, answer not yet sent
  bool stop_requested = false;

  explicit Impl(const ServeOptions& o)
      : options(o),
        catalog(problems::Catalog::load(problems::project_root(o.root))),
        service(o.service, catalog),
        connections(o.connections) {
    allow_descriptors(o.connections.max_connections + kReserve);
  }

  ~Impl() {
    if (daemon) MHD_stop_daemon(daemon);
    if (listening_socket >= 0) ::close(listening_socket);
  }

  // Connections past --max-connections still get their refusal (until these are open too; then
  // a new one is closed at once).
  static constexpr size_t kReserve = 64;
  // JSON-escaped sources grow (quotes, backslashes and newlines take two bytes).
  size_t max_body() const { return 2 * options.max_source_bytes + (64 << 10); }
  static constexpr unsigned long long kReadAndDrop = 16;
  Reply too_large_reply() const {
    return error_reply(413, "request body over this server's limit of " + std::to_string(max_body()) +
                                " bytes (sources up to " + std::to_string(options.max_source_bytes) + " bytes)");
  }

  bool start() {
    const unsigned timeout_s = static_cast<unsigned>(std::max(1.0, options.connections.request_deadline_s));
    daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, 0, nullptr,
        nullptr, &Impl::on_request, this,
        MHD_OPTION_LISTEN_SOCKET, listening_socket,
        // A few threads each polling many connections: none ever waits on one client.
        MHD_OPTION_THREAD_POOL_SIZE, 4u,
        MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(options.connections.max_connections + kReserve),
        // Inactivity; the guard's deadline bounds a request that trickles in.
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
        MHD_OPTION_NOTIFY_CONNECTION, &Impl::on_connection, this,
        MHD_OPTION_NOTIFY_COMPLETED, &Impl::on_completed, this,
        MHD_OPTION_EXTERNAL_LOGGER, &log_from_microhttpd, this,
        MHD_OPTION_END);
    if (daemon) listening_socket = -1;  // the daemon's now: closed when it stops
    return daemon != nullptr;
  }

  static void on_connection(void* self, MHD_Connection* c, void** context, MHD_ConnectionNotificationCode code) {
    auto& impl = *static_cast<Impl*>(self);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      const auto* fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
      const auto* addr = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
      *context = impl.connections.opened(fd ? fd->connect_fd : -1, address_of(addr ? addr->client_addr : nullptr));
    } else if (*context) {
      impl.connections.closed(static_cast<ConnectionGuard::Connection*>(*context));
      *context = nullptr;
    }
  }

  static ConnectionGuard::Connection* guarded(MHD_Connection* c) {
    const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? static_cast<ConnectionGuard::Connection*>(info->socket_context) : nullptr;
  }

  static void on_completed(void* self, MHD_Connection* c, void** request, MHD_RequestTerminationCode) {
    auto& impl = *static_cast<Impl*>(self);
    auto* exchange = static_cast<std::shared_ptr<Exchange>*>(*request);
    if (exchange && (*exchange)->admitted) impl.admit(**exchange, false);
    delete exchange;
    *request = nullptr;
    if (auto* guard = guarded(c)) impl.connections.answered(guard);
  }

  MHD_Result send(MHD_Connection* c, const Reply& reply) {
    const std::string text = reply.body.dump() + "\n";
    MHD_Response* response = MHD_create_response_from_buffer(text.size(), const_cast<char*>(text.data()), MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(response, "Content-Type", "application/json");
    for (const auto& [name, value] : reply.headers) MHD_add_response_header(response, name.c_str(), value.c_str());
    {
      // Counted before the answer is written: a client that asks for /v1/health once it has its
      // answer finds that answer counted.
      std::lock_guard<std::mutex> lock(mutex);
      ++responses[reply.status];
    }
    const MHD_Result queued = MHD_queue_response(c, static_cast<unsigned>(reply.status), response);
    MHD_destroy_response(response);
    log::debug("-> " + std::to_string(reply.status));
    return queued;
  }

  static MHD_Result on_request(void* self, MHD_Connection* c, const char* url, const char* method, const char*,
                               const char* upload, size_t* upload_size, void** request) {
    auto& impl = *static_cast<Impl*>(self);
    try {
      return impl.handle(c, url, method, upload, upload_size, request);
    } catch (const std::exception& e) {
      return impl.send(c, error_reply(500, std::string("internal error: ") + e.what()));
    }
  }

  MHD_Result handle(MHD_Connection* c, const std::string& path, const std::string& method, const char* upload,
                    size_t* upload_size, void** request) {
    if (!*request) {  // the headers are in; nothing of the body is read yet
      auto exchange = std::make_shared<Exchange>();
      *request = new std::shared_ptr<Exchange>(exchange);
      auto early = answer_before_body(c, path, method);
      const char* length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
      const unsigned long long announced = length ? std::strtoull(length, nullptr, 10) : 0;
      // A body a little over the limit is read and dropped, so that its client reads the 413 (an
      // answer before the body is read ends the connection, perhaps before the client reads it);
      // one far over it is not read at all.
      if (!early && announced > kReadAndDrop * max_body()) early = too_large_reply();
      if (early) {
        if (auto* guard = guarded(c)) connections.request_received(guard);
        return send(c, *early);
      }
      exchange->too_large = announced > max_body();
      return MHD_YES;
    }
    auto& exchange = **static_cast<std::shared_ptr<Exchange>*>(*request);
    if (*upload_size > 0) {  // a part of POST /v1/eval's body
      if (!exchange.too_large && exchange.body.size() + *upload_size > max_body()) {
        exchange.too_large = true;
        std::string().swap(exchange.body);
      }
      if (!exchange.too_large) exchange.body.append(upload, *upload_size);
      *upload_size = 0;
      return MHD_YES;
    }
    {
      std::lock_guard<std::mutex> lock(exchange.mutex);
      if (exchange.reply) return send(c, *exchange.reply);  // resumed: the record is ready
    }
    if (auto* guard = guarded(c)) connections.request_received(guard);
    if (exchange.too_large) return send(c, too_large_reply());
    return evaluate(c, *static_cast<std::shared_ptr<Exchange>*>(*request));
  }

  // Everything but an evaluation's body is decided from the request line and headers: refusals
  // (over a connection limit, no token) come before a byte of the body is read.
  std::optional<Reply> answer_before_body(MHD_Connection* c, const std::string& path, const std::string& method) {
    const bool health_check = path == "/v1/health" && method == "GET";
    if (const auto* guard = guarded(c); guard && guard->refusal_status && !health_check) {
      auto r = error_reply(guard->refusal_status, guard->refusal, 1);
      r.headers.emplace_back("Connection", "close");
      return r;
    }
    if (!options.token.empty()) {
      const char* given = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
      if (!same_secret(given ? given : "", "Bearer " + options.token)) {
        auto r = error_reply(401, given ? "wrong token" : "this server needs \"Authorization: Bearer <token>\"");
        r.headers.emplace_back("WWW-Authenticate", "Bearer");
        return r;
      }
    }
    if (health_check) return health();
    if (path == "/v1/problems" && method == "GET") {
      const char* level = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "level");
      return problem_list(level);
    }
    if (path == "/v1/eval" && method == "POST") return std::nullopt;
    if (path == "/v1/health" || path == "/v1/problems") {
      auto r = error_reply(405, "use GET here");
      r.headers.emplace_back("Allow", "GET");
      return r;
    }
    if (path == "/v1/eval") {
      auto r = error_reply(405, "use POST with {\"source\": ..., \"level\": ..., \"problem\": ...}");
      r.headers.emplace_back("Allow", "POST");
      return r;
    }
    return error_reply(404, "no such endpoint: " + method + " " + path + " (endpoints: " + kEndpoints + ")");
  }

  MHD_Result evaluate(MHD_Connection* c, const std::shared_ptr<Exchange>& exchange) {
    try {
      const auto call = parse_eval_call(exchange->body, catalog, options.defaults, options.max_source_bytes);
      std::string().swap(exchange->body);
      admit(*exchange, true);  // before the service has it: a drain must wait for its answer too
      try {
        service.submit(call, [exchange, c](nlohmann::json record) {
          std::lock_guard<std::mutex> lock(exchange->mutex);
          // The worker could not evaluate it at all (not the submission's doing): a server error.
          if (record.contains("error"))
            exchange->reply = Reply{500, {{"error", record.value("message", "harness error")}, {"status", 500}, {"record", record}}, {}};
          else
            exchange->reply = Reply{200, std::move(record), {}};
          if (exchange->suspended) MHD_resume_connection(c);  // the handler is called again, and answers
        });
      } catch (...) {
        admit(*exchange, false);
        throw;
      }
    } catch (const ApiError& e) {
      auto r = error_reply(e.status, e.what(), e.retry_after_s);
      if (e.status == 503) r.headers.emplace_back("Connection", "close");
      return send(c, r);
    }
    std::lock_guard<std::mutex> lock(exchange->mutex);
    if (exchange->reply) return send(c, *exchange->reply);  // ready already
    exchange->suspended = true;
    MHD_suspend_connection(c);
    return MHD_YES;
  }

  // Counts the evaluations whose answer is not yet sent (on_completed counts them out).
  void admit(Exchange& exchange, bool admitted) {
    std::lock_guard<std::mutex> lock(mutex);
    exchange.admitted = admitted;
    admitted ? ++evaluations_unanswered : --evaluations_unanswered;
    changed.notify_all();
  }

  Reply health() {
    auto body = summary();
    return {body["status"] == "ok" ? 200 : 503, body, {}};
  }

  nlohmann::json summary() {
    auto body = service.health();
    const auto& b = options.defaults.budgets;
    body["limits"] = {{"max_source_bytes", options.max_source_bytes}, {"max_queue", options.service.max_queue},
                      {"compile_budget", b.compile_s}, {"check_budget", b.correctness_s}, {"timing_budget", b.timing_s},
                      {"host_memory_budget", b.host_memory_gib}, {"host_memory_headroom", b.host_memory_headroom_gib},
                      {"gpu_memory", options.defaults.request.gpu_memory_gib}};
    body["authentication"] = !options.token.empty();
    body["connections"] = connections.health();
    std::lock_guard<std::mutex> lock(mutex);
    body["responses"] = nlohmann::json::object();
    for (const auto& [status, n] : responses) body["responses"][std::to_string(status)] = n;
    return body;
  }

  Reply problem_list(const char* level_text) {
    int level = 0;
    if (level_text) {
      const std::string text = level_text;
      if (text != "1" && text != "2" && text != "3") return error_reply(400, "level must be 1, 2 or 3, not \"" + text + "\"");
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
    return {200, {{"problems", list}}, {}};
  }
};

Server::Server(const ServeOptions& options) : impl_(std::make_unique<Impl>(options)) {}
Server::~Server() = default;

int Server::bind() {
  auto& o = impl_->options;
  const auto fail = [&](const std::string& why) {
    return std::runtime_error("cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + why);
  };
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int e = ::getaddrinfo(o.host.c_str(), std::to_string(o.port).c_str(), &hints, &found); e != 0)
    throw fail(std::string("not an address (") + ::gai_strerror(e) + ")");
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, &::freeaddrinfo);
  // Not inherited by workers (CLOEXEC); non-blocking, as the daemon's threads share it. SO_REUSEADDR
  // only: SO_REUSEPORT would let a second server bind the same port and take half of its requests.
  const int sock = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (sock < 0) throw fail(std::strerror(errno));
  int yes = 1;
  ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (::bind(sock, found->ai_addr, found->ai_addrlen) != 0 || ::listen(sock, SOMAXCONN) != 0) {
    const std::string why = std::strerror(errno);
    ::close(sock);
    throw fail(why + " (in use, or not an address of this machine)");
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(sock, reinterpret_cast<sockaddr*>(&bound), &length);
  impl_->listening_socket = sock;
  return ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

bool Server::run() {
  auto& impl = *impl_;
  std::unique_lock<std::mutex> lock(impl.mutex);
  if (impl.stop_requested) return true;
  if (!impl.start()) return false;
  impl.changed.wait(lock, [&] { return impl.stop_requested; });
  MHD_Daemon* daemon = std::exchange(impl.daemon, nullptr);
  lock.unlock();
  MHD_stop_daemon(daemon);  // closes the listener and every connection
  return true;
}

nlohmann::json Server::health() const { return impl_->summary(); }

void Server::drain_and_stop() {
  auto& impl = *impl_;
  impl.service.drain();
  // Every record is ready; its answer may still be on the way out (bounded: a client that does not
  // read its answer does not hold the server).
  std::unique_lock<std::mutex> lock(impl.mutex);
  impl.changed.wait_for(lock, std::chrono::seconds(30), [&] { return impl.evaluations_unanswered == 0; });
  impl.stop_requested = true;
  impl.changed.notify_all();
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
