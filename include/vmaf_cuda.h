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
 *     vmaf_cuda_write_log(vs, "log.json", VMAF_CUDA_LOG_JSON, 6, 0);
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

#define VMAF_CUDA_API_VERSION 10

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
 * that an existing path is not a folder, and that it is not a file this process has open
 * (an input or output of the run, a redirected standard stream: the log would overwrite
 * it). "-", "pipe:N", /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are the
 * process's descriptors, written through as they are (never reopened or truncated); other
 * existing files (a FIFO, a device) are not probed. Returns 0, or VMAF_CUDA_EIO with a
 * message naming the path and the reason in `err` (at most err_size bytes,
 * NUL-terminated).
 */
int vmaf_cuda_check_log_path(const char *path, char *err, size_t err_size);

/**
 * For a run that writes no log at `path` (no frame was scored, or it failed): removes an
 * older regular file there, so that it is not taken for this run's log (API 5). Anything
 * else (nothing there, a symbolic link, a device, a FIFO, "-", "pipe:N") is left alone.
 * Returns 1 when a file was removed, 2 when `path` is a symbolic link to a regular file
 * (left alone, but it may hold an older log: say so), 0 otherwise, VMAF_CUDA_EIO when it
 * could not be removed (message in `err`).
 */
int vmaf_cuda_remove_stale_log(const char *path, char *err, size_t err_size);

/** Whether the session scores frame `index` (0-based, send order) (API 5): with
 *  n_subsample = n, frames 0, n, 2n, ...; the others are sent (motion reads them) but
 *  vmaf_cuda_receive() never returns them. 0 for NULL. */
int vmaf_cuda_frame_scored(const VmafCudaSession *vs, uint64_t index);

/** How many of frames 0 .. frames-1 the session scores (vmaf_cuda_frame_scored(), API 6):
 *  e.g. the count of the NDJSON pooled line for the frames output. 0 for NULL. */
uint64_t vmaf_cuda_frames_scored(const VmafCudaSession *vs, uint64_t frames);

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
 * and ADM, whose renditions are scored together; docs/api.md says what is
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
/**
 * Segments (API 9): the pictures change size (a live feed switching resolution, an
 * encoder reconfigured), or bit depth or chroma subsampling, and scoring goes on. Ends
 * the current segment of every rendition (as vmaf_cuda_ladder_flush(): its last frames'
 * temporal features are those of a stream's end) and continues each rendition's stream
 * with settings `s` (those of vmaf_cuda_ladder_open() with the new width, height, bpc,
 * chroma, cuda_context or cuda_stream): the next vmaf_cuda_ladder_send() sends its first
 * frame, numbered after the frames sent so far; temporal features (motion) start afresh
 * there, as in a new stream (libvmaf's first frame). Each rendition's session handle stays
 * the same and covers the whole stream: vmaf_cuda_receive() gives every frame in order,
 * vmaf_cuda_pooled() pools over every segment (the same sums, in frame order), and
 * vmaf_cuda_write_log() writes one log with every frame, numbered continuously, and the
 * segments ("segments" in JSON: first_frame, frames, width, height, bit_depth; XML
 * <segments>; CSV and SUB have no place for them). With n_subsample, each segment counts
 * from its own first frame. vmaf_cuda_truncate() may cut into any earlier segment with
 * keep_history; without it, back into the previous segment while the cut drops no more
 * than the last 64 scored frames (older segments are let go: memory stays flat over any
 * number of changes). Every rendition goes on, also one that was flushed (ended) before: flush
 * its session again to end it (or a segment ending, e.g. a graph re-created, would end
 * renditions for good). The ladder's picture
 * counts (vmaf_cuda_ladder_pictures_released(), vmaf_cuda_pictures_released()) go on
 * counting from the first frame; every picture sent before is released.
 * Errors (message in `err` and vmaf_cuda_ladder_error_message()): EINVAL when `s` is
 * invalid or its models and features score other names than the stream so far, the
 * errors of vmaf_cuda_ladder_open(); the ladder is then flushed and takes no more frames.
 */
