// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file log_file.h
/// Where a log goes, and writing it there whole or not at all. One set of rules for
/// every log the library writes (vmaf_cuda_write_log(), the filter's and the CLI's
/// log paths):
///
///  - "-" and "pipe:" are standard output, "pipe:N" file descriptor N (FFmpeg's names),
///    and so are /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N: written through
///    the descriptor, never reopened (which would cut a file redirected with `>>` and
///    write over the process's own output);
///  - a regular file this process has open (an input or output of the run, a redirected
///    standard stream) is refused: the log would overwrite it;
///  - a path that does not exist, or a regular file, is written under a temporary name
///    in the same folder, synced and renamed to the path once complete, so the path
///    holds a whole log or is left as it was;
///  - anything else that exists (a symbolic link, /dev/stdout, a FIFO, a character
///    device) is opened and written through as it is: a link is never replaced by a
///    file, and what it points to gets the text.
///
/// Errors name the user's path and the system's reason (strerror), never only the
/// temporary name.

#include <string>
#include <utility>

namespace vmaf_cuda::engine {

/// Whether `path` names a file descriptor: "-" and "pipe:" (1), "pipe:N" (N),
/// /dev/stdout (1), /dev/stderr (2), /dev/fd/N and /proc/self/fd/N (N). *fd gets the
/// descriptor, or -1 when N is not a number.
bool descriptor_name(const std::string& path, int* fd = nullptr);

/// Whether `path` is a stream rather than a file to be written whole: a descriptor name,
/// or an existing FIFO (opening one for writing waits for its reader, so it is not probed
/// before the first line).
bool is_stream(const std::string& path);

/// How a log path is written (see the file comment).
enum class LogTarget {
    descriptor, ///< "-", "pipe:", "pipe:N": an open file descriptor
    atomic,     ///< missing or a regular file: temporary file, then rename
    direct,     ///< an existing non-regular file or a symbolic link: written through
};

/// The kind of `path`, and for LogTarget::descriptor the descriptor in *fd. Throws
/// Error(VMAF_CUDA_EIO) for an empty path, a directory, or "pipe:" with a bad number.
LogTarget log_target(const std::string& path, int* fd = nullptr);

/// Writes `text` to `path` by the rules above. Throws Error(VMAF_CUDA_EIO) naming
/// `path` and the reason; the path is then untouched (atomic) or holds what was written
/// before the failure (direct, descriptor).
void write_text_file(const std::string& path, const std::string& text);

/// Checks, before any frame, that write_text_file(path, ...) can succeed as far as can
/// be known without writing the log: for LogTarget::atomic, that a temporary file can be
/// created in the path's folder (it is removed again), and that an existing path is not
/// a directory; descriptors and other existing files are not probed (opening a FIFO
/// would wait for its reader). Throws Error(VMAF_CUDA_EIO) naming the path and the reason.
void check_log_path(const std::string& path);

/// What remove_stale_log() found.
enum class StaleLog {
    none = 0,    ///< nothing to remove (nothing there, a device, a FIFO, a descriptor name)
    removed = 1, ///< an older regular file, removed
    link = 2,    ///< a symbolic link to a regular file, left alone (it may hold an older log)
};

/// For a run that writes no log at `path`: removes an older regular file there so it is
/// not taken for this run's log; a link is never removed. Throws Error(VMAF_CUDA_EIO) when
/// the file exists and cannot be removed.
StaleLog remove_stale_log(const std::string& path);

/// A log written line by line as it goes (the NDJSON stream of live QA), for a reader that
/// follows it: never written under a temporary name. Opened at the first line: a
/// descriptor name writes to a duplicate of its descriptor; any other path is created or
/// truncated and written through (a FIFO waits for its reader then). Each line goes out
/// whole in write(2) calls of its own, nothing buffered; when a write fails half-way on a
/// regular file (a full disk), the file is cut back to the lines before, so it only ever
/// holds whole lines.
class LineLog {
public:
    /// `what` names the log in messages, e.g. "NDJSON log".
    LineLog(std::string path, std::string what) : path_(std::move(path)), what_(std::move(what)) {}
    ~LineLog();
    LineLog(const LineLog&) = delete;
    LineLog& operator=(const LineLog&) = delete;

    /// Writes `line` and '\n' (opening the log first). Throws Error(VMAF_CUDA_EIO):
    /// "cannot open the WHAT 'PATH': REASON" or "writing the WHAT 'PATH' failed: REASON;
    /// it holds the lines before this one, and no further lines are written".
    void write_line(std::string line);
    /// Closes it (when open). Throws Error(VMAF_CUDA_EIO) "closing the WHAT 'PATH' failed: ...".
    void close();
    /// The offset after the last line, for a regular file; -1 for a stream (a pipe, a
    /// FIFO, a terminal) or when not open.
    long long position() const;
    /// Cuts a regular file back to `pos` (a position() from before) and writes on from
    /// there. Throws Error(VMAF_CUDA_EIO) naming the path and the reason.
    void cut(long long pos);
    const std::string& path() const { return path_; }

private:
    std::string path_, what_;
    int fd_ = -1;
};

} // namespace vmaf_cuda::engine
