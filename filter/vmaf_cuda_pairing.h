/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * The filter's side of the library's pairing watch (vmaf_cuda_pairing_*() in
 * vmaf_cuda.h: the counts, the end-of-stream warnings and their words are the
 * library's). Pairing itself is framesync's; this code hands the library every frame
 * queued on either input, once (peeked before framesync consumes it, in framesync's
 * time base), and every framesync event, and logs what the library says: each pair at
 * AV_LOG_DEBUG, the warnings at the end. At the first pair it warns about interlaced
 * frames, differing colour ranges and PQ/HLG transfers (properties of AVFrames).
 * Every message starts with `prefix` ("rendition 2: " for a ladder's rendition).
 */
#ifndef VMAF_CUDA_PAIRING_H
#define VMAF_CUDA_PAIRING_H

#include <stdint.h>

#include <vmaf_cuda.h>

#include "libavutil/frame.h"
#include "libavutil/rational.h"

#include "avfilter.h"
#include "framesync.h"

typedef struct VmafCudaPairWatch {
    VmafCudaPairing *watch;     /**< the library's watch (NULL before init) */
    AVRational tb;              /**< framesync's time base: every pts given is in it */
    int64_t observed[2];        /**< frames handed over per input (main, reference) */
    int reported;
    int live;                   /**< the library's live rules are on */
    int ref_over;               /**< the last event's main frame is past the reference's end */
    const char *prefix;         /**< "" for the two-input filter, "rendition 2: " ... */
    int64_t ref_shift;          /**< sync=auto: ticks added to each reference frame's pts as
                                     it is observed (vmaf_cuda_align_ff.h) */
    int64_t ref_shift_next;     /**< a re-check's offset, for the reference frames whose own
                                     pts (ticks) is shift_from or later (INT64_MAX: none) */
    int64_t shift_from;
    int shift_tagging;          /**< reference frames observed get lavfi.vmaf.sync.new (from
                                     a re-check's switch until its first pair) */
} VmafCudaPairWatch;

/** Call after ff_framesync_configure(): fs's time base and ts_sync_mode; the frame rates
 *  of the main and reference links (FilterLink frame_rate) for the end-of-stream report;
 *  `prefix` starts every message (kept: it must outlive the watch); `live_timeout`
 *  (seconds, 0: none) the library's live rules (vmaf_cuda_pairing_set_live()). */
int ff_vmaf_cuda_pairing_init(VmafCudaPairWatch *p, const FFFrameSync *fs, AVRational main_rate,
                              AVRational ref_rate, const char *prefix, double live_timeout);

void ff_vmaf_cuda_pairing_uninit(VmafCudaPairWatch *p);

/** Hands over the frames queued on the main and the reference link not seen yet (at the
 *  start of activate, before framesync consumes any), on their inputs' continuous
 *  timelines (vmaf_cuda_pairing_timeline(): a reset moves pts on, warned on ctx). */
int ff_vmaf_cuda_pairing_observe_links(VmafCudaPairWatch *p, AVFilterContext *ctx,
                                       AVFilterLink *mainlink, AVFilterLink *reflink);

/**
 * Records one framesync event. `ref` is NULL when the main frame goes out unscored;
 * `index` is the frame's index in the log if it is scored. Returns 1 when it is scored,
 * 0 when it goes out unscored (no `ref`, or the library's live rules say so), with
 * lavfi.vmaf.unscored (why) set on `dist`, and what starts or ends there (the live
 * rules' notice) logged now and set on `dist` as lavfi.vmaf.event, .event.input and
 * .event.message (for the NDJSON stream, when it goes out). On the first pair, the start
 * checks run (interlacing, colour ranges, and PQ/HLG when every model of the session
 * `vs` is a built-in, SDR one).
 */
int ff_vmaf_cuda_pairing_event(VmafCudaPairWatch *p, AVFilterContext *ctx, const FFFrameSync *fs,
                               AVFrame *dist, const AVFrame *ref, int64_t index,
                               VmafCudaSession *vs);

/** Framesync ended (live rules): the notices still to tell (`reference_ended`: it ended
 *  at the reference's end while the main had frames left, shortest=1), each logged and
 *  written into the NDJSON stream of `live` (may be NULL). Returns 0, or 1 when the
 *  stream failed. */
int ff_vmaf_cuda_pairing_live_end(VmafCudaPairWatch *p, AVFilterContext *ctx,
                                  int reference_ended, VmafCudaLive *live);

/** Logs the end-of-stream warnings on ctx (once; nothing on aligned inputs). Needs no
 *  link: callable from uninit (a ladder reports its renditions there, in order). */
void ff_vmaf_cuda_pairing_report(VmafCudaPairWatch *p, AVFilterContext *ctx);

#endif /* VMAF_CUDA_PAIRING_H */
