// SPDX-License-Identifier: BSD-2-Clause-Patent
// Where a log goes (engine/log_file.h, API 5): whole or not at all, the user's path and
// the system's reason in every error, links and devices written through and never
// replaced, "-" and "pipe:N" as descriptors; vmaf_cuda_check_log_path() before the
// first frame; vmaf_cuda_remove_stale_log() for runs that write none.

#include "vmaf_cuda.h"

#include "catch.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

/// A scored 3-frame session of 32x32 (CPU backend) to write logs from.
struct Scored {
    VmafCudaSession* vs = nullptr;
    Scored() {
        VmafCudaSettings s;
        vmaf_cuda_default_settings(&s);
        s.width = s.height = 32;
        s.backend = VMAF_CUDA_BACKEND_CPU;
        char err[256];
        REQUIRE(vmaf_cuda_open(&vs, &s, err, sizeof err) == VMAF_CUDA_OK);
        std::vector<std::uint8_t> ref(32 * 32), dist(32 * 32);
        std::uint32_t x = 12345;
        for (int k = 0; k < 3; ++k) {
            for (std::size_t i = 0; i < ref.size(); ++i) {
                x = x * 1664525u + 1013904223u;
                ref[i] = std::uint8_t(x >> 24);
                dist[i] = std::uint8_t(ref[i] ^ ((x >> 8) & 7));
            }
            VmafCudaPicture r{ref.data(), 32, 0, VMAF_CUDA_MEMORY_HOST, {}, 0, 0};
            VmafCudaPicture d{dist.data(), 32, 0, VMAF_CUDA_MEMORY_HOST, {}, 0, 0};
            REQUIRE(vmaf_cuda_send(vs, &r, &d) == VMAF_CUDA_OK);
        }
        REQUIRE(vmaf_cuda_flush(vs) == VMAF_CUDA_OK);
        VmafCudaFrameScores f;
        while (vmaf_cuda_receive(vs, &f) == VMAF_CUDA_OK) {}
    }
    ~Scored() { vmaf_cuda_close(vs); }
    int write(const std::string& path) {
        return vmaf_cuda_write_log(vs, path.c_str(), VMAF_CUDA_LOG_JSON, 6, NAN);
    }
};

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// A fresh folder under the system's temporary folder.
fs::path fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() /
                       ("vmaf_cuda_log_file_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

bool is_whole_log(const std::string& text) {
    return text.rfind("{\n", 0) == 0 && text.find("\"frames\"") != std::string::npos &&
           text.size() > 2 && text.substr(text.size() - 2) == "}\n";
}

} // namespace

TEST_CASE("a log to a new path or over a regular file: whole, nothing else left", "[api][log]") {
    Scored s;
    const fs::path d = fresh_dir("regular");
    const fs::path p = d / "vmaf.json";
    REQUIRE(s.write(p.string()) == VMAF_CUDA_OK);
    CHECK(is_whole_log(read_file(p)));
    { std::ofstream(p) << "older"; }
    REQUIRE(s.write(p.string()) == VMAF_CUDA_OK);
    CHECK(is_whole_log(read_file(p)));
    CHECK(std::distance(fs::directory_iterator(d), fs::directory_iterator()) == 1);
    fs::remove_all(d);
}

TEST_CASE("a symbolic link stays a link; what it points to gets the log", "[api][log]") {
    Scored s;
    const fs::path d = fresh_dir("link");
    fs::create_symlink("target.json", d / "link.json");
    REQUIRE(s.write((d / "link.json").string()) == VMAF_CUDA_OK);
    CHECK(fs::is_symlink(fs::symlink_status(d / "link.json")));
    CHECK(is_whole_log(read_file(d / "target.json")));
    fs::remove_all(d);
}

TEST_CASE("\"pipe:N\" writes to descriptor N, \"-\" names standard output", "[api][log]") {
    Scored s;
    const fs::path d = fresh_dir("pipe");
    const fs::path p = d / "out.json";
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(s.write("pipe:" + std::to_string(fd)) == VMAF_CUDA_OK);
    ::close(fd);
    CHECK(is_whole_log(read_file(p)));
    // nothing named after the descriptor appears in the working folder
    CHECK(!fs::exists("pipe:" + std::to_string(fd)));
    CHECK(s.write("pipe:x") == VMAF_CUDA_EIO);
    CHECK(std::string(vmaf_cuda_error_message(s.vs)).find("pipe:N needs a file descriptor") !=
          std::string::npos);
    char err[256];
    CHECK(vmaf_cuda_check_log_path("-", err, sizeof err) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_remove_stale_log("-", err, sizeof err) == 0);
    fs::remove_all(d);
}

