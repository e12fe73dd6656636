/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * A ladder's pairing: for each of N renditions, a framesync of its own over two inputs
 * (its main and the reference), advanced with FFmpeg's framesync rules, and one queue of
 * reference frames from which every rendition takes its own reference (a new AVFrame
 * reference) in turn.
 *
 * FFmpeg's framesync serves one output (ff_framesync_init() asserts it), and over N+1
 * inputs it would not pair a rendition as a two-input framesync does (a rendition's end
 * would not hand the sync over to the reference). So this file advances FFFrameSync
 * states itself, following framesync.c of FFmpeg 7.1, 8.1 and 9.0 (identical there):
 * ff_framesync_configure() with ff_framesync_init_dualinput()'s modes,
 * framesync_advance(), the injection of frames and of a status (framesync_inject_frame,
 * framesync_inject_status) and ff_framesync_get_frame(), so that shortest, repeatlast,
 * eof_action and ts_sync_mode mean what they mean for the two-input filter, the time base
 * and the pts rounding included. The two-input filter uses FFmpeg's framesync itself.
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */
#ifndef VMAF_CUDA_SYNC_H
#define VMAF_CUDA_SYNC_H

#include <stdint.h>

#include "libavutil/fifo.h"
#include "libavutil/frame.h"

#include "avfilter.h"
#include "framesync.h"

/** framesync.c's input states (FFFrameSyncIn.state), the same in 7.1, 8.1 and 9.0. */
enum { VMAF_CUDA_SYNC_BOF, VMAF_CUDA_SYNC_RUN, VMAF_CUDA_SYNC_EOF };

/** Whether framesync knows that input `in` ended: its EOF held as a next "frame" of NULL,
 *  or (once taken) its state. */
static inline int ff_vmaf_cuda_sync_ended(const FFFrameSyncIn *in)
{
    return in->state == VMAF_CUDA_SYNC_EOF || (in->have_next && !in->frame_next);
}

/** Rendition k's framesync: in[0] its main, in[1] the reference. */
typedef struct VmafCudaSyncRendition {
    FFFrameSync fs;
    FFFrameSyncIn in[2];
    int64_t ref_seq[2];          /**< queue number of in[1].frame, in[1].frame_next (-1: none) */
    int64_t ref_cursor;          /**< queue number of the next reference frame it takes */
    int64_t eof_pts;             /**< the pts of its output's EOF (framesync's) */
    int need_main, need_ref;     /**< it waits for a main / reference frame */
} VmafCudaSyncRendition;

typedef struct VmafCudaSync {
    unsigned n;
    VmafCudaSyncRendition *r;
    AVFifo *refq;                /**< AVFrame *: reference frames, queue numbers refq_base.. */
    int64_t refq_base;
    int ref_eof;                 /**< the reference link's status was taken */
    int ref_status;
    int64_t ref_status_pts;
} VmafCudaSync;

int ff_vmaf_cuda_sync_init(VmafCudaSync *s, unsigned n);
void ff_vmaf_cuda_sync_uninit(VmafCudaSync *s);

/** Rendition k's framesync as ff_framesync_init_dualinput() + ff_framesync_configure()
 *  of the two-input filter, with the options (shortest, ...) of `opt`. */
void ff_vmaf_cuda_sync_configure(VmafCudaSync *s, unsigned k, AVFilterContext *ctx,
                                 AVFilterLink *mainlink, AVFilterLink *reflink,
                                 const FFFrameSync *opt);

/** framesync_advance() for rendition k, taking its main frames from `mainlink` and its
 *  reference frames from the queue: 1 when an event is ready or the sync ended
 *  (r[k].fs.eof), 0 when it waits for a frame (need_main / need_ref say which), <0 on
 *  error. *moved: a frame or status was taken. */
int ff_vmaf_cuda_sync_advance(VmafCudaSync *s, unsigned k, AVFilterLink *mainlink, int *moved);

/** ff_framesync_get_frame(fs, 0, &frame, 1) of rendition k's event: the main frame,
 *  taken, or referenced again when framesync may need it once more. */
AVFrame *ff_vmaf_cuda_sync_take_main(VmafCudaSync *s, unsigned k);

/** The lowest queue number of a reference frame rendition k may still pair a main frame
 *  with (INT64_MAX: none; `over`: the rendition pairs nothing any more). */
int64_t ff_vmaf_cuda_sync_next_pairable(const VmafCudaSync *s, unsigned k, int over);

/** Takes the next reference frame (or the reference's status) from `reflink` into the
 *  queue: 1 when something was taken, 0 when nothing was there, <0 on error. */
int ff_vmaf_cuda_sync_pull_reference(VmafCudaSync *s, AVFilterLink *reflink);

/** Frees the queued reference frames that no rendition still running (bit k of `done`
 *  clear) will take. */
void ff_vmaf_cuda_sync_trim(VmafCudaSync *s, uint64_t done);

/** Frees rendition k's frames held by its framesync. */
void ff_vmaf_cuda_sync_free(VmafCudaSync *s, unsigned k);

#endif /* VMAF_CUDA_SYNC_H */
