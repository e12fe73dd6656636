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
 * (0-based, send order) paired with the new offset. NaN: the first search found no
 * offset (JSON null: paired by the timestamps as they are). Errors: EINVAL (NULL,
 * infinite).
 */
int vmaf_cuda_set_sync_offset(VmafCudaSession *s, uint64_t frame, double seconds);

/**
 * The pairing watch's report after an alignment moved the reference's timestamps: the
 * inputs' start difference is told as the alignment's (frames before the first pair),
 * without the advice to add setpts. Errors: EINVAL (NULL).
 */
int vmaf_cuda_pairing_set_aligned(VmafCudaPairing *p);

/** The most frames a session holds between their send and their scores' receive
 *  (frames in flight and lookahead): how far a synchroniser's frames can be ahead of the
 *  scores it sees. 0 for NULL. */
unsigned vmaf_cuda_frames_in_pipeline(const VmafCudaSession *s);

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
    int64_t ref_limit;       /**< vmaf_cuda_align_ref_limit() of the search (INT64_MIN:
                                  the first search, every frame) */
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
 * `found` when it is below 0.7 of the least cost more than 2 frame periods away; an offset
 * counts when it was compared over at least 5 frames and a third of the frames of the
 * input with fewer.
 */
int vmaf_cuda_align_poll(VmafCudaAlign *a, int force, VmafCudaAlignResult *r);

/**
 * The watch for a collapse, fed with each scored frame's score (the first model's VMAF,
 * 0..100) and time: when the mean over the last half second falls below 0.75 of the mean
 * over the 4 seconds before it (which was at least 30), it starts a re-check (collects
 * again, searching within a second of the current offset, or the window if smaller) and
 * returns 1 with r->message saying so;
 * at most one re-check per 4 * window. Returns 0 otherwise, <0 on error (EINVAL).
 */
int vmaf_cuda_align_score(VmafCudaAlign *a, int64_t pts, double score, VmafCudaAlignResult *r);

/**
 * Where a re-check starts (after vmaf_cuda_align_score() returned 1): the main's frames
 * from `main_pts` on, the reference's from main_pts - the current offset, each over twice
 * the re-check's range; until then vmaf_cuda_align_wants() is 0. Choose a main frame that
 * has not reached the caller's synchroniser yet (frames in flight behind the scores), so
 * that which frames are compared, and so the result, is the same on every run.
 * Errors: EINVAL (NULL).
 */
int vmaf_cuda_align_recheck_from(VmafCudaAlign *a, int64_t main_pts);

/**
 * The reference's time (its own timestamps) from which its frames are paired with what a
 * re-check finds: the end of the re-check's reference frames; the earlier ones keep the
 * offset before. INT64_MIN when no re-check runs (the first search: every frame);
 * INT64_MAX while a re-check waits for vmaf_cuda_align_recheck_from(). A synchroniser
 * holds the reference's frames from there until the re-check decided.
 */
int64_t vmaf_cuda_align_ref_limit(const VmafCudaAlign *a);

/** The offset now (ticks; 0 before a decision). */
int64_t vmaf_cuda_align_offset(const VmafCudaAlign *a);

/** Closes it; NULL is a no-op. */
void vmaf_cuda_align_close(VmafCudaAlign *a);

#ifdef __cplusplus
}
#endif

#endif /* VMAF_CUDA_ALIGN_H */
