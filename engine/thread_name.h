// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// Names the calling thread (Linux: at most 15 characters, as top, /proc/PID/task/*/comm
/// and tools/thread_cpu.py show them), so that the library's workers are told apart
/// from the caller's threads they would otherwise inherit the name of (FFmpeg's filter
/// thread, fc0). No-op elsewhere.

#if defined(__linux__)
#include <pthread.h>
#endif

namespace vmaf_cuda::engine {

inline void name_this_thread(const char* name) {
#if defined(__linux__)
    pthread_setname_np(pthread_self(), name);
#else
    (void)name;
#endif
}

} // namespace vmaf_cuda::engine
