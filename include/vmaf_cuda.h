/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * \file vmaf_cuda.h
 * C API of vmaf_cuda: VMAF (libvmaf v3.2.0 integer features, scalar C arithmetic,
 * bit-exact) on frames in CUDA device memory or in host memory.
 *
 * Typical use (one session per distorted/reference stream pair):
 *
 *     VmafCudaSettings s; vmaf_cuda_default_settings(&s);
 *     s.width = 1920; s.height = 1080; s.bpc = 10;
 *     VmafCudaSession *vs; char err[256];
 *     if (vmaf_cuda_open(&vs, &s, err, sizeof err) < 0) { puts(err); ... }
 *     for each frame pair: vmaf_cuda_send(vs, &ref, &dist);
 *                          while (vmaf_cuda_receive(vs, &fs) == 0) use fs;
 *     vmaf_cuda_flush(vs); while (vmaf_cuda_receive(vs, &fs) == 0) use fs;
 *     vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_MEAN, &mean);
 *     vmaf_cuda_write_log(vs, "log.json", VMAF_CUDA_LOG_JSON);
 *     vmaf_cuda_close(vs);
 *
 * No function throws or aborts: every failure is a negative return code, and
 * vmaf_cuda_error_message() says what failed.
 */
#ifndef VMAF_CUDA_H
#define VMAF_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VMAF_CUDA_API_VERSION 5

/** Opaque session: one distorted/reference stream pair. */
typedef struct VmafCudaSession VmafCudaSession;

/** Return codes. 0 is success; all errors are negative. */
enum VmafCudaStatus {
    VMAF_CUDA_OK = 0,
    VMAF_CUDA_EAGAIN = -1,       /**< receive: no frame is final yet; send more or flush */
    VMAF_CUDA_EOF = -2,          /**< receive: flushed and every frame has been returned */
    VMAF_CUDA_EINVAL = -3,       /**< invalid argument or setting (message names it) */
    VMAF_CUDA_ENOMEM = -4,       /**< host or device allocation failed */
    VMAF_CUDA_ENODEV = -5,       /**< no usable CUDA device or driver, no such cuda_device, or a device
                                      this build has no kernels for (backend=cuda, or device picture) */
    VMAF_CUDA_ECUDA = -6,        /**< a CUDA call failed (message names the call) */
    VMAF_CUDA_EMODEL = -7,       /**< model unreadable, unknown version, or malformed JSON */
    VMAF_CUDA_EIO = -8,          /**< file could not be written */
    VMAF_CUDA_ESTATE = -9,       /**< call not valid in this state (e.g. send after flush) */
    VMAF_CUDA_EINTERNAL = -10,   /**< unexpected internal error (message has details) */
};

/** Where the features are computed. */
enum VmafCudaBackend {
    VMAF_CUDA_BACKEND_AUTO = 0,  /**< CUDA when a device can run the kernels, else CPU (see
                                      vmaf_cuda_open_warning()) */
    VMAF_CUDA_BACKEND_CUDA = 1,  /**< CUDA; open fails with VMAF_CUDA_ENODEV without a device */
    VMAF_CUDA_BACKEND_CPU = 2,   /**< CPU reference (libvmaf scalar C arithmetic) */
};

/** Chroma subsampling of the input: the size of the chroma planes of VmafCudaPicture
 *  (ADM, VIF, motion, SSIM, MS-SSIM and CAMBI read only luma). */
enum VmafCudaChroma {
    VMAF_CUDA_CHROMA_420 = 0,
    VMAF_CUDA_CHROMA_422 = 1,
    VMAF_CUDA_CHROMA_444 = 2,
    VMAF_CUDA_CHROMA_400 = 3,
};

/** Pooling methods: the first four as libvmaf names them in its logs; then the low
 *  percentiles ("1% / 5% / 10% lows"), which libvmaf does not have. */
