/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * Live QA helpers of the vmaf_cuda filter (issue 12): rolling-window pooling, the
 * streaming NDJSON log, the SEI payload. Plain C (stdio, math), no FFmpeg header: the
 * filter glue in vf_vmaf_cuda.c moves the results onto AVFrames, and tests/api/live_test.cpp
 * tests these functions directly.
 *
 * Exactness of the window values (all doubles):
 *   mean          = S / n, where S is the sum of the window's n values rounded once to
 *                   the nearest double (ties to even): what Python's math.fsum() returns
 *                   for the same values. Kept exact under additions and removals
 *                   (Shewchuk's non-overlapping partials, as math.fsum), so O(1) per frame
 *                   whatever the window length. It can differ from a left-to-right double
 *                   sum of the same values by that sum's rounding error (the sequential sum
 *                   of a sliding window cannot be updated in O(1)).
 *   harmonic_mean = n / T - 1, T the exactly rounded sum of the terms 1.0 / (v + 1.0)
 *                   (each term computed in double, as libvmaf's).
 *   min, max      = monotonic deques, NaN ignored unless every value is NaN.
 *   percN         = nearest rank: the value at rank max(1, ceil(N * n / 100)) of the
 *                   window sorted ascending (NaN last), from an order-statistic treap
 *                   (O(log n)); the same definition as the end-of-stream pool (pooling.h).
 * A window holding NaN or an infinity has mean and harmonic_mean NaN or +-inf (as the
 * IEEE sum of the values would).
 */
#ifndef VMAF_CUDA_LIVE_H
#define VMAF_CUDA_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <vmaf_cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The UUID of the SEI user data unregistered message (AV_FRAME_DATA_SEI_UNREGISTERED)
 *  that sei=1 attaches: 0f45043e-7bf6-415b-bbff-2b7dcf51213c. */
#define VMAF_CUDA_LIVE_SEI_UUID                                                        \
    { 0x0f, 0x45, 0x04, 0x3e, 0x7b, 0xf6, 0x41, 0x5b,                                  \
      0xbb, 0xff, 0x2b, 0x7d, 0xcf, 0x51, 0x21, 0x3c }
extern const uint8_t vmaf_cuda_live_sei_uuid[16];

/* ------------------------------------------------------------ exact running sum */

/** Exact sum of doubles under additions and removals (math.fsum's partials). */
typedef struct VmafLiveSum {
    double *p;          /**< non-overlapping partials, increasing magnitude */
    size_t n, cap;
    int64_t nan, pinf, ninf; /**< non-finite values, counted apart */
} VmafLiveSum;

/** Adds x (sign > 0) or removes a value added before (sign < 0). <0: out of memory. */
int vmaf_live_sum_add(VmafLiveSum *s, double x, int sign);
/** The sum rounded once to double (math.fsum's result); NaN / +-inf with non-finite values. */
double vmaf_live_sum_value(const VmafLiveSum *s);
void vmaf_live_sum_free(VmafLiveSum *s);

/* ------------------------------------------------------------ window */

/** What a window reports (count 0: empty, values NaN). */
typedef struct VmafLiveStats {
    size_t count;
    double min, max, mean, harmonic_mean, perc;
} VmafLiveStats;

typedef struct VmafLiveEntry {
    int64_t t;          /**< time key (ticks) */
    uint64_t seq;       /**< push number */
    double v;
    int32_t node;       /**< its treap node (-1: none) */
} VmafLiveEntry;

typedef struct VmafLiveRing {
    VmafLiveEntry *e;
    size_t head, count, cap;
} VmafLiveRing;

typedef struct VmafLiveTreapNode {
    double v;
    uint64_t seq;
    uint32_t prio;
    int32_t l, r;
    uint32_t size;
} VmafLiveTreapNode;

typedef struct VmafLiveWindow {
    size_t max_frames;      /**< >0: the last max_frames values */
    int64_t duration;       /**< max_frames == 0: the values with t > t_last - duration */
    unsigned perc;          /**< 0, or the percentile to report (1..100) */
    VmafLiveRing values, min_dq, max_dq;
    VmafLiveSum sum, inv_sum;
    VmafLiveTreapNode *nodes; /**< treap node pool (perc > 0) */
    size_t nodes_cap;
    int32_t root, free_list;
    uint32_t rng;
    uint64_t next_seq;
} VmafLiveWindow;

/** max_frames > 0: a window of frames; else of `duration` ticks (> 0). perc: 0 or 1..100. */
int vmaf_live_window_init(VmafLiveWindow *w, size_t max_frames, int64_t duration, unsigned perc);
/** Adds value v at time t (non-decreasing) and drops what fell out. <0: out of memory. */
int vmaf_live_window_push(VmafLiveWindow *w, int64_t t, double v);
void vmaf_live_window_stats(const VmafLiveWindow *w, VmafLiveStats *out);
void vmaf_live_window_free(VmafLiveWindow *w);

/* ------------------------------------------------------------ options */

/** Parses window=: "N" (frames, N >= 1), "Xs" or "Xms" (a duration > 0). Returns 0 and sets
 *  exactly one of *frames (else 0) and *seconds (else 0), or -1. */
int vmaf_live_parse_window(const char *str, size_t *frames, double *seconds);

/** A pool= name: its VmafCudaPool, or -1. */
int vmaf_live_parse_pool(const char *name);
/** The name of a VmafCudaPool ("mean", ..., "perc10"), or NULL. */
const char *vmaf_live_pool_name(int pool);
/** The percentile of a VmafCudaPool (1, 5, 10), else 0. */
unsigned vmaf_live_pool_percentile(int pool);
/** Every valid pool= name, for messages: "mean, harmonic_mean, min, max, perc1, perc5, perc10". */
#define VMAF_LIVE_POOL_NAMES "mean, harmonic_mean, min, max, perc1, perc5, perc10"

/* ------------------------------------------------------------ text */

/** A growable string (always NUL-terminated once something was appended). */
typedef struct VmafLiveBuf {
    char *s;
    size_t len, cap;
    int oom;            /**< an append failed: the content is incomplete */
} VmafLiveBuf;

void vmaf_live_buf_reset(VmafLiveBuf *b);
void vmaf_live_buf_free(VmafLiveBuf *b);
void vmaf_live_buf_append(VmafLiveBuf *b, const char *s, size_t n);
void vmaf_live_buf_puts(VmafLiveBuf *b, const char *s);
/** A JSON string literal (quotes and escapes). */
void vmaf_live_buf_json_string(VmafLiveBuf *b, const char *s);
/** A JSON number as the log prints it (vmaf_live_format_number); null if not finite. */
void vmaf_live_buf_json_number(VmafLiveBuf *b, double v, int precision);

/**
 * Formats v as the JSON log does (engine/writers.cpp format_value, C locale):
 * precision -1: "%.17g" (parsing gives the same double); 1..17: "%.<precision>f", or
 * "%.16f" (at least) when v has more than `precision` zeros after the point before its
 * first non-zero digit. Non-finite values give "null" (JSON has no NaN). Returns the length.
 */
int vmaf_live_format_number(char *buf, size_t size, double v, int precision);

/* ------------------------------------------------------------ the live state */

typedef struct VmafCudaLiveConfig {
    const char *window;     /**< window= (NULL: none) */
    unsigned window_log;    /**< NDJSON window line every this many scored frames (0: none) */
    int sei;                /**< attach the SEI payload */
    const char *ndjson_path;/**< NULL: no NDJSON; "-", "pipe:", "pipe:N": a file descriptor */
    int precision;          /**< digits as the log's (-1: max) */
    int pool;               /**< VmafCudaPool of pool= */
    int tb_num, tb_den;     /**< time base of the pts given to vmaf_cuda_live_frame() */
    int fr_num, fr_den;     /**< frame rate (0/0: unknown), for frames without pts */
    unsigned nb_models;
    const char *const *model_names;
} VmafCudaLiveConfig;

typedef struct VmafCudaLive VmafCudaLive;

/** Whether an NDJSON log_path is a stream rather than a regular file: "-", "pipe:",
 *  "pipe:N" (file descriptor N) or an existing named pipe (opening it for writing would
 *  wait for a reader, so the filter does not probe it at init). */
int vmaf_cuda_live_path_is_stream(const char *path);

/** What one scored frame carries: metadata pairs and the SEI payload (UUID + JSON). */
typedef struct VmafCudaLiveFrame {
    size_t nb_meta;
    const char *const *meta_keys;
    const char *const *meta_values;
    const uint8_t *sei;     /**< NULL without sei=1 */
    size_t sei_size;
} VmafCudaLiveFrame;

/** Checks and stores the options; nothing is opened yet. <0 and a message in err. */
int vmaf_cuda_live_open(VmafCudaLive **out, const VmafCudaLiveConfig *cfg, char *err, size_t err_size);
/** Whether the filter has live work for each frame (window, NDJSON or SEI). */
int vmaf_cuda_live_active(const VmafCudaLive *l);
/** vmaf_cuda_live_frame()/finish(): the NDJSON output failed (cannot be opened or
 *  written, e.g. the reader of a pipe went away); later lines are not written. */
#define VMAF_LIVE_EOUTPUT (-2)

/**
 * One scored frame, in output order: updates the windows, writes its NDJSON line(s) (the
 * file is opened at the first one, so a rebuilt filter graph that never scored a frame
 * leaves a named pipe open for the next one) and fills *out (valid until the next call).
 * `pts`: in the configured time base, has_pts 0 when unknown (the time key is then the
 * previous one plus one frame at the configured frame rate). Returns 0;
 * VMAF_LIVE_EOUTPUT (message: vmaf_cuda_live_error(); *out is filled); or -1 (out of
 * memory).
 */
int vmaf_cuda_live_frame(VmafCudaLive *l, const VmafCudaFrameScores *fs, int64_t pts,
                         int has_pts, VmafCudaLiveFrame *out);
/** The final NDJSON line: the pooled values of every metric over `frames` frames, from
 *  vmaf_cuda_pooled() (null where it fails), in libvmaf's order min, max, mean,
 *  harmonic_mean, then the pool= percentile. Closes the NDJSON output. Returns 0 or
 *  VMAF_LIVE_EOUTPUT. */
int vmaf_cuda_live_finish(VmafCudaLive *l, VmafCudaSession *vs, uint64_t frames);
const char *vmaf_cuda_live_error(const VmafCudaLive *l);
void vmaf_cuda_live_close(VmafCudaLive *l);

#ifdef __cplusplus
}
#endif

#endif /* VMAF_CUDA_LIVE_H */