int vmaf_cuda_ladder_reopen(VmafCudaLadder *l, const VmafCudaSettings *s, char *err,
                            size_t err_size);
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

/* ---- Pool names, the end-of-stream summary (API 6) ---- */

/** Every VmafCudaPool name, in enum order, for messages. */
#define VMAF_CUDA_POOL_NAMES "mean, harmonic_mean, min, max, perc1, perc5, perc10"

/** The VmafCudaPool called `name` (one of VMAF_CUDA_POOL_NAMES, exactly), or -1 (also
 *  for NULL). */
int vmaf_cuda_pool_from_name(const char *name);

/** The name of a VmafCudaPool ("mean", "harmonic_mean", "min", "max", "perc1", "perc5",
 *  "perc10"), or NULL when `pool` is not one. */
const char *vmaf_cuda_pool_name(int pool);

/** The percentile p of a percentile pool (VMAF_CUDA_POOL_PERC1/5/10: 1, 5, 10), else 0. */
unsigned vmaf_cuda_pool_percentile(int pool);

/**
 * The end-of-stream score lines, as FFmpeg's libvmaf filter and libvmaf's `vmaf` print
 * them (API 6): one "VMAF score: %f" line per model, in model order, pooled with `pool`;
 * then for each bootstrap collection NAME (vmaf_cuda_model_bootstrap_count() > 0)
 * "NAME: B, ci.p95: [LO, HI], stddev: S" (NAME_bagging, NAME_ci_p95_lo, NAME_ci_p95_hi,
 * NAME_stddev pooled with `pool`). Every line starts with `prefix` (NULL: none; e.g.
 * "rendition 2: ") and ends with '\n'; numbers are printf's "%f" in the C locale. No
 * model (no_prediction): "". Like snprintf: writes at most `size` bytes into `buf`
 * (NUL-terminated when size > 0; buf may be NULL when size is 0) and returns the length
 * of the whole text, so a second call with a buffer of that length + 1 gets it all.
 * `pool` is an enum VmafCudaPool value (an int, as vmaf_cuda_pool_name() takes: EINVAL for
 * one out of range).
 * Errors: those of vmaf_cuda_pooled() (EINVAL: no frame scored; ESTATE: a percentile pool
 * without the per-frame history), with the session's message.
 */
int vmaf_cuda_summary(VmafCudaSession *vs, int pool, const char *prefix,
                      char *buf, size_t size);

/* ---- Live QA (API 6): rolling windows, the NDJSON stream, the SEI payload ---- */

/**
 * Parses a window: "N" (the last N scored frames, 1..100000000) or a duration "Xs" /
 * "Xms" (X a decimal number as strtod reads it, > 0: the scored frames whose time lies
 * within the trailing X seconds / milliseconds). Returns 0 and sets exactly one of
 * *frames and *seconds (the other 0; either pointer may be NULL), or VMAF_CUDA_EINVAL
 * (NULL, "", "0", "2m", "2 s", "1e400s" ...).
 */
int vmaf_cuda_parse_window(const char *text, uint64_t *frames, double *seconds);

/**
 * Whether an NDJSON path is a stream rather than a file: "-", "pipe:", "pipe:N" (file
 * descriptor N) or an existing named pipe (FIFO). Opening a FIFO for writing waits for
 * its reader, so a caller should not probe it before the first frame (a regular path can
 * be checked with vmaf_cuda_check_log_path()). 0 for NULL.
 */
int vmaf_cuda_live_path_is_stream(const char *path);

/** The 16-byte UUID of the SEI user data unregistered message (H.264/HEVC) carrying a
 *  frame's scores: 0f45043e-7bf6-415b-bbff-2b7dcf51213c. */