enum VmafCudaPool {
    VMAF_CUDA_POOL_MEAN = 0,
    VMAF_CUDA_POOL_HARMONIC_MEAN = 1, /**< n / sum(1 / (s + 1)) - 1 */
    VMAF_CUDA_POOL_MIN = 2,
    VMAF_CUDA_POOL_MAX = 3,
    /** p-th percentile, nearest rank: the value at 1-based rank ceil(p * n / 100) (at
     *  least 1) of the n scores sorted ascending (NaN sorts after every number). No
     *  interpolation: the result is always one of the scores. Needs the per-frame
     *  history (keep_history = 1). */
    VMAF_CUDA_POOL_PERC1 = 4,
    VMAF_CUDA_POOL_PERC5 = 5,
    VMAF_CUDA_POOL_PERC10 = 6,
};

/** Log file layouts, those of libvmaf's `vmaf` tool. */
enum VmafCudaLogFormat {
    VMAF_CUDA_LOG_XML = 0,
    VMAF_CUDA_LOG_JSON = 1,
    VMAF_CUDA_LOG_CSV = 2,
    VMAF_CUDA_LOG_SUB = 3,
};

/** Session settings. Start from vmaf_cuda_default_settings(). */
typedef struct VmafCudaSettings {
    unsigned width;          /**< luma width in samples, >= 1 */
    unsigned height;         /**< luma height in samples, >= 1 */
    unsigned bpc;            /**< bits per sample of the values, 8..16 (default 8) */
    enum VmafCudaChroma chroma; /**< chroma subsampling of the pictures (default 420) */
    enum VmafCudaBackend backend; /**< default AUTO */
    /** Models, libvmaf filter syntax: entries separated by '|', each a ':'-separated
     *  list of key=value: `version=NAME` (built-in: vmaf_v0.6.1, vmaf_v0.6.1neg,
     *  vmaf_4k_v0.6.1, vmaf_4k_v0.6.1neg, the bootstrap collection vmaf_b_v0.6.3; the float
     *  models vmaf_float_v0.6.1, vmaf_float_v0.6.1neg, vmaf_float_4k_v0.6.1 and the collection
     *  vmaf_float_b_v0.6.3, CPU backend only: backend=cuda refuses them with EINVAL, AUTO
     *  scores them on the CPU with a warning where a device was usable) or `path=FILE.json`,
     *  optional `name=OUT` (score key),
     *  `enable_transform=true|false`, `disable_clip=true|false`.
     *  NULL or "" means "version=vmaf_v0.6.1". Score key defaults to "vmaf" for the
     *  first model and to the version / file stem for the others. */
    const char *models;
    /** Extra features, '|'-separated `name=X[:opt=val...]` (libvmaf syntax), each with
     *  libvmaf's options and output names (option suffixes included):
     *  adm, vif, motion (integer VMAF extractors); psnr (psnr_y/cb/cr; enable_chroma,
     *  enable_mse, enable_apsnr -> aggregate apsnr_*, reduced_hbd_peak, min_sse);
     *  float_ssim and float_ms_ssim (enable_lcs, enable_db, clip_db; float_ssim: scale;
     *  float_ms_ssim needs 176x176); ciede (ciede2000; 4:2:0 and 4:4:4); cambi (every
     *  option but heatmaps_path; 216 on a side); speed_chroma, speed_temporal (SpEED);
     *  float_adm, float_vif, float_motion (libvmaf's float extractors, CPU backend only;
     *  their libvmaf options, but for debug, vif_prescale_method, motion_add_scale1 and
     *  motion_add_uv, which only take their defaults). psnr's chroma, ciede and
     *  speed_chroma read the chroma planes of the pictures. Options or sizes libvmaf
     *  refuses (or crashes on) fail at open with EINVAL naming the feature.
     *  NULL or "" for none. */
    const char *features;
    unsigned n_subsample;    /**< score every n-th frame (1 = all; default 1) */
    unsigned n_threads;      /**< CPU backend: worker threads (0 = one). CUDA backend: host
                                  threads for the features' host tails (SpEED's eigenvalues;
                                  CAMBI's quick-select pooling, which runs on the device,
                                  driven from these threads; 0 = half the host's cores, at
                                  most 8). At most 64: more fails at open with EINVAL (API 5;
                                  before, more counted as 64). */
    /** CUDA device ordinal, 0.. (default -1: not named, which means device 0, or the
     *  device of cuda_context). Open fails with ENODEV when it names no device, and with
     *  EINVAL when a cuda_context on another device is given too. Ignored by backend=cpu. */
    int cuda_device;
    void *cuda_context;      /**< CUcontext to work in (e.g. FFmpeg's); NULL: primary context of cuda_device */
    void *cuda_stream;       /**< CUstream to enqueue on (e.g. FFmpeg's); NULL: the session's own */
    unsigned frames_in_flight; /**< frames computed ahead of readback, 1..16 (default 4); the CUDA
                                backend computes half of them at once (at most 4), three at
                                four or five in flight where width x height (times the
                                renditions of vmaf_cuda_ladder_open()) is at most 1920x1088
                                (two such frames at once leave the GPU idle) */
    const char *model_search_dir; /**< NULL: built-in models only; else also look for version=NAME as DIR/NAME.json */
    int no_prediction;       /**< non-zero: no model at all (libvmaf `vmaf --no_prediction`): only
                                  `features` are computed, which must not be empty; `models`
                                  is ignored and vmaf_cuda_model_count() is 0 (default 0) */
    /** Per-frame history (API 3). 1 (default): every scored frame's scores are kept for
     *  vmaf_cuda_write_log(), vmaf_cuda_truncate() and every pooling method. 0: only the
     *  last 64 scored frames are kept, so host memory stays flat over any stream length
     *  (live QA): vmaf_cuda_pooled() gives mean, harmonic mean, min and max from running
     *  sums in frame order (the same doubles), vmaf_cuda_truncate() can drop up to the
     *  last 64 scored frames (e.g. ffmpeg's -frames:v), other pooling methods,
     *  vmaf_cuda_write_log() and deeper truncations fail with ESTATE. */
    int keep_history;
} VmafCudaSettings;

