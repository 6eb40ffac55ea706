#define CATCH_CONFIG_RUNNER
#include "catch.h"
#include "fixtures.h"

int main(int argc, char** argv) {
  const int failed = Catch::Session().run(argc, argv);
  kbench::testing::remove_tree(kbench::testing::scratch_root());
  return failed;
}
