#define CATCH_CONFIG_RUNNER
#include "catch.h"

int main(int argc, char** argv) { return Catch::Session().run(argc, argv); }