/** Where a picture's samples live. */
enum VmafCudaMemory {
    VMAF_CUDA_MEMORY_HOST = 0,   /**< host memory; copied (or uploaded) during send */
    VMAF_CUDA_MEMORY_DEVICE = 1, /**< CUDA device memory in the session's context */
};

/**
 * One picture: a luma plane and, for features that read chroma (psnr's cb/cr, ciede,
 * speed_chroma), the two chroma planes. Samples are uint8_t when bpc == 8, else
 * uint16_t (host byte order); the value of a sample is `stored >> shift` (P010/P012/
 * P016 keep the value in the high bits: shift = 16 - bpc; yuv420p10le: shift = 0). The
 * same shift applies to chroma.
 *
 * Chroma (API version 3): `chroma[0]` is Cb, `chroma[1]` Cr, each the first sample of
 * row 0, `chroma_pitch` bytes from row to row (both planes), `chroma_step` samples from
 * one chroma sample of a row to the next: 1 (or 0) for planar layouts (yuv420p, yuv444p
 * ...), 2 for semi-planar ones with interleaved UV as NVDEC delivers them (NV12, P010,
 * P016: chroma[0] = the UV plane, chroma[1] = chroma[0] + one sample). The chroma plane
 * size follows VmafCudaSettings.chroma: ceil(w/2) x ceil(h/2) (420), ceil(w/2) x h
 * (422), w x h (444); with VMAF_CUDA_CHROMA_400 chroma is ignored. Chroma may be NULL
 * (luma-only callers) unless a requested feature reads it: then send fails with
 * EINVAL naming the feature. Zero-initialise the struct: fields added later read 0.
 *
 * Device pictures must stay valid and unmodified until vmaf_cuda_pictures_released()
 * covers their frame (or the session is closed); host pictures only during
 * vmaf_cuda_send().
 */
typedef struct VmafCudaPicture {
    const void *luma;        /**< first luma sample of row 0 */
    ptrdiff_t pitch;         /**< luma: bytes from row to row, >= width * bytes per sample */
    unsigned shift;          /**< right shift applied to each stored sample, 0..8 */
    enum VmafCudaMemory memory; /**< where luma and chroma live */
    const void *chroma[2];   /**< Cb, Cr: first sample of row 0 (NULL: no chroma) */
    ptrdiff_t chroma_pitch;  /**< bytes from row to row of each chroma plane */
    unsigned chroma_step;    /**< 0 or 1: planar; 2: interleaved UV (NV12, P010, P016) */
} VmafCudaPicture;

/** The scores of one frame: features (libvmaf names) then model scores, in the order of
 *  libvmaf's feature collector (and log): each ADM's seven and VIF's four outputs and
 *  motion's sad, in extractor order (models' features first, then `features`), then
 *  integer_motion2 and integer_motion3, then one score per model in model order. */
typedef struct VmafCudaFrameScores {
    unsigned index;            /**< frame number, 0-based in send order */
    unsigned count;            /**< number of scores */
    const char *const *names;  /**< count names, e.g. "integer_adm2", "vmaf" */
    const double *values;      /**< count values; valid until the next receive/close */
} VmafCudaFrameScores;

/** Fills `s` with defaults (8-bit 4:2:0, backend AUTO, model vmaf_v0.6.1). */
void vmaf_cuda_default_settings(VmafCudaSettings *s);

/**
 * Opens a session. On failure returns a negative VmafCudaStatus, sets *out to NULL
 * and writes a message into err (if non-NULL, at most err_size bytes, NUL-terminated).
 * Errors: EINVAL (size 0, bpc outside 8..16, bad option), EMODEL (unknown version,
 * unreadable or malformed model file), ENODEV (backend=cuda without a device), ECUDA.
 */
int vmaf_cuda_open(VmafCudaSession **out, const VmafCudaSettings *s,
                   char *err, size_t err_size);

/** Closes a session and frees everything it owns; NULL is accepted. */
void vmaf_cuda_close(VmafCudaSession *vs);

/** Number of models of the session (>= 1; 0 with no_prediction). */
unsigned vmaf_cuda_model_count(const VmafCudaSession *vs);

/**
 * Number of bootstrap members of model `i` (0 for a plain model; 20 for the collection
 * vmaf_b_v0.6.3). A collection named NAME scores, per frame, NAME (its model "0"),
 * NAME_0001 .. NAME_00nn (the members, each transformed and clipped as its JSON says),
 * then NAME_bagging, NAME_stddev, NAME_ci_p95_lo and NAME_ci_p95_hi (libvmaf predict.c:
 * mean, standard deviation and 2.5th/97.5th percentiles of the members' untransformed,
 * unclipped scores; bagging and the interval then transformed and clipped), each
 * pooled like any other score (vmaf_cuda_pooled()).
 */
unsigned vmaf_cuda_model_bootstrap_count(const VmafCudaSession *vs, unsigned i);

/** Score key of model `i` (0-based, in the order given), e.g. "vmaf"; NULL if out of range. */
const char *vmaf_cuda_model_name(const VmafCudaSession *vs, unsigned i);

/** Name of the backend in use: "cuda" or "cpu". */
const char *vmaf_cuda_backend_name(const VmafCudaSession *vs);

/**
 * A warning raised by vmaf_cuda_open() that the caller should show once, or "" if none.
 * Today: backend=auto found a CUDA device that cannot run this build's kernels (no
 * machine code for its compute capability and no PTX it can JIT) and fell back to the
 * CPU backend; the text names the device, its compute capability and the archs built in
 * (those of vmaf_cuda_cuda_archs()). The same facts make backend=cuda fail with ENODEV.
 */
const char *vmaf_cuda_open_warning(const VmafCudaSession *vs);

