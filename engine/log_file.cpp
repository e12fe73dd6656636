// SPDX-License-Identifier: BSD-2-Clause-Patent
// Writing a log to its path: see log_file.h.

#include "log_file.h"

#include "error.h"
#include "vmaf_cuda.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <dirent.h>
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

/// The process's own descriptors by their file names: /dev/stdout (1), /dev/stderr (2),
/// /dev/fd/N, /proc/self/fd/N (/proc/PID/fd/N of this process): -1 for other paths. Reopening them (with O_TRUNC) would
/// cut the file the descriptor writes to (`>> file`) and write from its start over what
/// the process writes there itself; they are written through the descriptor instead.
int process_descriptor(const std::string& path) {
    if (path == "/dev/stdout") return 1;
    if (path == "/dev/stderr") return 2;
    const std::string own = "/proc/" + std::to_string(long(::getpid())) + "/fd/";
    for (const char* dir : {"/dev/fd/", "/proc/self/fd/", own.c_str()}) {
        const std::size_t n = std::strlen(dir);
        const std::string num = path.rfind(dir, 0) == 0 ? path.substr(n) : "";
        if (!num.empty() && num.size() <= 9 && num.find_first_not_of("0123456789") == std::string::npos)
            return int(std::stol(num));
    }
    return -1;
}

/// process_descriptor() of `path` or of a symbolic link on its way (a link to /dev/stdout
/// or /proc/self/fd/1 is standard output too), following at most 8 links.
int descriptor_behind(std::string path) {
    for (int hop = 0; hop < 8; ++hop) {
        if (const int d = process_descriptor(path); d >= 0) return d;
        char buf[4096];
        const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
        if (n <= 0) return -1;
        const std::string target(buf, std::size_t(n));
        const std::size_t slash = path.rfind('/');
        path = target[0] == '/' || slash == std::string::npos ? target
                                                               : path.substr(0, slash + 1) + target;
    }
    return -1;
}

/// Whether `path` is a regular file this process has open (an input or an output of the
/// run, or what a standard stream is redirected to): writing a log there would destroy it.
bool open_in_process(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    DIR* dir = ::opendir("/proc/self/fd");
    if (!dir) return false;
    const int own = ::dirfd(dir);
    bool found = false;
    while (const dirent* e = ::readdir(dir)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        const int fd = std::atoi(e->d_name);
        struct stat fs {};
        if (fd != own && ::fstat(fd, &fs) == 0 && fs.st_dev == st.st_dev && fs.st_ino == st.st_ino) {
            found = true;
            break;
        }
    }
    ::closedir(dir);
    return found;
}

/// Whether descriptor `fd`, a log's, is a regular file that is also read: opened for
/// reading and writing (`<> file`: an input on stdin), or open on another descriptor of
/// this process (ffmpeg's input file, with stdout appended to it). Standard streams that
/// share one file (`> all.log 2>&1`) are not a conflict.
bool descriptor_is_input(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0 && (flags & O_ACCMODE) == O_RDWR) return true;
    DIR* dir = ::opendir("/proc/self/fd");
    if (!dir) return false;
    const int own = ::dirfd(dir);
    bool found = false;
    while (const dirent* e = ::readdir(dir)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        const int other = std::atoi(e->d_name);
        struct stat os {};
        if (other != own && other != fd && other > 2 && ::fstat(other, &os) == 0 &&
            os.st_dev == st.st_dev && os.st_ino == st.st_ino) {
            found = true;
            break;
        }
    }
    ::closedir(dir);
    return found;
}

/// Refuses a descriptor whose file the process reads too.
void refuse_input_descriptor(const std::string& path, int fd) {
    if (descriptor_is_input(fd))
        throw Error(VMAF_CUDA_EIO, "cannot write the log \"" + path + "\": descriptor " +
                                       std::to_string(fd) + " is a file this process also reads "
                                       "(an input of this run), which the log would overwrite; "
                                       "give the log a path of its own");
}

/// Refuses a path that is a file this process has open.
void refuse_open_file(const std::string& path) {
    if (open_in_process(path))
        throw Error(VMAF_CUDA_EIO, "cannot write the log \"" + path + "\": it is a file this "
                                       "process has open (an input or an output of this run, or "
                                       "a redirected standard stream), which the log would "
                                       "overwrite; give the log a path of its own");
}

} // namespace

bool descriptor_name(const std::string& path, int* fd) {
    if (const int d = descriptor_behind(path); d >= 0) {
        if (fd) *fd = d;
        return true;
    }
    if (!is_descriptor_name(path)) return false;
    const std::string n = path == "-" ? "1" : path.substr(5);
    long v = n.empty() ? 1 : -1;
    if (!n.empty() && n.size() <= 9 && n.find_first_not_of("0123456789") == std::string::npos)
        v = std::stol(n);
    if (fd) *fd = int(v);
    return true;
}

bool is_stream(const std::string& path) {
    if (descriptor_name(path)) return true;
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
        refuse_input_descriptor(path, fd);
        if (!write_all(fd, text)) fail(path, "", errno);
        return;
    case LogTarget::direct: {
        refuse_open_file(path);
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
    refuse_open_file(path);
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
    int fd = -1;
    const LogTarget t = log_target(path, &fd);
    if (t == LogTarget::descriptor) refuse_input_descriptor(path, fd);
    else refuse_open_file(path);
    if (t != LogTarget::atomic) return;
    std::string tmp;
    const int probe = create_temporary(path, &tmp);
    if (probe < 0) fail(path, "", errno);
    ::close(probe);
    ::unlink(tmp.c_str());
}

StaleLog remove_stale_log(const std::string& path) {
    if (path.empty() || descriptor_name(path)) return StaleLog::none;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return StaleLog::none;
    if (S_ISLNK(st.st_mode)) {
        // a link is never removed; say so when it leads to a file that may be taken for
        // this run's log
        struct stat target {};
        return ::stat(path.c_str(), &target) == 0 && S_ISREG(target.st_mode) ? StaleLog::link
                                                                              : StaleLog::none;
    }
    if (!S_ISREG(st.st_mode)) return StaleLog::none;
    if (::unlink(path.c_str()) != 0)
        throw Error(VMAF_CUDA_EIO, "cannot remove the older log \"" + path +
                                       "\": " + std::strerror(errno));
    return StaleLog::removed;
}

LineLog::~LineLog() {
    if (fd_ >= 0) ::close(fd_);
}

void LineLog::write_line(std::string line) {
    if (fd_ < 0) {
        int d = -1;
        if (descriptor_name(path_, &d)) {
            if (d >= 0) refuse_input_descriptor(path_, d);
            fd_ = d >= 0 ? ::fcntl(d, F_DUPFD_CLOEXEC, 0) : -1;
            if (d < 0) errno = EBADF;
        } else {
            refuse_open_file(path_);
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

long long LineLog::position() const {
    struct stat st {};
    if (fd_ < 0 || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    return (long long)::lseek(fd_, 0, SEEK_CUR);
}

void LineLog::cut(long long pos) {
    if (fd_ < 0 || pos < 0) return;
    if (::ftruncate(fd_, off_t(pos)) != 0 || ::lseek(fd_, off_t(pos), SEEK_SET) < 0)
        throw Error(VMAF_CUDA_EIO, "cutting the " + what_ + " '" + path_ + "' back failed: " +
                                       std::strerror(errno));
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