#define VMAF_CUDA_LIVE_SEI_UUID                                                        \
    { 0x0f, 0x45, 0x04, 0x3e, 0x7b, 0xf6, 0x41, 0x5b,                                  \
      0xbb, 0xff, 0x2b, 0x7d, 0xcf, 0x51, 0x21, 0x3c }

/** Live QA settings. Start from vmaf_cuda_live_default_settings(). */
typedef struct VmafCudaLiveSettings {
    /** Rolling window of each model's scores, vmaf_cuda_parse_window() syntax: "50" (the
     *  last 50 scored frames) or "2s" / "500ms" (the scored frames whose time key lies
     *  within the trailing duration, time keys from `pts`, so variable frame rates and
     *  n_subsample are handled). NULL or "": no window (default). */
    const char *window;
    /** NDJSON: a "window" line after every window_log-th scored frame (needs `window`
     *  and `ndjson_path`); 0: none (default). */
    unsigned window_log;
    /** Non-zero: each frame's SEI payload (VmafCudaLiveFrame.sei). Default 0. */
    int sei;
    /** The NDJSON stream, one JSON object per line, opened at the first line written:
     *  "-" or "pipe:" (standard output), "pipe:N" (file descriptor N, duplicated), a
     *  named pipe (its reader must be there by then), or a file (created or truncated,
     *  written as it goes: never under a temporary name). NULL: none (default). */
    const char *ndjson_path;
    /** Digits of the numbers in the NDJSON lines and the SEI payload, as
     *  vmaf_cuda_write_log(): 1..17, or -1 (max: %.17g). Default 6. */
    int precision;
    /** The pool= of the caller: VMAF_CUDA_POOL_MAX adds "max" to the window values, a
     *  percentile pool adds "perc1" / "perc5" / "perc10" (nearest rank, as
     *  vmaf_cuda_pooled()) to the window values and to the NDJSON pooled line. Default
     *  VMAF_CUDA_POOL_MEAN. */
    enum VmafCudaPool pool;
    /** Time base of the pts given to vmaf_cuda_live_frame(): a tick is tb_num / tb_den
     *  seconds (both > 0; default 1/1). */
    int tb_num, tb_den;
    /** Frame rate fr_num / fr_den (0/0: unknown, the default): a frame without pts takes
     *  the previous frame's time key plus one frame period (one tick when unknown). */
    int fr_num, fr_den;
    /** Prepended to every metadata key (VmafCudaLiveFrame.meta_keys), e.g. "lavfi.vmaf."
     *  for FFmpeg frame metadata. NULL: none (default). */
    const char *key_prefix;
    /** Non-zero: the metadata starts with the frame's scores, as FFmpeg's libvmaf filter
     *  names them: "score" (the first model's), "score.MODEL" (every model's, with
     *  several models), then every other score by its name (features, a collection's
     *  members), in the frame's order; values printf's "%.17g". Default 0. */
    int score_meta;
} VmafCudaLiveSettings;

/** Fills `s` with the defaults (no window, no NDJSON, no SEI, precision 6, pool MEAN,
 *  time base 1/1, frame rate unknown). */
void vmaf_cuda_live_default_settings(VmafCudaLiveSettings *s);

/** Live QA over a session's scored frames, frame by frame in output order. */
typedef struct VmafCudaLive VmafCudaLive;

/**
 * Opens the live state of session `vs` (its models name the windows; the session is not
 * kept). Nothing is opened or written yet. The window values of a model, each a double:
 *   frames        the number n of scored frames in the window;
 *   min, max      the smallest / largest score, NaN ignored unless all are NaN;
 *   mean          S / n, S the exact sum of the window's scores rounded once to double
 *                 (what Python's math.fsum() returns; kept exact under additions and
 *                 removals, so O(1) per frame and no drift over days; it can differ in the
 *                 last bits from a left-to-right double sum, which vmaf_cuda_pooled() uses
 *                 over the whole stream as libvmaf does);
 *   harmonic_mean n / T - 1, T the same exact sum of 1.0 / (score + 1.0);
 *   percN         (with a percentile pool) the score at rank max(1, ceil(N * n / 100)) of
 *                 the window sorted ascending, NaN last (O(log n) per frame).
 * A window holding NaN or an infinity has mean and harmonic_mean NaN or +-inf.
 * Errors (message in err, at most err_size bytes): EINVAL (a bad window, window_log
 * without a window or without ndjson_path, precision, time base, pool).
 */