/**
 * Sends the next frame pair (reference, distorted), frame index = number of pairs sent
 * before. Work is enqueued; no host synchronisation on the CUDA backend.
 * Errors: EINVAL (NULL plane, pitch too small, shift too large), ENODEV (device
 * picture on the CPU backend), ESTATE (after flush), ECUDA.
 */
int vmaf_cuda_send(VmafCudaSession *vs, const VmafCudaPicture *ref,
                   const VmafCudaPicture *dist);

/**
 * Returns the scores of the oldest frame whose scores are final (frame N is final once
 * frames up to N + vmaf_cuda_lookahead() were sent and computed, or after flush). Returns 0, VMAF_CUDA_EAGAIN (nothing final yet), VMAF_CUDA_EOF (flushed,
 * all returned) or an error. Frames skipped by n_subsample are not returned.
 */
int vmaf_cuda_receive(VmafCudaSession *vs, VmafCudaFrameScores *out);

/** Marks the end of the stream: all remaining frames become final. */
int vmaf_cuda_flush(VmafCudaSession *vs);

/**
 * Keeps only the first `frames` frames (send order) for vmaf_cuda_pooled() and
 * vmaf_cuda_write_log(), as if the stream had ended after frame `frames - 1`: later
 * frames are dropped, and the new last frame's motion2/motion3 (and so its model
 * scores) are recomputed as libvmaf computes them for a last frame (its own motion
 * SAD, no successor). For a caller that sent frames it then did not output, e.g. an
 * FFmpeg filter whose output was closed after N frames (`-frames:v N`). Scores
 * already returned by vmaf_cuda_receive() are not changed. `frames` >= the number
 * sent does nothing; 0 drops every frame (pooling then fails with EINVAL).
 * Call after vmaf_cuda_flush(). Errors: ESTATE (before flush).
 */
int vmaf_cuda_truncate(VmafCudaSession *vs, unsigned frames);

/**
 * Number of frames, counted from the first sent, whose pictures the session no longer
 * reads: the device pictures (reference and distorted) of frames 0 .. n-1 may be
 * freed or overwritten, including frames that n_subsample skips, which
 * vmaf_cuda_receive() never returns. Motion reads a frame's reference again while
 * computing the next frame, so n trails the frames computed by one; after
 * vmaf_cuda_flush() every frame sent is released. Host pictures are released when
 * vmaf_cuda_send() returns. Returns 0 for NULL.
 */
unsigned vmaf_cuda_pictures_released(const VmafCudaSession *vs);

/**
 * Frames of lookahead (API 3): how many frames after frame N must be sent (or the stream
 * flushed) before vmaf_cuda_receive() can return frame N's scores. It is the largest
 * lookahead of the session's features: 0 without temporal features (e.g. psnr alone),
 * 1 with integer motion (every VMAF model: motion2 of frame N is min(sad N, sad N+1)),
 * 2 with motion's five-frame window (motion_five_frame_window, the v1.0.16 HFR models:
 * frame 0's motion3 needs the sad of frame 2; later frames need one). libvmaf's own
 * definition needs no more than this. Returns 0 for NULL.
 */
unsigned vmaf_cuda_lookahead(const VmafCudaSession *vs);

/** Pooled score of a feature or model (by the names of VmafCudaFrameScores) over
 *  all scored frames. Errors: EINVAL (unknown name or no frame scored). */
int vmaf_cuda_pooled(VmafCudaSession *vs, const char *name, enum VmafCudaPool pool,
                     double *out);

/** Writes the libvmaf-format log of all frames received so far (call after flush).
 *  Where it goes (API 5): "-" and "pipe:" are standard output, "pipe:N" file descriptor
 *  N; a path that does not exist, or a regular file, is written under a temporary name in
 *  the same folder, synced and renamed to `path` once complete, so `path` holds a whole
 *  log or is untouched (a failed write leaves no partial file); anything else that
 *  exists is written through as it is: a symbolic link (never replaced by a file; e.g.
 *  /dev/stdout), a FIFO, a device (/dev/null).
 *  `precision`: digits after the decimal point, 1..17; 6 is libvmaf's own format
 *  (%.6f, or %.16f for values with more than 6 leading fractional zeros); -1 is
 *  "max": each double printed so that parsing it gives the same double (%.17g).
 *  `fps`: frames per second to report (libvmaf's "fps" field; NaN prints null).
 *  Errors: EIO (cannot write: the message names `path` and the system's reason, e.g.
 *  "No space left on device"), EINVAL. */
int vmaf_cuda_write_log(VmafCudaSession *vs, const char *path,
                        enum VmafCudaLogFormat fmt, int precision, double fps);

/**
 * Checks, before the first frame, that a log can be written at `path` as
 * vmaf_cuda_write_log() writes it (API 5): for a new path or a regular file, that a
 * temporary file can be created in its folder (removed again; nothing is left behind),
 * and that an existing path is not a folder. "-", "pipe:N" and other existing files
 * (a FIFO, /dev/stdout) are not probed. Returns 0, or VMAF_CUDA_EIO with a message naming
 * the path and the system's reason in `err` (at most err_size bytes, NUL-terminated).
 */
int vmaf_cuda_check_log_path(const char *path, char *err, size_t err_size);

/**
 * For a run that writes no log at `path` (no frame was scored, or it failed): removes an
 * older regular file there, so that it is not taken for this run's log (API 5). Anything
 * else (nothing there, a symbolic link, a device, a FIFO, "-", "pipe:N") is left alone.
 * Returns 1 when a file was removed, 0 when there was none to remove, VMAF_CUDA_EIO when
 * it could not be removed (message in `err`).
 */
int vmaf_cuda_remove_stale_log(const char *path, char *err, size_t err_size);

/** Whether the session scores frame `index` (0-based, send order) (API 5): with
 *  n_subsample = n, frames 0, n, 2n, ...; the others are sent (motion reads them) but
 *  vmaf_cuda_receive() never returns them. 0 for NULL. */
int vmaf_cuda_frame_scored(const VmafCudaSession *vs, uint64_t index);

/** 1 when model `i` is built in (version=, from libvmaf's model files; all of them score
 *  SDR video), 0 for a model file given by path= or an index out of range (API 5). */
int vmaf_cuda_model_builtin(const VmafCudaSession *vs, unsigned i);

/* ---- Ladders (API 4): one reference against N distorted renditions ---- */

/** Most renditions of a ladder (vmaf_cuda_ladder_open() takes 1..VMAF_CUDA_MAX_RENDITIONS). */
#define VMAF_CUDA_MAX_RENDITIONS 64

/**
 * Rendition k's log path from a ladder's template (API 5): each "%d" is replaced by k
 * (0-based, decimal), each "%%" by "%"; any other '%' stays. Writes the path into `out`
 * (at most `size` bytes, NUL-terminated). Returns 0; VMAF_CUDA_EINVAL when the template
 * has no "%d" (a ladder's renditions would write one file) or is NULL, or when `out` is
 * too small.
 */
int vmaf_cuda_rendition_path(const char *tmpl, unsigned k, char *out, size_t size);

/**
 * An encoder ladder: N distorted renditions scored against one reference, each exactly
 * as a session of its own (vmaf_cuda_open() with the same settings, fed the same pairs)
 * would score it, with what the features compute from the reference alone done once
 * per reference frame for all renditions in step (motion; the reference's side of VIF
 * and ADM, whose renditions are scored together; README "The C API" says what is
 * shared). All renditions have the reference's size, bpc and chroma (scale them first).
 *
 *     VmafCudaLadder *l; vmaf_cuda_ladder_open(&l, &s, 3, err, sizeof err);
 *     for each reference frame: vmaf_cuda_ladder_send(l, &ref, dists);  // dists[3]
 *         for k in 0..2: while (vmaf_cuda_receive(vmaf_cuda_ladder_session(l, k), &fs) == 0) ...
 *     vmaf_cuda_ladder_flush(l); ... receive, pooled, write_log per rendition ...
 *     vmaf_cuda_ladder_close(l);
 */
