// SPDX-License-Identifier: BSD-2-Clause-Patent
// Catch2 v2 (Debian 12: one header) or v3 (Debian 13, Ubuntu 24.04: catch_all.hpp and a
// compiled library); the tests use what both provide.
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif
