/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * sync=auto for the two-input filter: the library's alignment (vmaf_cuda_align.h) fed
 * with the frames waiting on the two input links, before framesync takes them. Until
 * the first search decides, framesync does not run and the frames stay queued on the
 * links (both inputs asked for frames); then every reference frame gets the offset added
 * to its timestamp as the pairing watch observes it (vmaf_cuda_pairing.c), so framesync
 * pairs each main frame with the reference frame of the same picture, and the main's
 * frames and timestamps go out as they came. The scores of the first model feed the
 * collapse watch, which starts a re-check; what it finds applies to the reference frames
 * read after it.
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */
#ifndef VMAF_CUDA_ALIGN_FF_H
#define VMAF_CUDA_ALIGN_FF_H

#include <stdint.h>

#include <vmaf_cuda.h>
#include <vmaf_cuda_align.h>

#include "libavutil/frame.h"
#include "libavutil/rational.h"

#include "avfilter.h"
#include "framesync.h"
#include "vmaf_cuda_pairing.h"
#include "vmaf_cuda_picture.h"

typedef struct VmafCudaSyncAuto {
    VmafCudaAlign *align;        /**< NULL: sync=timestamps */
    AVRational tb;               /**< its ticks: the framesync's time base */
    int64_t shift;               /**< ticks added to the reference's timestamps */
    int holding;                 /**< the first search has not decided: framesync waits */
    int decided;                 /**< an offset is in effect (lavfi.vmaf.sync.offset) */
    int64_t signed_upto[2];      /**< frames of each link looked at (link frame numbers) */
    int ended[2];                /**< each input's end was given to the search */
    int64_t first_pts[2], last_pts[2]; /**< of the frames given (AV_NOPTS_VALUE: none) */
    int64_t window;              /**< ticks */
    int recheck_hold;            /**< a re-check holds the reference's frames */
    int64_t collapse_pts;        /**< the collapse's main frame (ticks), for its re-check */
    int recheck_wait;            /**< 1: find that frame; 2: wait for main frame recheck_at */
    int64_t recheck_at;          /**< main link frame number the re-check starts at */
    unsigned guard;              /**< frames the main can be read ahead of the scores */
    int64_t ring_index[1024], ring_pts[1024]; /**< main frames looked at (number, ticks) */
    char offset_text[32];        /**< the offset in effect, seconds, "%.6f" */
    int change;                  /**< a new offset waits for its first pair */
    double change_seconds;
    char pending[512];           /**< a message to mark on the next output frame ("") */
    VmafCudaPlaneCopy copy;
} VmafCudaSyncAuto;

/** sync=auto: opens the search (`window` seconds each way, ticks of `tb`). */
int ff_vmaf_cuda_sync_auto_init(AVFilterContext *ctx, VmafCudaSyncAuto *a, double window,
                                AVRational tb, const char *prefix);
void ff_vmaf_cuda_sync_auto_uninit(VmafCudaSyncAuto *a);

/** In activate, before the pairing watch `w` observes the links: gives the search the
 *  frames that arrived (while it collects; those of `session`'s size, width x height), decides when it can (logs it; a new offset
 *  applies to the reference frames observed from now on: w->ref_shift). Returns 1 while
 *  framesync must wait (the first search collects; the caller asks both inputs for
 *  frames), 0 to go on. */
int ff_vmaf_cuda_sync_auto_collect(AVFilterContext *ctx, VmafCudaSyncAuto *a,
                                   AVFilterLink *mainlink, AVFilterLink *reflink,
                                   const VmafCudaLayout *layout, int hw_frames,
                                   VmafCudaSession *session, unsigned width,
                                   unsigned height, VmafCudaPairWatch *w);

/** While the first search holds frames: whether input 0 (main) or 1 (reference) is
 *  to be asked for more. */
int ff_vmaf_cuda_sync_auto_wants_frames(const VmafCudaSyncAuto *a, int input);

/** A framesync event (`fs`) of main frame `out`, frame `index` of the session if scored:
 *  a new offset takes effect at the first event paired with a reference frame read with
 *  it (recorded in the session's log from `index`); lavfi.vmaf.sync.offset once an offset
 *  is in effect; a pending message as a "sync" event (when no other event is there). */
int ff_vmaf_cuda_sync_auto_mark(VmafCudaSyncAuto *a, AVFrame *out, const FFFrameSync *fs,
                                VmafCudaPairWatch *w, VmafCudaSession *session,
                                int64_t index);

/** A scored frame going out (`pts` in `tb`, `score` the first model's): the collapse
 *  watch; a collapse is logged and marked on `out`. */
int ff_vmaf_cuda_sync_auto_score(AVFilterContext *ctx, VmafCudaSyncAuto *a, AVFrame *out,
                                 AVRational tb, double score);

#endif /* VMAF_CUDA_ALIGN_FF_H */