int vmaf_cuda_live_open(VmafCudaLive **out, const VmafCudaSession *vs,
                        const VmafCudaLiveSettings *s, char *err, size_t err_size);

/** Whether the live state has work per frame: a window, an NDJSON stream or SEI. */
int vmaf_cuda_live_active(const VmafCudaLive *l);

/** What one scored frame carries out of vmaf_cuda_live_frame(); valid until the next call
 *  on the live state. */
typedef struct VmafCudaLiveFrame {
    /** With score_meta: the frame's scores as text (see VmafCudaLiveSettings), then,
     *  with a window: the window values as text, keys (with key_prefix) "window.frames",
     *  "window.min", "window.mean", "window.harmonic_mean", then "window.max" (pool MAX)
     *  or "window.percN" (a percentile pool), of the first model; with several models
     *  also "window.MODEL.frames" ... for each model. frames in decimal, the others
     *  "%.17g" (parsing gives the exact double; "nan" for NaN). 0 without either. */
    size_t nb_meta;
    const char *const *meta_keys;
    const char *const *meta_values;
    /** With sei: the SEI payload, VMAF_CUDA_LIVE_SEI_UUID then UTF-8 JSON (no NUL):
     *  {"frameNum":N,"scores":{"MODEL":V,...},"window":{"MODEL":{"frames":K,"min":...}}}
     *  (window only with a window; numbers as the NDJSON lines). NULL without sei. */
    const uint8_t *sei;
    size_t sei_size;
} VmafCudaLiveFrame;

/**
 * One scored frame, in output order (the frames vmaf_cuda_receive() returned, or those
 * of them a caller passes on): updates each model's window, writes the frame's NDJSON
 * line(s) and fills *out.
 *
 * `pts`: the frame's time in the settings' time base; has_pts = 0 when unknown (its time
 * key is then the previous one plus one frame period). Time keys never go back: a pts
 * below the previous one counts as the previous one.
 *
 * NDJSON lines (one JSON object each, '\n'-terminated, written at once):
 *   {"type":"frame","frameNum":N,"pts_time":T,"metrics":{"integer_adm2":...,"vmaf":...}}
 *   {"type":"window","frameNum":N,"pts_time":T,"window":{"vmaf":{"frames":K,"min":...,
 *    "mean":...,"harmonic_mean":...}}}              (after every window_log-th frame)
 * Names are the frame's (VmafCudaFrameScores.names, as the JSON log has them), numbers
 * are printed as vmaf_cuda_write_log() prints them with `precision`, a NaN or infinity
 * as null; pts_time is seconds ("%.6f") or null without pts.
 *
 * Returns 0; VMAF_CUDA_EIO when the NDJSON stream failed now (it cannot be opened or
 * written, e.g. its reader went away or the disk is full: vmaf_cuda_live_error() says so,
 * naming the path and the reason; *out is still filled, and no later line is written);
 * VMAF_CUDA_ENOMEM; VMAF_CUDA_EINVAL (NULL argument, or names that are not UTF-8).
 */
int vmaf_cuda_live_frame(VmafCudaLive *l, const VmafCudaFrameScores *fs, int64_t pts,
                         int has_pts, VmafCudaLiveFrame *out);

/** A model's window values now, as vmaf_cuda_live_open() defines them. */
typedef struct VmafCudaWindowStats {
    uint64_t frames;      /**< scored frames in the window (0: empty, the values NaN) */
    double min, max, mean, harmonic_mean;
    double perc;          /**< the pool's percentile, NaN without a percentile pool */
} VmafCudaWindowStats;

