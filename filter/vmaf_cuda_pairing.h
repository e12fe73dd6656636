/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * How vmaf_cuda's two inputs were paired, for the warnings FFmpeg's libvmaf filter
 * does not give. Pairing itself is framesync's (libvmaf's defaults): every main frame
 * meets the last reference frame at or before its timestamp. This code only watches:
 *
 * - every frame queued on either input, once (peeked before framesync consumes it);
 * - every framesync event (a main frame with its reference frame, or none);
 *
 * and at the end of the stream warns, once, with counts and the fix, where the
 * pairing was probably not what the user meant: an input ended first and its last
 * frame was repeated, main frames went out unscored, reference frames were never
 * paired, a later reference frame was nearer than the one used, the inputs start at
 * different times, the frame rates differ. At the first pair it warns about
 * interlaced frames, differing colour ranges and PQ/HLG transfers.
 *
 * Each pair is logged at AV_LOG_DEBUG as
 *   "pair N: main T s, reference T s"   (N: frame index in the log, T: timestamp)
 *   "unscored: main T s (no reference frame)"
 * Every message starts with `prefix` ("rendition 2: " for a ladder's rendition, whose
 * "main" is the rendition; vmaf_cuda_ladder.c).
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */
#ifndef VMAF_CUDA_PAIRING_H
#define VMAF_CUDA_PAIRING_H

#include <stdint.h>

#include "libavutil/fifo.h"
#include "libavutil/frame.h"
#include "libavutil/rational.h"

#include "avfilter.h"
#include "framesync.h"

typedef struct VmafCudaPairing {
    AVRational tb;              /**< framesync's time base: every pts below is in it */
    AVRational rate[2];         /**< the inputs' frame rates (main, reference; 0/1: unknown) */
    int64_t observed[2];        /**< frames seen on each input (main, reference) */
    int64_t first_pts[2];       /**< pts of each input's first frame (AV_NOPTS_VALUE: none) */
    int64_t first_dur[2];       /**< duration of each input's first frame (0: unknown) */
    AVFifo *queue[2];           /**< FrameSeen per input: frames seen, not yet met by an event */

    int64_t nb_pairs;           /**< framesync events with both frames */
    int64_t last_main_pts, last_ref_pts; /**< frames of the previous pair */
    int64_t last_main_dur;      /**< duration of the main frame of the last event (0: unknown) */
    int64_t last_ref_dur;       /**< duration of the last paired reference frame (0: unknown) */
    int started;                /**< the first pair was checked */

    int64_t main_before;        /**< main frames passed through before the first reference frame */
    int64_t main_after;         /**< main frames passed through after the reference ended */
    int64_t main_repeated;      /**< pairs repeating the main's last frame after it ended */
    int64_t ref_repeated;       /**< pairs reusing the reference's last frame past its end */
    int64_t ref_leading;        /**< reference frames before the first pair, never paired */
    int64_t ref_gaps;           /**< reference frames between pairs, never paired */
    int64_t ref_trailing;       /**< reference frames after the last pair, never paired */
    int64_t nearer;             /**< pairs where the next reference frame was nearer in time */
    int reported;
    char prefix[32];            /**< starts every message ("" for the two-input filter;
                                     "rendition 2: " for a ladder's rendition) */
} VmafCudaPairing;

/** Call after ff_framesync_configure(): tb is fs->time_base; the frame rates of the
 *  main and reference links (FilterLink frame_rate) for the end-of-stream report. */
int ff_vmaf_cuda_pairing_init(VmafCudaPairing *p, AVRational tb, AVRational main_rate,
                           AVRational ref_rate);

void ff_vmaf_cuda_pairing_uninit(VmafCudaPairing *p);

/** Records the frames queued on both inputs that were not seen yet (call at the start
 *  of activate, before framesync consumes any). */
int ff_vmaf_cuda_pairing_observe(VmafCudaPairing *p, AVFilterContext *ctx);

/** The same for a main and a reference link of one's choice (a ladder's rendition). */
int ff_vmaf_cuda_pairing_observe_links(VmafCudaPairing *p, AVFilterLink *mainlink,
                                    AVFilterLink *reflink);

/**
 * Records one framesync event. `ref` is NULL when the main frame goes out unscored;
 * `index` is the frame's index in the log (-1 when unscored). On the first pair, the
 * start checks run (interlacing, colour ranges, and PQ/HLG when `sdr_models`).
 */
int ff_vmaf_cuda_pairing_event(VmafCudaPairing *p, AVFilterContext *ctx, const FFFrameSync *fs,
                            const AVFrame *dist, const AVFrame *ref, int64_t index,
                            int sdr_models);

/** Logs the end-of-stream warnings on ctx (once; nothing on aligned inputs). Needs no
 *  link: callable from uninit (a ladder reports its renditions there, in order). */
void ff_vmaf_cuda_pairing_report(VmafCudaPairing *p, AVFilterContext *ctx);

#endif /* VMAF_CUDA_PAIRING_H */
