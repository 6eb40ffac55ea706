// A kbench serve in the test process, on a free loopback port, and the requests the tests send it:
// shared by the serve tests and the GPU fixture tests, which evaluate the same files through it.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "sandbox/eval_options.h"
#include "serve/server.h"

namespace kbench::testing {

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline serve::ServeOptions options_for(const std::string& worker_exe) {
  serve::ServeOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.defaults = sandbox::default_eval_settings();
  o.service.worker_exe = worker_exe;
  o.service.compile_threads = 2;
  return o;
}

// A kbench serve in this process on a free loopback port, drained and stopped when it goes.
class TestServer {
 public:
  explicit TestServer(const serve::ServeOptions& options) : server_(options), port_(server_.bind()) {
    thread_ = std::thread([this] { server_.run(); });
  }
  ~TestServer() {
    server_.drain_and_stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(300);
    return c;
  }
  serve::Server& server() { return server_; }

 private:
  serve::Server server_;
  int port_;
  std::thread thread_;
};

inline std::string eval_body(const std::filesystem::path& file, int level, int problem,
                             const nlohmann::json& options = nlohmann::json::object()) {
  return nlohmann::json{{"source", read_file(file)}, {"level", level}, {"problem", problem}, {"options", options}}.dump();
}

inline httplib::Result post(const TestServer& server, const std::string& body, const httplib::Headers& headers = {}) {
  return server.client().Post("/v1/eval", headers, body, "application/json");
}

}  // namespace kbench::testing