/** The window values of model `model` (0-based, session model order) after the last
 *  vmaf_cuda_live_frame(). Errors: EINVAL (no window, model out of range, NULL). */
int vmaf_cuda_live_window(const VmafCudaLive *l, unsigned model, VmafCudaWindowStats *out);

/**
 * Ends the NDJSON stream (nothing without one): writes the last line,
 *   {"type":"pooled","frames":F,"pooled_metrics":{"vmaf":{"min":...,"max":...,"mean":...,
 *    "harmonic_mean":...},...}}
 * with every metric of the first frame pooled over the session's frames by
 * vmaf_cuda_pooled() (null where it fails), in libvmaf's order min, max, mean,
 * harmonic_mean, then the pool's percentile with a percentile pool; no metric when
 * `frames` is 0 or `vs` NULL. `frames`: the count to report (e.g. the frames output).
 * Then closes the stream. Returns 0, or VMAF_CUDA_EIO (message: vmaf_cuda_live_error()).
 * Later calls do nothing.
 */
int vmaf_cuda_live_finish(VmafCudaLive *l, VmafCudaSession *vs, uint64_t frames);

/**
 * The consumer took only the frames before session frame index `frames` (e.g. ffmpeg's
 * -frames:v N closed the output after frames that had gone out already): an NDJSON file
 * (a regular file) is cut back to the lines of the frames before it, so that it holds
 * exactly the frames output, as the JSON log does after vmaf_cuda_truncate(); the pooled
 * line follows at vmaf_cuda_live_finish(). Returns 0 (cut, or nothing to cut); 1 when
 * lines of later frames went to a stream (a pipe, a FIFO, a descriptor), which cannot
 * take them back (vmaf_cuda_live_error() says so, for a warning); VMAF_CUDA_EIO when the
 * file could not be cut (message: vmaf_cuda_live_error()); EINVAL for NULL.
 */
int vmaf_cuda_live_truncate(VmafCudaLive *l, uint64_t frames);

/** The message of the live state's last error ("" if none). */
const char *vmaf_cuda_live_error(const VmafCudaLive *l);

/**
 * Writes an event line into the NDJSON stream (API 8), in order with the frame lines
 * (the filter writes it after the lines of the frame it came with; vmaf_cuda_live_truncate()
 * cuts where the first frame not output starts, so it stays with its frame):
 * {"type":"event","event":EVENT,"input":INPUT,"pts_time":T,"message":MESSAGE}, T the
 * time of `pts` in the live state's time base (null without `has_pts`), INPUT omitted
 * when NULL, MESSAGE without a trailing newline. What a live run reports at once: an
 * input "ended", "stalled" or "resumed" (vmaf_cuda_pairing_live_check()). Opens the
 * stream as a frame line would. Returns 0 (also without an NDJSON stream: nothing
 * written), VMAF_CUDA_EIO when the stream failed (vmaf_cuda_live_error()), EINVAL for a
 * NULL live state, event or message.
 */
int vmaf_cuda_live_event(VmafCudaLive *l, const char *event, const char *input, int64_t pts,
                         int has_pts, const char *message);

/** Counts a main frame that went out unscored (API 9), for vmaf_cuda_live_metrics():
 *  `reason` as lavfi.vmaf.unscored has it (no_reference, reference_ended, reference_gap,
 *  reference_stalled; NULL or "": "unknown"). Returns 0 or EINVAL (NULL live state). */
int vmaf_cuda_live_unscored(VmafCudaLive *l, const char *reason);

