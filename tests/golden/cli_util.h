// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file cli_util.h
/// Running the vmaf-cuda CLI from the golden suite's tests (cli_test.cpp, cli_live_test.cpp).

#include "golden_util.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace vmaf_cuda_test {

inline std::string cli_path() {
    const char* e = std::getenv("VMAF_CUDA_CLI");
    return e ? e : "./tools/vmaf-cuda";
}

inline std::string test_backend() {
    const char* b = std::getenv("VMAF_CUDA_TEST_BACKEND");
    return b ? b : "cpu";
}

struct Proc {
    int status;
    std::string output; // stdout + stderr
};

/// Runs the CLI with `args` through the shell: `before` is shell text in front of it (e.g.
/// "cat f | "), `redirect` follows it (by default stderr joins the captured stdout).
inline Proc run(const std::string& args, const std::string& before = "",
                const std::string& redirect = " 2>&1") {
    const std::string cmd = before + "'" + cli_path() + "' " + args + redirect;
    Proc p{-1, {}};
    FILE* f = popen(cmd.c_str(), "r");
    if (!f) return p;
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) p.output.append(buf.data(), n);
    p.status = pclose(f);
    return p;
}

/// A folder of this process's own under the temporary folder.
inline std::filesystem::path tmp_dir() {
    std::filesystem::path d = std::filesystem::temp_directory_path() /
                              ("vmaf_cuda_cli_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
}

inline std::string case_args(const GoldenCase& c) {
    return "-r '" + c.ref + "' -d '" + c.dist + "' -w " + std::to_string(c.width) + " -h " +
           std::to_string(c.height) + " -p " + std::to_string(c.chroma) + " -b " +
           std::to_string(c.bpc);
}

inline GoldenCase find_case(const std::string& name) {
    for (const auto& k : golden_cases())
        if (k.name == name) return k;
    return {};
}

/// Exit status of a run that ended normally, -1 otherwise.
inline int exit_code(const Proc& p) { return WIFEXITED(p.status) ? WEXITSTATUS(p.status) : -1; }

inline bool has(const Proc& p, const std::string& s) { return p.output.find(s) != std::string::npos; }

/// `p` in single quotes for the shell.
inline std::string q(const std::filesystem::path& p) {
    std::string s(1, '\'');
    s += p.string();
    return s += '\'';
}

/// The whole content of the file `p` ("" when it cannot be read).
inline std::string file_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

} // namespace vmaf_cuda_test
