/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * \file vmaf_cuda_align.h
 * Automatic alignment of two inputs (API 10): the offset between a main (distorted)
 * stream and its reference, found from cheap signatures of their frames, for a
 * synchroniser that then pairs with it (the filter's `sync=auto`, the CLI's `--sync auto`).
 *
 *     VmafCudaAlignSettings as = { .window = 2 * tb_den / tb_num, .tb_num = .., .tb_den = .. };
 *     VmafCudaAlign *a; vmaf_cuda_align_open(&a, &as);
 *     while (vmaf_cuda_align_wants(a)) {
 *         vmaf_cuda_picture_signature(session, &pic, &sig);   // main (0) or reference (1)
 *         vmaf_cuda_align_add(a, input, pts, &sig);
 *         if (vmaf_cuda_align_poll(a, &result) == 1) break;  // decided: pair with it
 *     }
 *     for each scored frame: vmaf_cuda_align_score(a, pts, score, &result) (1: collapsed,
 *         collect again; the next decision is a re-check)
 *
 * Signatures and the search are plain host arithmetic (doubles, in a fixed order), so
 * identical inputs give identical offsets. The offset is main relative to the
 * reference: a picture shown by the main at time t is shown by the reference at
 * t - offset (positive: the main lags). A synchroniser pairs with it by adding the offset
 * to the reference's timestamps.
 */
#ifndef VMAF_CUDA_ALIGN_H
#define VMAF_CUDA_ALIGN_H

#include "vmaf_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Cells of a signature: a 16 x 16 grid over the luma plane. */
#define VMAF_CUDA_SIGNATURE_GRID 16
#define VMAF_CUDA_SIGNATURE_CELLS (VMAF_CUDA_SIGNATURE_GRID * VMAF_CUDA_SIGNATURE_GRID)

/** A frame's signature: the mean luma of each cell, row-major, as a fraction of the
 *  largest sample value (0..1: mean / (2^bpc - 1)). Cell (cx, cy) covers columns
 *  cx * W / 16 .. (cx + 1) * W / 16 - 1 and rows cy * H / 16 .. (cy + 1) * H / 16 - 1
 *  (integer division); a cell with no sample (W or H below 16) is 0. */
typedef struct VmafCudaSignature {
    double cell[VMAF_CUDA_SIGNATURE_CELLS];
} VmafCudaSignature;

/**
 * The signature of a picture of the session's size and bit depth (the stored samples
 * shifted right by pic->shift, as vmaf_cuda_send() reads them). Device pictures
 * (VMAF_CUDA_MEMORY_DEVICE) are summed on the GPU, on the session's CUDA context, and the
 * call returns when the sums are on the host; host pictures are summed on the host. The
 * cell sums are exact (64-bit integers), so both give the same signature. Errors: EINVAL
 * (NULL, a device picture on the CPU backend), ECUDA.
 */
int vmaf_cuda_picture_signature(VmafCudaSession *s, const VmafCudaPicture *pic,
                                VmafCudaSignature *out);

/**
 * Records the offset a synchroniser pairs with, for the JSON log: the first call gives
 * "sync_offset" (seconds, main relative to the reference), later ones (re-checks that
 * changed it) "sync_changes": [{"frame": N, "offset": seconds}], N the first frame
 * (0-based, send order) paired with the new offset. Errors: EINVAL (NULL, not finite).
 */
int vmaf_cuda_set_sync_offset(VmafCudaSession *s, uint64_t frame, double seconds);

typedef struct VmafCudaAlign VmafCudaAlign;

typedef struct VmafCudaAlignSettings {
    int64_t window;      /**< search range: offsets from -window to +window ticks (> 0) */
    int tb_num, tb_den;  /**< a tick is tb_num / tb_den seconds (both > 0) */
    const char *prefix;  /**< put in front of each message ("" or NULL: none) */
} VmafCudaAlignSettings;

/** What a search found. */
typedef struct VmafCudaAlignResult {
    int recheck;             /**< 0: the first search; 1: a re-check after a collapse */
    int found;               /**< 1: one offset matched clearly better than any other */
    int changed;             /**< a re-check found an offset other than the one before */
    int64_t offset;          /**< ticks, main relative to the reference (0 when !found and
                                  no offset was found before; else the one before) */
    int64_t previous;        /**< a re-check: the offset before it */
    double seconds;          /**< offset in seconds */
    long long matched;       /**< frame pairs compared at the offset */
    double cost;             /**< mean absolute signature difference at the offset */
    double runner_up;        /**< the least cost at an offset more than 2 frames away
                                  (NaN: none) */
    char message[512];       /**< the line to tell (with the prefix, no newline) */
} VmafCudaAlignResult;

/** Opens an alignment search; it collects at once. Errors: EINVAL (NULL, window or time
 *  base not > 0), ENOMEM. */
int vmaf_cuda_align_open(VmafCudaAlign **out, const VmafCudaAlignSettings *s);

/** Whether it collects signatures now (the first search, or a re-check after a collapse):
 *  a caller computes signatures only then. 0 for NULL. */
int vmaf_cuda_align_wants(const VmafCudaAlign *a);

/** Adds frame `pts` (ticks, increasing per input) of input 0 (main) or 1 (reference)
 *  while it collects (ignored otherwise). Errors: EINVAL (NULL, input not 0/1), ENOMEM. */
int vmaf_cuda_align_add(VmafCudaAlign *a, int input, int64_t pts, const VmafCudaSignature *sig);

/** Input 0 or 1 has no more frames: the search decides with what it has. */
int vmaf_cuda_align_input_ended(VmafCudaAlign *a, int input);

/**
 * Decides once it has enough: each input's frames span 2 * window from its first
 * collected frame (so every offset within the window is compared over at least a window's
 * length), or an input ended, or `force`. Returns 1 with *r filled when it decided (then
 * it stops collecting), 0 while it collects (or does not), <0 on error (EINVAL).
 * Candidate offsets are the main's first frame's time less each collected reference
 * frame's time within the range; at each, every main frame is compared with the
 * reference frame nearest its shifted time (within half a reference frame period); the
 * least mean absolute difference of the signatures wins (ties: the smaller offset); it is
 * `found` when it is below 0.7 of the least cost more than 2 frame periods away, and was
 * compared over at least 5 frames and a third of the main's frames.
 */
int vmaf_cuda_align_poll(VmafCudaAlign *a, int force, VmafCudaAlignResult *r);

/**
 * The watch for a collapse, fed with each scored frame's score (the first model's VMAF,
 * 0..100) and time: when the mean over the last half second falls below 0.6 of the mean
 * over the 4 seconds before it (which was at least 40), it starts a re-check (collects
 * again, searching around the current offset) and returns 1 with r->message saying so;
 * at most one re-check per 4 * window. Returns 0 otherwise, <0 on error (EINVAL).
 */
int vmaf_cuda_align_score(VmafCudaAlign *a, int64_t pts, double score, VmafCudaAlignResult *r);

/** The offset now (ticks; 0 before a decision). */
int64_t vmaf_cuda_align_offset(const VmafCudaAlign *a);

/** Closes it; NULL is a no-op. */
void vmaf_cuda_align_close(VmafCudaAlign *a);

#ifdef __cplusplus
}
#endif

#endif /* VMAF_CUDA_ALIGN_H */