/**
 * Dashboards (API 9): the metrics of `n` live states (a ladder's renditions: labelled
 * rendition="k" when n > 1) in the Prometheus text exposition format 0.0.4, what the
 * filter's metrics_port serves. Each family once, with HELP and TYPE lines:
 *   vmaf_cuda_uptime_seconds                 gauge: since vmaf_cuda_live_open();
 *   vmaf_cuda_frames_scored_total            counter: frames given to vmaf_cuda_live_frame();
 *   vmaf_cuda_frames_unscored_total{reason}  counter: vmaf_cuda_live_unscored() calls;
 *   vmaf_cuda_events_total{event,input}      counter: vmaf_cuda_live_event() calls;
 *   vmaf_cuda_frame_number, vmaf_cuda_frame_pts_seconds  gauges: the last scored frame's
 *                                            frameNum and time (no sample before it);
 *   vmaf_cuda_frame_score{metric}            gauge: its value of each feature and model,
 *                                            by the names of VmafCudaFrameScores;
 *   vmaf_cuda_window_score{model,stat}       gauge, with a window: frames, min, mean,
 *                                            harmonic_mean, and max or percN (pool).
 * Values print as %.17g (parsing gives the same double), NaN as NaN. Safe to call from
 * another thread while the live states are used (not closed). Returns the text's length
 * (as snprintf; at most size - 1 bytes written, NUL-terminated; buf may be NULL with size
 * 0; the next call's text may be longer: give room), or EINVAL (no live state), ENOMEM.
 */
int vmaf_cuda_live_metrics(const VmafCudaLive *const *lives, unsigned n, char *buf,
                           size_t size);

/** A scrape endpoint for live states (vmaf_cuda_metrics_serve()). */
typedef struct VmafCudaMetricsServer VmafCudaMetricsServer;

/**
 * Serves vmaf_cuda_live_metrics() of `n` live states over HTTP (API 9), what the filter's
 * metrics_port does: listens on `address` (a numeric IPv4 or IPv6 address, "[::1]", or a
 * name; "0.0.0.0" or "::" for every interface) and `port` (1..65535), and answers from a
 * thread of its own, one request at a time: GET or HEAD of /metrics or / (a query string
 * is ignored) with the text (Content-Type text/plain; version=0.0.4), other paths 404,
 * other methods 405. Each client's request must arrive within 2 s (at most 8 KiB of
 * headers) and its reply go out within 2 s, and its connection is closed after the reply,
 * so no client holds the server. The live states must stay open until
 * vmaf_cuda_metrics_close(). Errors (message in `err`): EINVAL (no live state, a port out
 * of range, an address that does not resolve), EIO (cannot listen: the address and the
 * system's reason, e.g. "Address already in use"), ENOMEM.
 */
int vmaf_cuda_metrics_serve(VmafCudaMetricsServer **out, const VmafCudaLive *const *lives,
                            unsigned n, const char *address, int port, char *err,
                            size_t err_size);

/** Stops the server (within about 0.2 s, a client's reply cut short) and closes its
 *  socket; NULL is a no-op. */
void vmaf_cuda_metrics_close(VmafCudaMetricsServer *s);

/** Closes the live state (and the NDJSON stream without its pooled line); NULL is a no-op. */
void vmaf_cuda_live_close(VmafCudaLive *l);

/* ---- The pairing watch (API 6): how two timed inputs were paired ---- */

/** "No timestamp" in the pairing watch: INT64_MIN (FFmpeg's AV_NOPTS_VALUE). */
#define VMAF_CUDA_NOPTS INT64_MIN

/**
 * Watches how a frame synchroniser paired two timed inputs, main and reference, with
 * FFmpeg's framesync defaults as FFmpeg's libvmaf filter uses them (each main frame meets
 * the last reference frame at or before its time; an input that ended repeats its last
 * frame), and says at the end where that was probably not what the user meant. It only
 * watches: the caller pairs (the vmaf_cuda filter does, per rendition). Times are ticks
 * of a time base, VMAF_CUDA_NOPTS for none.
 */
typedef struct VmafCudaPairing VmafCudaPairing;

