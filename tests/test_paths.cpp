// The paths of this build that tests need (see fixtures.h), compiled here alone.
#include "fixtures.h"

namespace kbench::testing {

std::filesystem::path test_dir() { return KBENCH_TEST_DIR; }
std::string kbench_exe() { return KBENCH_EXE; }

}  // namespace kbench::testing
