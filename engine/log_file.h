// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file log_file.h
/// Where a log goes, and writing it there whole or not at all. One set of rules for
/// every log the library writes (vmaf_cuda_write_log(), the filter's and the CLI's
/// log paths):
///
///  - "-" and "pipe:" are standard output, "pipe:N" file descriptor N (FFmpeg's names);
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

namespace vmaf_cuda::engine {

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

/// For a run that writes no log at `path`: removes an older regular file there so it is
/// not taken for this run's log. Returns true when a file was removed; anything else
/// (nothing there, a link, a device, a descriptor name) is left alone. Throws
/// Error(VMAF_CUDA_EIO) when the file exists and cannot be removed.
bool remove_stale_log(const std::string& path);

} // namespace vmaf_cuda::engine