/** The pairing watch's settings. */
typedef struct VmafCudaPairingSettings {
    int tb_num, tb_den;          /**< time base: a tick is tb_num / tb_den s (both > 0) */
    int main_rate_num, main_rate_den; /**< the main's frame rate (0/0: unknown) */
    int ref_rate_num, ref_rate_den;   /**< the reference's frame rate (0/0: unknown) */
    const char *prefix;          /**< starts every message (e.g. "rendition 2: "); NULL: "" */
    int nearest;                 /**< non-zero: the synchroniser pairs each main frame with
                                      the nearest reference frame (ts_sync_mode=nearest) */
} VmafCudaPairingSettings;

/** Opens a pairing watch. Errors: EINVAL (NULL, a time base not > 0), ENOMEM. */
int vmaf_cuda_pairing_open(VmafCudaPairing **out, const VmafCudaPairingSettings *s);

/** A frame queued on input 0 (main) or 1 (reference): each frame once, in input order,
 *  before the events that use or pass over it. `duration` in ticks, 0 when unknown. */
int vmaf_cuda_pairing_frame(VmafCudaPairing *p, int input, int64_t pts, int64_t duration);

/**
 * Places a frame queued on input 0 (main) or 1 (reference) on the input's continuous
 * timeline (API 7): each frame once, in input order, before vmaf_cuda_pairing_frame()
 * records it (with its pts plus *offset). Writes into *offset the ticks to add to `pts`
 * and to every later frame's of the input (0 until a discontinuity). A timestamp going
 * back by more than 1 s or 10 frames (a reset, a wrap the demuxer did not undo) starts a
 * new stretch one frame (the input's last step between two frames, else a frame
 * duration) after the input's previous frame; less (frames out of order, a repeated
 * timestamp) is left as it is; a jump ahead by more than 1 s and 10 frame durations (a
 * stall, lost frames) is reported and kept (pairing by the timestamps stays right when
 * the gap is real). Returns 1 when this frame is such a discontinuity, with the warning
 * in `line` (with the prefix, ending in '\n'; NULL: none; at most `size` bytes,
 * NUL-terminated), 0 otherwise; EINVAL (NULL p or offset, input not 0 or 1), ENOMEM.
 * `pts` VMAF_CUDA_NOPTS: only *offset. `duration` in ticks, 0 when unknown.
 */
int vmaf_cuda_pairing_timeline(VmafCudaPairing *p, int input, int64_t pts, int64_t duration,
                               int64_t *offset, char *line, size_t size);

/** One event of the synchroniser (FFmpeg: a framesync event). */
typedef struct VmafCudaPairingEvent {
    int64_t pts;            /**< the event's time */
    int64_t main_pts;       /**< the main frame's time */
    int has_ref;            /**< a reference frame was paired (0: the main frame goes out
                                 unscored) */
    int64_t ref_pts;        /**< the paired reference frame's time */
    int ref_ended;          /**< the reference's end is known: no frame follows it */
    int has_next_ref;       /**< the reference's next frame is known... */
    int64_t next_ref_pts;   /**< ...at this time */
    int64_t index;          /**< the frame's index in the log (-1: unscored) */
} VmafCudaPairingEvent;

/**
 * Records an event. Returns 1 when it was the first pair (a caller checks its pictures'
 * properties then), 0 otherwise, VMAF_CUDA_EINVAL for NULL. With `line` (NULL: none; at
 * most `size` bytes, NUL-terminated) the event as a debug line, with the prefix and no
 * newline: "pair N: main T s, reference T s" or "unscored: main T s (no reference frame)",
 * times as FFmpeg's av_ts_make_time_string2() prints seconds.
 */
int vmaf_cuda_pairing_event(VmafCudaPairing *p, const VmafCudaPairingEvent *e, char *line,
                            size_t size);

