// An HTTP error of kbench serve's API: its status and a message that says what was wrong. The server
// answers it as {"error": message} (plus "retry_after_s" with 429).
#pragma once

#include <stdexcept>
#include <string>

namespace kbench::serve {

struct ApiError : std::runtime_error {
  ApiError(int status, const std::string& message, int retry_after_s = 0)
      : std::runtime_error(message), status(status), retry_after_s(retry_after_s) {}
  int status;
  int retry_after_s;  // 429 and 503: when to try again (0: not said)
};

}  // namespace kbench::serve
