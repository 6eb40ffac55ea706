// kbench serve's API, on loopback only: its errors and limits, health and problems, compile-only
// requests against `kbench eval`, `kbench eval --server`, draining on SIGTERM. Servers run in this
// process on a free port (stopped by each test), with the real worker or a stand-in; the [gpu] tests
// evaluate through the real worker on a GPU.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <future>
#include <thread>

#include "fixtures.h"
#include "serve/test_server.h"

#include "catch.h"

using namespace kbench;
using namespace kbench::testing;  // the server and its requests (serve/test_server.h)

namespace {

std::filesystem::path root() { return testing::test_dir().parent_path(); }

// The error message of an error answer (empty when the body is not one).
std::string error_of(const httplib::Result& r) {
  const auto body = nlohmann::json::parse(r->body, nullptr, false);
  return body.is_object() ? body.value("error", "") : "";
}

nlohmann::json health(const TestServer& server) { return nlohmann::json::parse(server.client().Get("/v1/health")->body); }

// Waits (5 s at most) until the server counts `open` connections, the health request's own
// included: connections open and close on the server's side after they do on the client's.
// Waits (at most 30 s: a loaded 2-core machine can take seconds to accept) until the server counts
// `open` connections, health's own included.
void wait_for_open_connections(const TestServer& server, size_t open) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  size_t counted = 0;
  while ((counted = health(server)["connections"]["open"].get<size_t>()) != open && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(counted == open);
}

// Waits (at most 10 s) until the server has `n` evaluations admitted.
void wait_in_flight(const TestServer& server, size_t n) {
  for (int i = 0; i < 500 && health(server)["queue"]["in_flight"] != n; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(health(server)["queue"]["in_flight"] == n);
}

// A stand-in worker that answers every request after `seconds`.
std::string slow_worker(int seconds) {
  return testing::fake_worker("slow", "while next_request; do sleep " + std::to_string(seconds) +
                                          "; reply '{\"record\":{\"verdict\":\"value_mismatch\",\"message\":\"fake\","
                                          "\"problem\":{\"level\":1,\"id\":19},\"submission\":{}}}'; done");
}


// A raw connection to the server from `source` (any 127.x.y.z is this machine): what idle, slow and
// over-the-limit clients are made of. Closed when it goes.
class RawConnection {
 public:
  RawConnection(int port, const std::string& source = "127.0.0.1") : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in from{}, to{};
    from.sin_family = to.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    to.sin_port = htons(static_cast<uint16_t>(port));
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) == 0);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0);
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  void send(const std::string& text) const { REQUIRE(::send(fd_, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size())); }
  // What the server sends until it closes the connection or `seconds` pass.
  std::string receive(double seconds) const {
    std::string text;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (char buf[4096];;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
      pollfd p{fd_, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return text;
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return text + (n == 0 ? "<closed>" : "<reset>");
      text.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
};

int port_of(const TestServer& server) { return std::stoi(server.url().substr(server.url().rfind(':') + 1)); }

const auto kRelu = [] { return root() / "level1" / "19_ReLU.cu"; };
const nlohmann::json kCompileOnly = {{"compile_only", true}};

// Runs kbench with `args`; returns its stdout and sets its exit code.
std::string run_kbench(const std::string& args, int& exit_code) {
  std::string out;
  std::FILE* pipe = ::popen((testing::kbench_exe() + " " + args).c_str(), "r");
  REQUIRE(pipe);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = ::pclose(pipe);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace

TEST_CASE("serve: malformed requests get 400 with a JSON body that names what was wrong", "[serve]") {
  TestServer server(options_for(testing::kbench_exe()));
  const auto relu = read_file(kRelu());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"source\": ", "not valid JSON"},
      {"[1, 2]", "must be a JSON object"},
      {R"({"level": 1, "problem": 19})", "missing field \"source\""},
      {nlohmann::json{{"source", relu}, {"level", "1"}, {"problem", 19}}.dump(), "field \"level\" must be"},
      {nlohmann::json{{"source", relu}, {"level", 1}}.dump(), "missing field \"problem\""},
      {nlohmann::json{{"source", 5}, {"level", 1}, {"problem", 19}}.dump(), "field \"source\" must be a string"},
      {nlohmann::json{{"source", relu}, {"level", 1}, {"problem", 19}, {"sauce", 1}}.dump(), "unknown field \"sauce\""},
      {eval_body(kRelu(), 1, 19, {{"trails", 3}}), "unknown option \"trails\""},
      {eval_body(kRelu(), 1, 19, {{"trials", "3"}}), "option \"trials\" must be an integer"},
      {eval_body(kRelu(), 1, 19, {{"trials", 0}}), "option \"trials\" must be an integer from 1"},
      {eval_body(kRelu(), 1, 19, {{"compat", "upstream"}}), "\"kernelbench-v0.1\" or \"none\""},
      {eval_body(kRelu(), 1, 19, {{"check_budget", 100000}}), "at most 180"},
      {eval_body(kRelu(), 1, 19, nlohmann::json::array()), "\"options\" must be an object"},
  };
  for (const auto& [body, says] : cases) {
    INFO(body.substr(0, 120));
    const auto r = post(server, body);
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(r->get_header_value("Content-Type") == "application/json");
    CHECK_THAT(error_of(r), contains_text(says));
  }
}

TEST_CASE("serve: an unknown problem or endpoint is 404, a wrong method 405", "[serve]") {
  TestServer server(options_for(testing::kbench_exe()));
  auto r = post(server, eval_body(kRelu(), 1, 999));
  CHECK(r->status == 404);
  CHECK_THAT(error_of(r), contains_text("unknown problem: level 1 problem 999"));
  r = post(server, eval_body(kRelu(), 4, 1));
  CHECK(r->status == 404);
  r = server.client().Get("/v2/eval");
  CHECK(r->status == 404);
  CHECK_THAT(error_of(r), contains_text("no such endpoint"));
  r = server.client().Get("/v1/eval");
  CHECK(r->status == 405);
  CHECK(r->get_header_value("Allow") == "POST");
  r = server.client().Post("/v1/health", "", "application/json");
  CHECK(r->status == 405);
}

TEST_CASE("serve: a source over the limit is 413, and so is a request body over the server's", "[serve]") {
  auto options = options_for(testing::kbench_exe());
  options.max_source_bytes = 1000;
  TestServer server(options);
  auto r = post(server, nlohmann::json{{"source", std::string(1001, 'x')}, {"level", 1}, {"problem", 19}}.dump());
  CHECK(r->status == 413);
  CHECK_THAT(error_of(r), contains_text("over this server's limit of 1000 bytes"));
  r = post(server, nlohmann::json{{"source", std::string(200000, 'x')}, {"level", 1}, {"problem", 19}}.dump());
  CHECK(r->status == 413);
  CHECK_THAT(error_of(r), contains_text("request body over"));
}

TEST_CASE("serve: a full queue answers 429 with Retry-After, and the admitted request its record", "[serve]") {
  auto options = options_for(slow_worker(2));
  options.service.max_queue = 1;
  TestServer server(options);
  auto first = std::async(std::launch::async, [&] { return post(server, eval_body(kRelu(), 1, 19, kCompileOnly)); });
  wait_in_flight(server, 1);
  const auto refused = post(server, eval_body(kRelu(), 1, 19, kCompileOnly));
  CHECK(refused->status == 429);
  CHECK(std::stoi(refused->get_header_value("Retry-After")) >= 1);
  CHECK_THAT(error_of(refused), contains_text("queue is full"));
  const auto answered = first.get();
  CHECK(answered->status == 200);
  CHECK(nlohmann::json::parse(answered->body)["verdict"] == "value_mismatch");
  CHECK(health(server)["evaluations"]["refused_queue_full"] == 1);
}

TEST_CASE("serve: with a token, a request without it or with another one is 401", "[serve]") {
  auto options = options_for(testing::kbench_exe());
  options.token = "s3cret";
  TestServer server(options);
  auto r = server.client().Get("/v1/health");
  CHECK(r->status == 401);
  CHECK(r->get_header_value("WWW-Authenticate") == "Bearer");
  CHECK_THAT(error_of(r), contains_text("Authorization: Bearer"));
  r = post(server, eval_body(kRelu(), 1, 19, kCompileOnly), {{"Authorization", "Bearer s3cre"}});
  CHECK(r->status == 401);
  CHECK_THAT(error_of(r), contains_text("wrong token"));
  r = server.client().Get("/v1/health", {{"Authorization", "Bearer s3cret"}});
  CHECK(r->status == 200);
  r = post(server, eval_body(kRelu(), 1, 19, kCompileOnly), {{"Authorization", "Bearer s3cret"}});
  CHECK(r->status == 200);
}

TEST_CASE("serve: health lists the workers and the queue, problems the catalog", "[serve]") {
  TestServer server(options_for(testing::kbench_exe()));
  REQUIRE(post(server, eval_body(kRelu(), 1, 19, kCompileOnly))->status == 200);
  const auto h = health(server);
  CHECK(h["status"] == "ok");
  CHECK(h["version"] == KBENCH_VERSION);
  REQUIRE(h["workers"].size() == 1);
  CHECK(h["workers"][0]["pid"].get<long>() > 0);
  CHECK(h["workers"][0]["evaluations"] == 1);
  CHECK(h["queue"]["in_flight"] == 0);
  CHECK(h["evaluations"]["served"] == 1);
  CHECK(h["responses"]["200"] == 1);
  const auto all = nlohmann::json::parse(server.client().Get("/v1/problems")->body)["problems"];
  CHECK(all.size() == 250);
  const auto level3 = nlohmann::json::parse(server.client().Get("/v1/problems?level=3")->body)["problems"];
  CHECK(level3.size() == 50);
  CHECK(level3[0].contains("exported"));
  CHECK(server.client().Get("/v1/problems?level=9")->status == 400);
}

TEST_CASE("serve: a compile-only request answers what kbench eval --compile-only --json prints", "[serve]") {
  TestServer server(options_for(testing::kbench_exe()));
  for (const auto& [file, level, problem] : {std::tuple{kRelu(), 1, 19},
                                             std::tuple{testing::test_dir() / "fixtures" / "submissions" / "l1_19_compile_error.cu", 1, 19},
                                             std::tuple{testing::test_dir() / "fixtures" / "submissions" / "l3_4_host_error.cu", 3, 4}}) {
    INFO(file.string());
    int exit_code = -1;
    const auto local = nlohmann::json::parse(run_kbench("eval " + file.string() + " --level " + std::to_string(level) +
                                                            " --problem " + std::to_string(problem) + " --compile-only --json",
                                                        exit_code));
    const auto r = post(server, eval_body(file, level, problem, kCompileOnly));
    REQUIRE(r->status == 200);
    const auto remote = nlohmann::json::parse(r->body);
    CHECK(remote["verdict"] == local["verdict"]);
    CHECK(remote["message"] == local["message"]);
    CHECK(remote["problem"] == local["problem"]);
    CHECK(remote["submission"]["hash"] == local["submission"]["hash"]);
    CHECK(remote.value("host", nlohmann::json()) == local.value("host", nlohmann::json()));
    for (const auto* field : {"ok", "arch", "kernels", "options"})
      CHECK(remote["compile"][field] == local["compile"][field]);
    CHECK(remote["serve"]["gpu"] == 0);
  }
}

TEST_CASE("serve: a ModelNew source is evaluated as one, by its name's extension or the format field", "[serve]") {
  TestServer server(options_for(testing::kbench_exe()));
  const auto file = testing::test_dir() / "fixtures" / "modelnew" / "l1_19_syntax_error.py";  // decided at import, on any machine
  int exit_code = -1;
  const auto local = nlohmann::json::parse(run_kbench("eval " + file.string() + " --level 1 --problem 19 --compile-only --json", exit_code));
  REQUIRE(local["submission"]["format"] == "modelnew");
  auto body = nlohmann::json::parse(eval_body(file, 1, 19, kCompileOnly));
  nlohmann::json gpus_used = nlohmann::json::array();
  for (const auto& extra : {nlohmann::json{{"name", "sample.py"}}, nlohmann::json{{"format", "modelnew"}}}) {
    INFO(extra.dump());
    auto request = body;
    request.update(extra);
    const auto r = post(server, request.dump());
    REQUIRE(r->status == 200);
    const auto remote = nlohmann::json::parse(r->body);
    CHECK(remote["submission"]["format"] == "modelnew");
    CHECK(remote["verdict"] == local["verdict"]);
    CHECK_THAT(remote["message"].get<std::string>(), contains_text("SyntaxError: expected ':'"));  // the file's name differs
    gpus_used.push_back(remote["serve"]["gpu"]);
  }
  // Evaluated beside the worker, in the ModelNew spare; the next spare waits in health (on the GPU
  // that served the last one, where a machine has several).
  nlohmann::json worker;
  const auto workers = health(server)["workers"];
  for (const auto& w : workers)
    if (w["device"] == gpus_used.back()) worker = w;
  REQUIRE(worker.is_object());
  REQUIRE(worker["modelnew_spares"].size() >= 1);  // two where the second request found the first still starting
  CHECK(worker["modelnew_spares"][0]["pid"].get<long>() > 0);
  CHECK(worker["modelnew_spares"][0]["pid"] != worker["pid"]);
  // Without either, a source is kbench's format, as the API says: this one has no kbench:host block.
  const auto as_cu = nlohmann::json::parse(post(server, body.dump())->body);
  CHECK(as_cu["submission"]["format"] == "kbench");
  body["format"] = "cuda";
  const auto bad = post(server, body.dump());
  CHECK(bad->status == 400);
  CHECK_THAT(error_of(bad), contains_text("format must be \"kbench\""));
  // kbench eval --server sends the file's name, so a .py goes as a ModelNew.
  int remote_code = -1;
  const auto remote = nlohmann::json::parse(
      run_kbench("eval " + file.string() + " --level 1 --problem 19 --compile-only --json --server " + server.url(), remote_code));
  CHECK(remote["verdict"] == local["verdict"]);
  CHECK(remote_code == exit_code);
}

TEST_CASE("serve: kbench eval --server prints what a local eval prints, with its exit code", "[serve]") {
  TestServer server(options_for(testing::kbench_exe()));
  // Without timing: two timed runs on a GPU never print the same figures.
  for (const auto* extra : {"--compile-only", "--trials 2 --no-timing", "--compile-only --json"}) {
    INFO(extra);
    const std::string args = kRelu().string() + " --level 1 --problem 19 " + extra;
    int local_code = -1, remote_code = -1;
    run_kbench("eval " + args, local_code);  // fills the compile cache, as the server's NVRTC does
    const auto local = run_kbench("eval " + args, local_code);
    const auto remote = run_kbench("eval " + args + " --server " + server.url(), remote_code);
    CHECK(remote_code == local_code);
    if (std::string(extra).find("--json") == std::string::npos) CHECK(remote == local);
    else CHECK(nlohmann::json::parse(remote)["verdict"] == nlohmann::json::parse(local)["verdict"]);
  }
  int code = -1;
  run_kbench("eval " + kRelu().string() + " --level 1 --problem 19 --server " + server.url() + " --check-budget 100000 2>/dev/null",
             code);
  CHECK(code == 2);  // the server's 400, as a usage error
  run_kbench("eval " + kRelu().string() + " --level 1 --problem 19 --server http://127.0.0.1:1 2>/dev/null", code);
  CHECK(code == 2);  // nothing listening
}

TEST_CASE("serve: a worker that dies is replaced for the next request", "[serve]") {
  // Crashes on the request with 7 trials; answers the others.
  const auto worker = testing::fake_worker("dies", R"(while next_request; do
  case "$line" in *'"trials":7'*) kill -KILL $$ ;; esac
  reply '{"record":{"verdict":"value_mismatch","message":"fake","problem":{"level":1,"id":19},"submission":{}}}'
done)");
  TestServer server(options_for(worker));
  auto record = nlohmann::json::parse(post(server, eval_body(kRelu(), 1, 19, {{"compile_only", true}, {"trials", 7}}))->body);
  CHECK(record["verdict"] == "crash");
  record = nlohmann::json::parse(post(server, eval_body(kRelu(), 1, 19, kCompileOnly))->body);
  CHECK(record["verdict"] == "value_mismatch");
  CHECK(record["worker_evaluations"] == 1);  // a fresh process
  CHECK(health(server)["workers"][0]["workers_started"] >= 3);  // the first, its spare, the spare's spare
}