/**
 * The end-of-stream warnings, each line with the prefix and ending in '\n' ("" when the
 * inputs were aligned): an input ended first and its last frame was repeated; main frames
 * went out unscored (before the reference's first frame, after its end, or it delivered
 * none); reference frames never paired (between pairs: gaps in the main's timestamps);
 * main frames paired with a reference frame already used (gaps in the reference's);
 * the inputs start at different times; pairs where the next reference frame was nearer
 * (a timestamp offset of a part of a frame, or two time bases); different frame rates.
 * Like snprintf: returns the whole text's length, writes at most `size` bytes (buf may
 * be NULL when size is 0). EINVAL for NULL p.
 */
int vmaf_cuda_pairing_report(const VmafCudaPairing *p, char *buf, size_t size);

/**
 * Live rules (API 8), for a run beside a live feed, where nothing stands in for a missing
 * frame: a main frame whose time lies past its reference frame's duration, where the
 * reference has a gap (dropped frames, a stall, the frames a stop cut off) or has ended,
 * passes through unscored, and so does one paired with a reference frame more than half a
 * frame after it (a nearest-frame synchroniser across a gap). The next reference frame
 * within half a frame after a main frame within half a frame past the reference frame's
 * end is rounding (two time bases), not a gap. A gap of more than `timeout` ticks (> 0)
 * is told when it starts and ends. Decided on the frames' timestamps and durations
 * (vmaf_cuda_pairing_frame()). The caller ends its output at the main input's end (no
 * main frame is repeated). Errors: EINVAL (NULL, timeout not > 0).
 */
int vmaf_cuda_pairing_set_live(VmafCudaPairing *p, int64_t timeout);

/** What a live run tells the user at once (API 8). */
typedef struct VmafCudaPairingNotice {
    char event[16];     /**< "ended", "stalled", "resumed"; "" when nothing is to be told */
    char input[16];     /**< the input it is about: "main" or "reference" */
    int64_t pts;        /**< the time it applies from (VMAF_CUDA_NOPTS: unknown) */
    char message[512];  /**< the warning, with the prefix, ending in '\n' */
} VmafCudaPairingNotice;

/**
 * The live rules for an event, before vmaf_cuda_pairing_event() records it (API 8):
 * returns 1 when its main frame is scored, 0 when it passes through unscored (then
 * *reason, when `reason` is given, is a static string: "no_reference" before the
 * reference's first frame, "reference_ended", "reference_gap", "reference_stalled" (in a
 * gap longer than the timeout); else NULL), and fills `n` (required) when something
 * starts or ends at it: the reference "ended" (at the first main frame after its end),
 * "stalled" (the first main frame in a gap longer than the timeout) or "resumed" (the
 * first pair after that; "main": the main had no frame for more than the timeout). The caller then records the event with has_ref 0
 * for an unscored frame. Without vmaf_cuda_pairing_set_live(): 1 when e->has_ref, else 0
 * with "no_reference", nothing told. Errors: EINVAL (NULL p, e or n), ENOMEM.
 */
int vmaf_cuda_pairing_live_check(VmafCudaPairing *p, const VmafCudaPairingEvent *e,
                                 VmafCudaPairingNotice *n, const char **reason);

/**
 * At the synchroniser's end (API 8), call until n->event is "": first a notice still
 * pending (the main's gap, when the reference had a notice of its own at the last
 * frame), then, with `reference_ended` (the synchroniser ended at the reference's end
 * while the main input had frames left: shortest=1 or eof_action=endall), the notice
 * "ended" (unless told already). Nothing without live rules. (The main input's end is the
 * output's end: no notice; which of the reference's frames were left then is not known
 * to a synchroniser that has not read them.) Errors: EINVAL (NULL), ENOMEM.
 */
int vmaf_cuda_pairing_live_end(VmafCudaPairing *p, int reference_ended, VmafCudaPairingNotice *n);

/** Closes the pairing watch; NULL is a no-op. */
void vmaf_cuda_pairing_close(VmafCudaPairing *p);

#ifdef __cplusplus
}
#endif

#endif /* VMAF_CUDA_H */
