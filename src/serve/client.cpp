#include "serve/client.h"

#include <stdexcept>

#include <httplib.h>

namespace kbench::serve {

nlohmann::json evaluate_remote(const std::string& url, const std::string& token, const nlohmann::json& body) {
  // "http://host:port" with an optional path prefix (a server behind a proxy at /kbench).
  const auto scheme_end = url.find("://");
  const auto path_start = url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  const std::string base = url.substr(0, path_start);
  std::string prefix = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();

  httplib::Client client(base);
  if (!client.is_valid()) throw std::runtime_error("not a server URL: " + url + " (e.g. http://127.0.0.1:8000)");
  client.set_connection_timeout(10);
  // A request waits in the server's queue, then runs under its budgets (minutes at most).
  client.set_read_timeout(3600);
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  const auto response = client.Post(prefix + "/v1/eval", headers, body.dump(), "application/json");
  if (!response) {
    const auto error = response.error();
    throw std::runtime_error("cannot reach " + url + ": " +
                             (error == httplib::Error::Connection ? "nothing answers there (is kbench serve running?)"
                                                                  : httplib::to_string(error)));
  }

  const auto answer = nlohmann::json::parse(response->body, nullptr, false);
  if (response->status == 200 && answer.is_object() && answer.contains("verdict")) return answer;
  std::string message = answer.is_object() ? answer.value("error", "") : "";
  if (message.empty()) message = response->body.substr(0, 200);
  std::string what = "server " + url + " answered " + std::to_string(response->status) + ": " + message;
  if (response->has_header("Retry-After")) what += " (retry after " + response->get_header_value("Retry-After") + " s)";
  throw std::runtime_error(what);
}

}  // namespace kbench::serve
