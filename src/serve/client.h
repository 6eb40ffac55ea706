// `kbench eval --server URL`: an evaluation sent to a running kbench serve.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kbench::serve {

// POSTs `body` ({"source", "level", "problem", "options", "name"}) to <url>/v1/eval and returns the
// record. Throws std::runtime_error with one line: the server could not be reached, or answered
// with an error (its status and message; how long to wait when it is busy).
nlohmann::json evaluate_remote(const std::string& url, const std::string& token, const nlohmann::json& body);

}  // namespace kbench::serve
