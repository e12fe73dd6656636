// SPDX-License-Identifier: BSD-2-Clause-Patent
// Catch2 main shared by the test executables (v2: the runner is compiled here; v3: from
// its library).
#define CATCH_CONFIG_RUNNER
#include "catch.hpp"

int main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
