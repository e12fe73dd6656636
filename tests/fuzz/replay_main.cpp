// SPDX-License-Identifier: BSD-2-Clause-Patent
// Runs a fuzz harness's LLVMFuzzerTestOneInput once on each input file, without
// libFuzzer: how every build replays the seed corpus (tests/fuzz/corpus/<harness>/) and
// the inputs that found bugs (tests/fuzz/regression/<harness>/). Each input runs in a
// child process (a crash, a sanitizer report, a leak or a timeout fails that input only
// and is named); inputs listed in tests/fuzz/known-failures.txt are findings in code
// this harness does not fix, reported and expected to fail until fixed: they are shown
// as KNOWN, and one that passes fails the run (remove its line).
//
//   fuzz_<harness>_replay [--known LIST] [--timeout S] PATH...   (files or folders; a
//   folder that does not exist holds nothing)

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// "HARNESS/FILE" -> reason, from the known-failures list ('#' comments, blank lines).
std::map<std::string, std::string> read_known(const std::string& path) {
    std::map<std::string, std::string> known;
    std::ifstream f(path);
    if (!f) {
        std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
        std::exit(2);
    }
    for (std::string line; std::getline(f, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream in(line);
        std::string key, reason;
        in >> key;
        std::getline(in >> std::ws, reason);
        known[key] = reason;
    }
    return known;
}

// What happened to a child: "" when it exited 0.
std::string outcome(int status, unsigned timeout) {
    if (WIFEXITED(status))
        return WEXITSTATUS(status) == 0 ? "" : "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        if (WTERMSIG(status) == SIGALRM) return "timeout (" + std::to_string(timeout) + " s)";
        return std::string("signal ") + strsignal(WTERMSIG(status));
    }
    return "unknown wait status";
}

} // namespace

int main(int argc, char** argv) {
    std::map<std::string, std::string> known;
    unsigned timeout = 60;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--known" && i + 1 < argc) {
            known = read_known(argv[++i]);
        } else if (a == "--timeout" && i + 1 < argc) {
            timeout = unsigned(std::strtoul(argv[++i], nullptr, 10));
        } else if (fs::is_directory(a)) {
            std::vector<std::string> in_dir;
            for (const auto& e : fs::directory_iterator(a)) {
                const std::string name = e.path().filename().string();
                if (e.is_regular_file() && name[0] != '.' && name.rfind("README", 0) != 0)
                    in_dir.push_back(e.path().string());
            }
            std::sort(in_dir.begin(), in_dir.end());
            files.insert(files.end(), in_dir.begin(), in_dir.end());
        } else if (fs::is_regular_file(a)) {
            files.push_back(a);
        } else if (!fs::exists(a)) {
            std::printf("replay: no %s (nothing to replay there)\n", a.c_str());
        } else {
            std::fprintf(stderr, "replay: %s is neither a file nor a folder\n", a.c_str());
            return 2;
        }
    }
    if (files.empty()) {
        std::fprintf(stderr, "replay: no inputs\n");
        return 2;
    }
    unsigned ok = 0, failed = 0, known_failed = 0;
    for (const std::string& path : files) {
        // the list names inputs by their last two path components: HARNESS/FILE
        const fs::path p(path);
        const std::string key = p.parent_path().filename().string() + "/" + p.filename().string();
        const auto k = known.find(key);
        std::fflush(nullptr);
        const pid_t pid = fork();
        if (pid < 0) {
            std::perror("replay: fork");
            return 2;
        }
        if (pid == 0) {
            if (k != known.end() && std::freopen("/dev/null", "w", stderr) == nullptr) std::exit(3);
            alarm(timeout);
            const std::vector<std::uint8_t> data = read_file(path);
            LLVMFuzzerTestOneInput(data.data(), data.size());
            std::exit(0);  // exit, not _exit: LeakSanitizer checks at exit
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        const std::string what = outcome(status, timeout);
        if (k != known.end()) {
            if (what.empty()) {
                std::printf("FAIL %s: listed in known-failures.txt but passes now: remove its line\n",
                            path.c_str());
                ++failed;
            } else {
                std::printf("KNOWN %s: %s (%s)\n", path.c_str(), what.c_str(), k->second.c_str());
                ++known_failed;
            }
        } else if (what.empty()) {
            ++ok;
        } else {
            std::printf("FAIL %s: %s\n", path.c_str(), what.c_str());
            ++failed;
        }
    }
    std::printf("replayed %zu inputs: %u ok, %u known failures, %u failed\n", files.size(), ok,
                known_failed, failed);
    return failed ? 1 : 0;
}