TEST_CASE("a log that cannot be written: EIO naming the user's path and the reason",
          "[api][log]") {
    Scored s;
    const fs::path d = fresh_dir("errors");
    CHECK(s.write("/dev/full") == VMAF_CUDA_EIO);
    CHECK(std::string(vmaf_cuda_error_message(s.vs)) ==
          "cannot write the log \"/dev/full\": No space left on device");
    const std::string missing = (d / "no_such_dir" / "vmaf.json").string();
    CHECK(s.write(missing) == VMAF_CUDA_EIO);
    std::string m = vmaf_cuda_error_message(s.vs);
    INFO(m);
    CHECK(m.rfind("cannot write the log \"" + missing + "\": ", 0) == 0);
    CHECK(m.find("No such file or directory") != std::string::npos);
    CHECK(s.write(d.string()) == VMAF_CUDA_EIO);
    CHECK(std::string(vmaf_cuda_error_message(s.vs)).find("Is a directory") != std::string::npos);
    CHECK(std::distance(fs::directory_iterator(d), fs::directory_iterator()) == 0);
    fs::remove_all(d);
}

TEST_CASE("vmaf_cuda_check_log_path: refuses what cannot be written, leaves nothing, does not "
          "open a FIFO", "[api][log]") {
    const fs::path d = fresh_dir("check");
    char err[512];
    CHECK(vmaf_cuda_check_log_path((d / "vmaf.json").c_str(), err, sizeof err) == VMAF_CUDA_OK);
    CHECK(std::string(err).empty());
    CHECK(std::distance(fs::directory_iterator(d), fs::directory_iterator()) == 0);
    const std::string missing = (d / "x" / "vmaf.json").string();
    CHECK(vmaf_cuda_check_log_path(missing.c_str(), err, sizeof err) == VMAF_CUDA_EIO);
    CHECK(std::string(err) == "cannot write the log \"" + missing + "\": No such file or directory");
    CHECK(vmaf_cuda_check_log_path(d.c_str(), err, sizeof err) == VMAF_CUDA_EIO);
    // a FIFO without a reader: opening it for writing would block; it is not probed
    REQUIRE(::mkfifo((d / "fifo").c_str(), 0600) == 0);
    CHECK(vmaf_cuda_check_log_path((d / "fifo").c_str(), err, sizeof err) == VMAF_CUDA_OK);
    CHECK(vmaf_cuda_check_log_path(nullptr, err, sizeof err) == VMAF_CUDA_EINVAL);
    fs::remove_all(d);
}

TEST_CASE("vmaf_cuda_remove_stale_log: a regular file only", "[api][log]") {
    const fs::path d = fresh_dir("stale");
    char err[256];
    { std::ofstream(d / "old.json") << "older"; }
    fs::create_symlink("old.json", d / "link.json");
    // a link to a regular file: left alone, and said (2) so the caller can warn
    CHECK(vmaf_cuda_remove_stale_log((d / "link.json").c_str(), err, sizeof err) == 2);
    CHECK(fs::exists(d / "old.json"));
    CHECK(fs::is_symlink(fs::symlink_status(d / "link.json")));
    CHECK(vmaf_cuda_remove_stale_log((d / "old.json").c_str(), err, sizeof err) == 1);
    CHECK(!fs::exists(d / "old.json"));
    CHECK(vmaf_cuda_remove_stale_log((d / "old.json").c_str(), err, sizeof err) == 0);
    CHECK(vmaf_cuda_remove_stale_log((d / "link.json").c_str(), err, sizeof err) == 0); // dangling
    CHECK(vmaf_cuda_remove_stale_log("/dev/null", err, sizeof err) == 0);
    CHECK(vmaf_cuda_remove_stale_log(d.c_str(), err, sizeof err) == 0);
    CHECK(fs::exists("/dev/null"));
    fs::remove_all(d);
}

