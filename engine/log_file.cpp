// SPDX-License-Identifier: BSD-2-Clause-Patent
// Writing a log to its path: see log_file.h.

#include "log_file.h"

#include "error.h"
#include "vmaf_cuda.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace vmaf_cuda::engine {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
    throw Error(VMAF_CUDA_EIO, "cannot write the log \"" + path + "\": " + what +
                                   (what.empty() ? "" : ": ") + std::strerror(err));
}

/// write(2) until all of `text` is written; false with errno set on failure.
bool write_all(int fd, const std::string& text) {
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) {
            errno = ENOSPC;
            return false;
        }
        p += n;
        left -= std::size_t(n);
    }
    return true;
}

/// A name in the path's folder that no other writer uses (this process's id and a
/// counter; created with O_EXCL).
std::string temporary_name(const std::string& path) {
    static std::atomic<unsigned> counter{0};
    return path + ".tmp" + std::to_string(long(::getpid())) + "-" +
           std::to_string(counter.fetch_add(1));
}

/// Creates the temporary file of `path` (mode 0666 less the umask, as fopen's).
int create_temporary(const std::string& path, std::string* tmp) {
    for (int attempt = 0; attempt < 16; ++attempt) {
        *tmp = temporary_name(path);
        const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

bool is_descriptor_name(const std::string& path) {
    return path == "-" || path.rfind("pipe:", 0) == 0;
}

} // namespace

bool descriptor_name(const std::string& path, int* fd) {
    if (!is_descriptor_name(path)) return false;
    const std::string n = path == "-" ? "1" : path.substr(5);
    long v = n.empty() ? 1 : -1;
    if (!n.empty() && n.size() <= 9 && n.find_first_not_of("0123456789") == std::string::npos)
        v = std::stol(n);
    if (fd) *fd = int(v);
    return true;
}

bool is_stream(const std::string& path) {
    if (is_descriptor_name(path)) return true;
    struct stat st {};
    return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

LogTarget log_target(const std::string& path, int* fd) {
    if (path.empty()) throw Error(VMAF_CUDA_EIO, "cannot write the log: the path is empty");
    int d = -1;
    if (descriptor_name(path, &d)) {
        if (d < 0)
            throw Error(VMAF_CUDA_EIO, "cannot write the log \"" + path +
                                           "\": pipe:N needs a file descriptor number N");
        if (fd) *fd = d;
        return LogTarget::descriptor;
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return LogTarget::atomic;
        fail(path, "", errno);
    }
    if (S_ISDIR(st.st_mode)) fail(path, "", EISDIR);
    return S_ISREG(st.st_mode) ? LogTarget::atomic : LogTarget::direct;
}

void write_text_file(const std::string& path, const std::string& text) {
    int fd = -1;
    switch (log_target(path, &fd)) {
    case LogTarget::descriptor:
        if (!write_all(fd, text)) fail(path, "", errno);
        return;
    case LogTarget::direct: {
        fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) fail(path, "", errno);
        const bool ok = write_all(fd, text);
        const int e = errno;
        if (::close(fd) != 0 && ok) fail(path, "", errno);
        if (!ok) fail(path, "", e);
        return;
    }
    case LogTarget::atomic: break;
    }
    std::string tmp;
    fd = create_temporary(path, &tmp);
    if (fd < 0) fail(path, "cannot create the temporary file \"" + tmp + "\"", errno);
    // write, sync (a full disk or quota can fail only here), close: each is checked
    bool ok = write_all(fd, text) && ::fsync(fd) == 0;
    int e = errno;
    if (::close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        ::unlink(tmp.c_str());
        fail(path, "", e);
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        e = errno;
        ::unlink(tmp.c_str());
        fail(path, "cannot rename the temporary file \"" + tmp + "\" to it", e);
    }
}

void check_log_path(const std::string& path) {
    if (log_target(path) != LogTarget::atomic) return;
    std::string tmp;
    const int fd = create_temporary(path, &tmp);
    if (fd < 0) fail(path, "", errno);
    ::close(fd);
    ::unlink(tmp.c_str());
}

bool remove_stale_log(const std::string& path) {
    if (path.empty() || is_descriptor_name(path)) return false;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    if (::unlink(path.c_str()) != 0)
        throw Error(VMAF_CUDA_EIO, "cannot remove the older log \"" + path +
                                       "\": " + std::strerror(errno));
    return true;
}

LineLog::~LineLog() {
    if (fd_ >= 0) ::close(fd_);
}

void LineLog::write_line(std::string line) {
    if (fd_ < 0) {
        int d = -1;
        if (descriptor_name(path_, &d)) {
            fd_ = d >= 0 ? ::fcntl(d, F_DUPFD_CLOEXEC, 0) : -1;
            if (d < 0) errno = EBADF;
        } else {
            fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        }
        if (fd_ < 0)
            throw Error(VMAF_CUDA_EIO, "cannot open the " + what_ + " '" + path_ + "': " +
                                           std::strerror(errno));
    }
    line += '\n';
    const off_t pos = ::lseek(fd_, 0, SEEK_CUR); // -1 for a pipe
    if (!write_all(fd_, line)) {
        const int e = errno;
        // a regular file keeps whole lines only: cut the part of this one that was written
        if (pos >= 0) (void)!::ftruncate(fd_, pos);
        throw Error(VMAF_CUDA_EIO, "writing the " + what_ + " '" + path_ + "' failed: " +
                                       std::strerror(e) +
                                       "; it holds the lines before this one, and no further "
                                       "lines are written");
    }
}

void LineLog::close() {
    if (fd_ < 0) return;
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0)
        throw Error(VMAF_CUDA_EIO, "closing the " + what_ + " '" + path_ + "' failed: " +
                                       std::strerror(errno));
}

} // namespace vmaf_cuda::engine
