// The one place that knows which Catch2 is installed: 2.x on Debian, 3.x on the GPU machines.
#pragma once

// Include this header last: libtorch can bring glog, whose CHECK macros would replace Catch's.
#ifdef CHECK
#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#endif

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
using Catch::Approx;  // Catch2 2 has it at global scope
#else
#include <catch2/catch.hpp>
#endif

#include <string>

// Catch2 3 renamed the substring matcher; tests use this name for both.
inline auto contains_text(const std::string& s) {
#if __has_include(<catch2/catch_all.hpp>)
  return Catch::Matchers::ContainsSubstring(s);
#else
  return Catch::Matchers::Contains(s);
#endif
}