TEST_CASE("/dev/stdout, /dev/fd/N, /proc/self/fd/N: written through the descriptor, never "
          "truncated", "[api][log]") {
    // `>> file` keeps what the file held: reopening /dev/stdout with O_TRUNC cut it
    Scored s;
    const fs::path d = fresh_dir("devfd");
    const fs::path p = d / "out.txt";
    { std::ofstream(p) << "KEEP\n"; }
    const int fd = ::open(p.c_str(), O_WRONLY | O_APPEND);
    REQUIRE(fd >= 0);
    for (const std::string& name : {"/dev/fd/" + std::to_string(fd), "/proc/self/fd/" + std::to_string(fd)}) {
        INFO(name);
        char err[256];
        CHECK(vmaf_cuda_check_log_path(name.c_str(), err, sizeof err) == VMAF_CUDA_OK);
        REQUIRE(s.write(name) == VMAF_CUDA_OK);
        CHECK(vmaf_cuda_remove_stale_log(name.c_str(), err, sizeof err) == 0);
    }
    ::close(fd);
    const std::string text = read_file(p);
    REQUIRE(text.rfind("KEEP\n", 0) == 0);
    // the two logs follow, whole, one after the other
    const std::size_t second = text.find("{\n  \"version\"", 6);
    REQUIRE(second != std::string::npos);
    CHECK(is_whole_log(text.substr(5, second - 5)));
    CHECK(is_whole_log(text.substr(second)));
    CHECK(fs::is_regular_file(p));
    fs::remove_all(d);
}

TEST_CASE("a log path that is a file this process has open is refused", "[api][log]") {
    // ffmpeg -i in.y4m ... log_path=in.y4m overwrote its own input
    Scored s;
    const fs::path d = fresh_dir("openfile");
    const fs::path in = d / "input.y4m";
    { std::ofstream(in) << "YUV4MPEG2 W32 H32\n"; }
    fs::create_symlink("input.y4m", d / "link.y4m");
    const int fd = ::open(in.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    char err[512];
    for (const fs::path& p : {in, d / "link.y4m"}) {
        INFO(p);
        CHECK(vmaf_cuda_check_log_path(p.c_str(), err, sizeof err) == VMAF_CUDA_EIO);
        CHECK(std::string(err).find("cannot write the log \"" + p.string() +
                                    "\": it is a file this process has open") == 0);
        CHECK(s.write(p.string()) == VMAF_CUDA_EIO);
    }
    ::close(fd);
    CHECK(read_file(in) == "YUV4MPEG2 W32 H32\n");
    // closed again: an ordinary older file, replaced whole
    CHECK(vmaf_cuda_check_log_path(in.c_str(), err, sizeof err) == VMAF_CUDA_OK);
    CHECK(s.write(in.string()) == VMAF_CUDA_OK);
    CHECK(is_whole_log(read_file(in)));
    fs::remove_all(d);
}

TEST_CASE("a descriptor whose file this process also reads is refused", "[api][log]") {
    // vmaf-cuda -r - ... -o /dev/stdin <> ref.y4m; ffmpeg -i in.y4m ... log_path=- >> in.y4m
    Scored s;
    const fs::path d = fresh_dir("fdinput");
    const fs::path in = d / "input.y4m";
    { std::ofstream(in) << "YUV4MPEG2 W32 H32\n"; }
    char err[512];
    const int rw = ::open(in.c_str(), O_RDWR);
    REQUIRE(rw >= 0);
    const std::string rw_name = "pipe:" + std::to_string(rw);
    CHECK(vmaf_cuda_check_log_path(rw_name.c_str(), err, sizeof err) == VMAF_CUDA_EIO);
    CHECK(std::string(err).find("is a file this process also reads") != std::string::npos);
    CHECK(s.write(rw_name) == VMAF_CUDA_EIO);
    ::close(rw);
    const int wr = ::open(in.c_str(), O_WRONLY | O_APPEND), rd = ::open(in.c_str(), O_RDONLY);
    REQUIRE(wr >= 0);
    REQUIRE(rd >= 0);
    const std::string wr_name = "/dev/fd/" + std::to_string(wr);
    CHECK(vmaf_cuda_check_log_path(wr_name.c_str(), err, sizeof err) == VMAF_CUDA_EIO);
    CHECK(s.write(wr_name) == VMAF_CUDA_EIO);
    ::close(rd);
    // not read any more: the log goes through the descriptor, after what the file held
    CHECK(vmaf_cuda_check_log_path(wr_name.c_str(), err, sizeof err) == VMAF_CUDA_OK);
    CHECK(s.write(wr_name) == VMAF_CUDA_OK);
    ::close(wr);
    const std::string text = read_file(in);
    CHECK(text.rfind("YUV4MPEG2 W32 H32\n", 0) == 0);
    CHECK(is_whole_log(text.substr(18)));
    fs::remove_all(d);
}