TEST_CASE("serve: draining answers what was admitted, refuses what comes after with 503, then stops", "[serve]") {
  TestServer server(options_for(slow_worker(1)));
  auto admitted = std::async(std::launch::async, [&] { return post(server, eval_body(kRelu(), 1, 19, kCompileOnly)); });
  wait_in_flight(server, 1);
  auto draining = std::async(std::launch::async, [&] { server.server().drain_and_stop(); });
  auto h = server.client().Get("/v1/health");
  for (int i = 0; i < 100 && h && h->status == 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    h = server.client().Get("/v1/health");
  }
  REQUIRE(h);
  CHECK(h->status == 503);
  CHECK(nlohmann::json::parse(h->body)["status"] == "draining");
  const auto refused = post(server, eval_body(kRelu(), 1, 19, kCompileOnly));
  CHECK(refused->status == 503);
  CHECK_THAT(error_of(refused), contains_text("shutting down"));
  CHECK(admitted.get()->status == 200);
  CHECK(draining.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
}

TEST_CASE("serve: the kbench serve command prints where it listens and exits 0 once SIGTERM drained it", "[serve]") {
  int out[2];
  REQUIRE(::pipe(out) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::execl(testing::kbench_exe().c_str(), "kbench", "serve", "--port", "0", "--json", static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(out[1]);
  std::string line;
  pollfd fd{out[0], POLLIN, 0};
  for (char c = 0; line.find('\n') == std::string::npos && ::poll(&fd, 1, 30000) > 0 && ::read(out[0], &c, 1) == 1;)
    line += c;
  const auto listening = nlohmann::json::parse(line, nullptr, false);
  REQUIRE(listening.is_object());
  const int port = listening["port"];
  CHECK(listening["listening"] == "http://127.0.0.1:" + std::to_string(port));
  httplib::Client client("127.0.0.1", port);
  CHECK(client.Get("/v1/health")->status == 200);
  ::kill(pid, SIGTERM);
  int status = -1;
  for (int i = 0; i < 300 && ::waitpid(pid, &status, WNOHANG) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (!WIFEXITED(status)) ::kill(pid, SIGKILL), ::waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  ::close(out[0]);
}

TEST_CASE("serve: idle and slow connections do not keep health from answering", "[serve]") {
  TestServer server(options_for(testing::kbench_exe()));
  const int port = port_of(server);
  // 300 idle connections and 50 that send a request's headers a byte at a time, from 35 addresses
  // (10 each, under the limit per client): the cpp-httplib server gave 30 s without an answer.
  std::vector<std::unique_ptr<RawConnection>> idle, slow;
  for (int i = 0; i < 300; ++i) idle.push_back(std::make_unique<RawConnection>(port, "127.0.1." + std::to_string(i / 10 + 1)));
  for (int i = 0; i < 50; ++i) slow.push_back(std::make_unique<RawConnection>(port, "127.0.2." + std::to_string(i / 10 + 1)));
  auto client = server.client();
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  const std::string header = "GET /v1/health HTTP/1.1\r\nHost: x\r\n";
  for (size_t byte = 0; byte < 20; ++byte) {
    for (auto& c : slow) c->send(header.substr(byte, 1));
    const auto r = client.Get("/v1/health");
    REQUIRE(r);
    CHECK(r->status == 200);
  }
  wait_for_open_connections(server, 351);  // all 350, and health's own: a loaded machine may still be accepting
  CHECK(health(server)["connections"]["refused"] == 0);
}

TEST_CASE("serve: connections over the limits are refused with 429 or 503 and a message, health still answers", "[serve]") {
  auto options = options_for(testing::kbench_exe());
  options.connections.max_per_client = 3;
  options.connections.max_connections = 6;
  TestServer server(options);
  const int port = port_of(server);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 3; ++i) held.push_back(std::make_unique<RawConnection>(port, "127.0.3.1"));
  const std::string problems = "GET /v1/problems HTTP/1.1\r\nHost: x\r\n\r\n";
  {
    RawConnection fourth(port, "127.0.3.1");
    fourth.send(problems);
    const auto answer = fourth.receive(30);  // returns when the server closes it
    CHECK_THAT(answer, contains_text("HTTP/1.1 429"));
    CHECK_THAT(answer, contains_text("connections are open from 127.0.3.1"));
    CHECK_THAT(answer, contains_text("<closed>"));
  }
  wait_for_open_connections(server, 4);  // the three held, and the health request's: the fourth is gone
  for (int i = 0; i < 3; ++i) held.push_back(std::make_unique<RawConnection>(port, "127.0.3.2"));
  wait_for_open_connections(server, 7);
  RawConnection seventh(port, "127.0.3.3");
  seventh.send(problems);
  const auto answer = seventh.receive(30);
  CHECK_THAT(answer, contains_text("HTTP/1.1 503"));
  CHECK_THAT(answer, contains_text("connections open, its limit"));
  RawConnection prober(port, "127.0.3.4");
  prober.send("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK_THAT(prober.receive(5), contains_text("HTTP/1.1 200"));
  CHECK(health(server)["connections"]["refused"].get<size_t>() >= 2);
}

TEST_CASE("serve: a request that does not arrive within the deadline has its connection closed", "[serve]") {
  auto options = options_for(testing::kbench_exe());
  options.connections.request_deadline_s = 1;
  TestServer server(options);
  RawConnection slow(port_of(server));
  const auto t0 = std::chrono::steady_clock::now();
  std::string answer;
  for (const char byte : std::string("GET /v1/health HTTP/1.1\r\n")) {  // a byte every 200 ms: never idle
    slow.send(std::string(1, byte));
    answer = slow.receive(0.2);
    if (!answer.empty()) break;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(answer == "<closed>");
  CHECK(seconds < 3);
  CHECK(health(server)["connections"]["closed_at_deadline"] == 1);
}

TEST_CASE("serve: with a token, a request without it is refused before its body is read", "[serve]") {
  auto options = options_for(testing::kbench_exe());
  options.token = "s3cret";
  TestServer server(options);
  RawConnection c(port_of(server));
  // Headers that announce a megabyte, and no byte of it sent.
  c.send("POST /v1/eval HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n");
  const auto answer = c.receive(5);
  CHECK_THAT(answer, contains_text("HTTP/1.1 401"));
  CHECK_THAT(answer, contains_text("Authorization: Bearer"));
}

TEST_CASE("serve: a submission that kills its own worker gets crash: it dies again on the retry", "[serve]") {
  TestServer server(options_for(testing::kbench_exe()));
  auto body = nlohmann::json::parse(eval_body(testing::test_dir() / "fixtures" / "modelnew" / "l1_19_kills_its_worker.py", 1, 19, kCompileOnly));
  body["format"] = "modelnew";
  const auto r = post(server, body.dump());
  REQUIRE(r->status == 200);
  const auto record = nlohmann::json::parse(r->body);
  CHECK(record["verdict"] == "crash");
  CHECK_THAT(record["message"].get<std::string>(), contains_text("Killed"));
  CHECK_THAT(record["message"].get<std::string>(), contains_text("on a fresh worker as on the first"));
  CHECK(record.contains("retried"));
}

// ---- on a GPU -------------------------------------------------------------------------------------

TEST_CASE("serve: an honest kernel whose worker is killed from outside mid-evaluation gets its own verdict", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  TestServer server(options_for(testing::kbench_exe()));
  const auto gemm = root() / "level2" / "12_Gemm_Multiply_LeakyReLU.cu";
  REQUIRE(post(server, eval_body(gemm, 2, 12, {{"timing_trials", 10}}))->status == 200);  // the problem loaded
  // Enough timed calls for several seconds of timing; killed a second into the request, as the OOM
  // killer or an operator would.
  auto evaluation = std::async(std::launch::async, [&] { return post(server, eval_body(gemm, 2, 12, {{"timing_trials", 20000}})); });
  nlohmann::json worker;
  for (int i = 0; i < 500 && !(worker = health(server)["workers"][0])["busy"].get<bool>(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  REQUIRE(worker["pid"].get<long>() > 0);
  ::kill(static_cast<pid_t>(worker["pid"].get<long>()), SIGKILL);
  const auto r = evaluation.get();
  REQUIRE(r->status == 200);
  const auto record = nlohmann::json::parse(r->body);
  INFO(record.value("retried", nlohmann::json()).dump());
  CHECK(record["verdict"] == "correct");
  REQUIRE(record.contains("retried"));
  CHECK_THAT(record["retried"]["message"].get<std::string>(), contains_text("Killed"));
  std::printf("kbench-note: the worker was killed in stage '%s'\n", record["retried"]["stage"].get<std::string>().c_str());
}

TEST_CASE("serve: an evaluation through the server has the verdict of the same kbench eval", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  const std::vector<std::pair<std::filesystem::path, std::string>> cases = {
      {kRelu(), "correct"}, {testing::test_dir() / "fixtures" / "submissions" / "l1_19_value_mismatch.cu", "value_mismatch"}};
  // The local evaluations first: a server's worker holds the GPU's free memory for its checks.
  std::vector<nlohmann::json> locals;
  for (const auto& [file, verdict] : cases) {
    int code = -1;
    locals.push_back(nlohmann::json::parse(run_kbench("eval " + file.string() + " --level 1 --problem 19 --timing-trials 20 --json", code)));
  }
  TestServer server(options_for(testing::kbench_exe()));
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [file, verdict] = cases[i];
    const auto& local = locals[i];
    const auto r = post(server, eval_body(file, 1, 19, {{"timing_trials", 20}}));
    REQUIRE(r->status == 200);
    const auto remote = nlohmann::json::parse(r->body);
    CHECK(local["verdict"] == verdict);
    CHECK(remote["verdict"] == local["verdict"]);
    for (const auto* rule : {"kbench", "kernelbench"})
      CHECK(remote["verdicts"][rule]["verdict"] == local["verdicts"][rule]["verdict"]);
    CHECK(remote["correctness"]["trials"].size() == local["correctness"]["trials"].size());
    CHECK(remote.contains("timing") == local.contains("timing"));
  }
}

TEST_CASE("serve: a candidate that kills its worker gets its verdict, and the next request a fresh worker", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  TestServer server(options_for(testing::kbench_exe()));
  const auto trap = nlohmann::json::parse(post(server, eval_body(testing::test_dir() / "fixtures" / "adversarial" / "trap.cu", 1, 21))->body);
  CHECK(trap["verdict"] == "runtime_error");
  const auto good = nlohmann::json::parse(
      post(server, eval_body(root() / "level1" / "21_Sigmoid.cu", 1, 21, {{"timing_trials", 20}}))->body);
  CHECK(good["verdict"] == "correct");
  CHECK(good["worker_evaluations"] == 1);
  const auto h = health(server);
  CHECK(h["workers"][0]["loaded"]["problem"] == 21);
  CHECK(h["evaluations"]["served"] == 2);
}

TEST_CASE("serve: a ModelNew in a spare whose Python started ahead gets a cold one's verdict; the worker keeps its problem",
          "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  auto one_gpu = options_for(testing::kbench_exe());
  one_gpu.service.gpus = {0};  // the worker and the spares that health lists first serve every request
  TestServer server(one_gpu);
  const nlohmann::json options = {{"timing_trials", 20}};
  auto evaluate = [&](const std::filesystem::path& file) {
    auto body = nlohmann::json::parse(eval_body(file, 1, 19, options));
    body["name"] = file.filename().string();  // a .py goes as a ModelNew
    const auto r = post(server, body.dump());
    REQUIRE(r->status == 200);
    return nlohmann::json::parse(r->body);
  };
  const auto modelnew = testing::test_dir() / "fixtures" / "modelnew" / "l1_19_relu.py";
  const auto cu_before = evaluate(kRelu());
  const auto cold = evaluate(modelnew);  // its extension built on the compile pool first, where not cached
  for (int i = 0; i < 1200 && !health(server)["workers"][0]["modelnew_spares"].at(0).value("python_started", false); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto warm = evaluate(modelnew);
  const auto cu_after = evaluate(kRelu());
  INFO(warm.value("message", "") << " / " << cold.value("message", ""));
  CHECK(cold["verdict"] == "correct");
  CHECK(cold["worker"]["python_prestarted"] == false);
  CHECK(warm["worker"]["python_prestarted"] == true);
  CHECK(warm["worker"]["python_prestart_wait_ms"] == 0.0);
  // Unless KBENCH_SPARES_PREPARE_GPU=0 (gpu-session.sh's unprepared step), its spare prepared the
  // GPU beside the cold request, for that request's problem: the context, the reference on the GPU
  // and its ops in the snapshot.
  if (!std::getenv("KBENCH_SPARES_PREPARE_GPU") || std::string(std::getenv("KBENCH_SPARES_PREPARE_GPU")) != "0") {
    CHECK(warm["worker"]["gpu_prepared_ahead"] == true);
    CHECK(warm["phases_ms"]["gpu_prepare_ahead"].value("problem", "") == "level1/19_ReLU");
    CHECK(warm["phases_ms"].value("process_snapshot", -1.0) < cold["phases_ms"].value("process_snapshot", 0.0));
    // The cold request's process, killed after its record, had ended long before this request (its
    // spare's Python start was waited for): the spare's wait for it, put off past the import, found
    // it ended.
    CHECK(warm["phases_ms"].value("ending_process_wait", -1.0) >= 0);
  } else {
    CHECK(warm["worker"]["gpu_prepared_ahead"] == false);
  }
  const auto& end = warm["phases_ms"]["runner"]["previous_end"];
  CHECK(end.value("took", -1.0) >= 0);
  CHECK(end.value("took", 0.0) < end.value("killed_before_request", 0.0));
  CHECK(warm["verdict"] == cold["verdict"]);
  for (const auto* rule : {"kbench", "kernelbench"})
    CHECK(warm["verdicts"][rule]["verdict"] == cold["verdicts"][rule]["verdict"]);
  CHECK(warm["process_state"].value("changed", "") == "");
  CHECK(cu_after["verdict"] == "correct");
  CHECK(cu_after["worker_evaluations"] == cu_before["worker_evaluations"].get<int>() + 1);  // never retired by a ModelNew
  std::printf("kbench-note: ModelNew total %.0f ms cold, %.0f ms warm (python_start %.0f ms, then %.0f ms; the GPU prepared "
              "ahead: %s); .cu %.0f ms\n",
              cold["phases_ms"]["total"].get<double>(), warm["phases_ms"]["total"].get<double>(),
              cold["phases_ms"]["python_start"].get<double>(), warm["phases_ms"]["python_start"].get<double>(),
              warm["phases_ms"].value("gpu_prepare_ahead", nlohmann::json()).dump().c_str(),
              cu_after["phases_ms"]["total"].get<double>());
}

TEST_CASE("serve: concurrent clients each get their own verdict", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  TestServer server(options_for(testing::kbench_exe()));
  const auto submissions = testing::test_dir() / "fixtures" / "submissions";
  const std::vector<std::tuple<std::filesystem::path, int, int, std::string>> cases = {
      {kRelu(), 1, 19, "correct"},
      {submissions / "l1_19_value_mismatch.cu", 1, 19, "value_mismatch"},
      {submissions / "l1_19_compile_error.cu", 1, 19, "compile_error"},
      {submissions / "l1_19_illegal_address.cu", 1, 19, "runtime_error"},
      {root() / "level3" / "4_LeNet5.cu", 3, 4, "correct"},
      {submissions / "l3_4_value_mismatch.cu", 3, 4, "value_mismatch"},
      {root() / "level2" / "12_Gemm_Multiply_LeakyReLU.cu", 2, 12, "correct"},
      {submissions / "l2_12_shape_mismatch.cu", 2, 12, "shape_mismatch"},
  };
  std::vector<std::future<nlohmann::json>> clients;
  for (int round = 0; round < 2; ++round)
    for (const auto& [file, level, problem, verdict] : cases)
      clients.push_back(std::async(std::launch::async, [&, file = file, level = level, problem = problem] {
        const auto r = post(server, eval_body(file, level, problem, {{"timing_trials", 10}}));
        return r ? nlohmann::json::parse(r->body) : nlohmann::json{{"verdict", "no answer"}};
      }));
  for (size_t i = 0; i < clients.size(); ++i) {
    const auto record = clients[i].get();
    INFO(std::get<0>(cases[i % cases.size()]).string() << ": " << record.value("message", record.dump().substr(0, 400)));
    CHECK(record.value("verdict", "no verdict") == std::get<3>(cases[i % cases.size()]));
  }
  CHECK(health(server)["evaluations"]["served"] == clients.size());
}