typedef struct VmafCudaLadder VmafCudaLadder;

/** Opens a ladder of `renditions` (1..VMAF_CUDA_MAX_RENDITIONS) renditions with settings `s` (as
 *  vmaf_cuda_open(): the same errors, before the first frame). */
int vmaf_cuda_ladder_open(VmafCudaLadder **out, const VmafCudaSettings *s, unsigned renditions,
                          char *err, size_t err_size);
/** Closes the ladder and its rendition sessions. NULL is a no-op. */
void vmaf_cuda_ladder_close(VmafCudaLadder *l);
/** Number of renditions (0 for NULL). */
unsigned vmaf_cuda_ladder_renditions(const VmafCudaLadder *l);
/**
 * Rendition k's session (0-based; NULL when out of range), owned by the ladder: use it
 * for vmaf_cuda_receive(), vmaf_cuda_pooled(), vmaf_cuda_write_log(),
 * vmaf_cuda_truncate(), the model and backend queries and vmaf_cuda_pictures_released()
 * (of rendition k's frames, numbered from 0 in its own send order). vmaf_cuda_flush()
 * on it ends rendition k (it gets no more frames; the others go on). vmaf_cuda_send()
 * on it fails with ESTATE, and vmaf_cuda_close() on it does nothing.
 */
VmafCudaSession *vmaf_cuda_ladder_session(VmafCudaLadder *l, unsigned k);
/**
 * Sends one reference frame with the distorted frames paired with it: `dist` holds one
 * pointer per rendition; dist[k] == NULL: rendition k has no frame paired with this
 * reference frame (not started, a lower frame rate, or ended). Each rendition's frames
 * are numbered in its own send order. The same reference picture may be sent again
 * (a repeated last frame). Errors: EINVAL (bad picture, naming the rendition), ESTATE
 * (dist[k] for a rendition that was flushed), and the errors of vmaf_cuda_send();
 * vmaf_cuda_ladder_error_message() says which.
 */
int vmaf_cuda_ladder_send(VmafCudaLadder *l, const VmafCudaPicture *ref,
                          const VmafCudaPicture *const *dist);
/** Ends every rendition (vmaf_cuda_flush() on each that is not flushed yet). */
int vmaf_cuda_ladder_flush(VmafCudaLadder *l);
/** Reference frames (vmaf_cuda_ladder_send() calls), from the first, whose reference
 *  picture and distorted pictures the ladder no longer reads: device pictures of those
 *  calls may be reused. Returns 0 for NULL. */
unsigned vmaf_cuda_ladder_pictures_released(const VmafCudaLadder *l);
/** The renditions' vmaf_cuda_lookahead(): frames of a rendition after its frame N that
 *  must be sent (or the rendition flushed) before frame N's scores are final. */
unsigned vmaf_cuda_ladder_lookahead(const VmafCudaLadder *l);
/** The message of the ladder's last error ("" if none); errors of a rendition's own
 *  calls are on its session (vmaf_cuda_error_message()). */
const char *vmaf_cuda_ladder_error_message(const VmafCudaLadder *l);

/** The message of the session's last error ("" if none). */
const char *vmaf_cuda_error_message(const VmafCudaSession *vs);

/** A fixed text for a status code. */
const char *vmaf_cuda_strerror(int status);

/** Version string of the library, e.g. "0.1.0 (libvmaf v3.2.0 compatible)". */
const char *vmaf_cuda_version(void);

/** The GPU code built in, e.g. "sm_75 sm_80 sm_86 sm_89 sm_90 sm_100 sm_120 + PTX
 *  compute_120" (machine code per SM architecture; PTX is compiled by the driver on newer
 *  GPUs); "" when the library was built without its CUDA backend. */
const char *vmaf_cuda_cuda_archs(void);

#ifdef __cplusplus
}
#endif

#endif /* VMAF_CUDA_H */
