/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * The live state of the vmaf_cuda filter (vmaf_cuda_live.h): one rolling window per
 * model, the window metadata, the NDJSON log, the SEI payload.
 *
 * NDJSON lines (one JSON object each, '\n'-terminated, flushed at once):
 *   {"type":"frame","frameNum":N,"pts_time":T,"metrics":{"integer_adm2":...,"vmaf":...}}
 *   {"type":"window","frameNum":N,"pts_time":T,"window":{"vmaf":{"frames":K,"min":...,
 *    "mean":...,"harmonic_mean":...}}}                       (every window_log frames)
 *   {"type":"pooled","frames":N,"pooled_metrics":{"vmaf":{"min":...,"max":...,"mean":...,
 *    "harmonic_mean":...}, ...}}                               (at the end)
 * Metric names and number format are the JSON log's (precision=); non-finite numbers are
 * null; pts_time is null for a frame without a timestamp.
 *
 * SEI payload: the 16-byte UUID, then {"frameNum":N,"scores":{"vmaf":...},
 * "window":{"vmaf":{"frames":K,"min":...,...}}} (window only with window=), UTF-8, no NUL.
 */

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200112L /* fdopen, dup (FFmpeg's build defines it already) */
#endif

#include "vmaf_cuda_live.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define NB_STATS_MAX 6

struct VmafCudaLive {
    int precision, pool, sei;
    unsigned window_log;
    size_t win_frames;
    int64_t win_ticks;          /**< duration windows, in ticks of the time base */
    int windowed;
    unsigned perc;
    int tb_num, tb_den;
    int64_t frame_ticks;        /**< ticks per frame, for frames without pts */
    char *ndjson_path;
    FILE *out;
    int out_failed;

    unsigned nb_models;
    char **model_names;
    int *model_col;             /**< column of each model's score (-1: not found) */
    VmafLiveWindow *win;

    unsigned nb_names;          /**< metric names of the first scored frame */
    char **names;

    const char *stat_names[NB_STATS_MAX];
    unsigned nb_stats;
    char **meta_keys, **meta_values;
    size_t nb_meta;

    int64_t last_t;
    int have_t;
    uint64_t nb_frames;
    VmafLiveBuf line, sei_buf;
    VmafLiveStats *stats;       /**< per model, of the current frame */
    char err[512];
};

static void set_err(VmafCudaLive *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->err, sizeof(l->err), fmt, ap);
    va_end(ap);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

int vmaf_cuda_live_open(VmafCudaLive **out, const VmafCudaLiveConfig *cfg, char *err, size_t err_size)
{
    VmafCudaLive *l = calloc(1, sizeof(*l));
    double seconds = 0;

    *out = NULL;
    if (!l) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
#define FAIL(...) do { snprintf(err, err_size, __VA_ARGS__); vmaf_cuda_live_close(l); return -1; } while (0)
    l->precision = cfg->precision;
    l->pool = cfg->pool;
    l->sei = cfg->sei;
    l->window_log = cfg->window_log;
    l->perc = vmaf_live_pool_percentile(cfg->pool);
    l->tb_num = cfg->tb_num > 0 ? cfg->tb_num : 1;
    l->tb_den = cfg->tb_den > 0 ? cfg->tb_den : 1;
    if (cfg->window) {
        if (vmaf_live_parse_window(cfg->window, &l->win_frames, &seconds) < 0)
            FAIL("window '%s' is neither a number of frames (window=50) nor a duration "
                 "(window=2s, window=500ms)", cfg->window);
        l->windowed = 1;
        if (!l->win_frames) {
            double ticks = seconds * l->tb_den / l->tb_num;
            l->win_ticks = ticks < 1 ? 1 : (int64_t)llrint(ticks);
        }
    }
    if (l->window_log && !l->windowed)
        FAIL("window_log=%u needs a window (window=N or window=2s)", l->window_log);
    if (l->window_log && !cfg->ndjson_path)
        FAIL("window_log=%u writes NDJSON lines: it needs log_fmt=ndjson and log_path", l->window_log);
    l->frame_ticks = 1;
    if (cfg->fr_num > 0 && cfg->fr_den > 0) {
        double t = (double)l->tb_den * cfg->fr_den / ((double)l->tb_num * cfg->fr_num);
        l->frame_ticks = t < 1 ? 1 : (int64_t)llrint(t);
    }
    if (cfg->ndjson_path && !(l->ndjson_path = dup_str(cfg->ndjson_path)))
        FAIL("out of memory");

    l->nb_models = cfg->nb_models;
    l->model_names = calloc(l->nb_models + 1, sizeof(char *));
    l->model_col = calloc(l->nb_models + 1, sizeof(int));
    l->win = calloc(l->nb_models + 1, sizeof(VmafLiveWindow));
    l->stats = calloc(l->nb_models + 1, sizeof(VmafLiveStats));
    if (!l->model_names || !l->model_col || !l->win || !l->stats)
        FAIL("out of memory");
    for (unsigned i = 0; i < l->nb_models; i++) {
        if (!(l->model_names[i] = dup_str(cfg->model_names[i] ? cfg->model_names[i] : "")))
            FAIL("out of memory");
        l->model_col[i] = -1;
        if (l->windowed && vmaf_live_window_init(&l->win[i], l->win_frames, l->win_ticks, l->perc) < 0)
            FAIL("invalid window");
    }

    /* the window values reported: min, mean, harmonic_mean, and what pool= asks for */
    l->stat_names[l->nb_stats++] = "min";
    l->stat_names[l->nb_stats++] = "mean";
    l->stat_names[l->nb_stats++] = "harmonic_mean";
    if (cfg->pool == VMAF_CUDA_POOL_MAX)
        l->stat_names[l->nb_stats++] = "max";
    if (l->perc)
        l->stat_names[l->nb_stats++] = vmaf_live_pool_name(cfg->pool);
    *out = l;
    return 0;
#undef FAIL
}

int vmaf_cuda_live_active(const VmafCudaLive *l)
{
    return l && (l->windowed || l->ndjson_path || l->sei);
}

const char *vmaf_cuda_live_error(const VmafCudaLive *l)
{
    return l ? l->err : "";
}

static double stat_value(const VmafLiveStats *st, const char *name)
{
    if (!strcmp(name, "min"))           return st->min;
    if (!strcmp(name, "mean"))          return st->mean;
    if (!strcmp(name, "harmonic_mean")) return st->harmonic_mean;
    if (!strcmp(name, "max"))           return st->max;
    return st->perc;
}

/* The metadata keys, made once the model columns are known. */
static int make_meta(VmafCudaLive *l)
{
    size_t per_model = 1 + l->nb_stats, n = 0;
    size_t total = per_model * (l->nb_models > 1 ? l->nb_models + 1 : 1);
    char key[512];

    l->meta_keys = calloc(total, sizeof(char *));
    l->meta_values = calloc(total, sizeof(char *));
    if (!l->meta_keys || !l->meta_values)
        return -1;
    for (unsigned m = 0; m < (l->nb_models > 1 ? l->nb_models + 1 : 1); m++) {
        for (unsigned k = 0; k <= l->nb_stats; k++) {
            const char *stat = k ? l->stat_names[k - 1] : "frames";
            if (m == 0)
                snprintf(key, sizeof(key), "lavfi.vmaf.window.%s", stat);
            else
                snprintf(key, sizeof(key), "lavfi.vmaf.window.%s.%s", l->model_names[m - 1], stat);
            l->meta_keys[n] = dup_str(key);
            l->meta_values[n] = calloc(1, 32);
            l->nb_meta = ++n;
            if (!l->meta_keys[n - 1] || !l->meta_values[n - 1])
                return -1;
        }
    }
    return 0;
}

static int first_frame(VmafCudaLive *l, const VmafCudaFrameScores *fs)
{
    l->nb_names = fs->count;
    if (!(l->names = calloc(fs->count + 1, sizeof(char *))))
        return -1;
    for (unsigned i = 0; i < fs->count; i++)
        if (!(l->names[i] = dup_str(fs->names[i])))
            return -1;
    for (unsigned m = 0; m < l->nb_models; m++)
        for (unsigned i = fs->count; i-- > 0;)
            if (l->model_col[m] < 0 && !strcmp(fs->names[i], l->model_names[m]))
                l->model_col[m] = (int)i;
    return l->windowed ? make_meta(l) : 0;
}

int vmaf_cuda_live_path_is_stream(const char *path)
{
    struct stat st;

    if (!path)
        return 0;
    if (!strcmp(path, "-") || !strncmp(path, "pipe:", 5))
        return 1;
    return !stat(path, &st) && S_ISFIFO(st.st_mode);
}

static int open_output(VmafCudaLive *l)
{
    const char *p = l->ndjson_path;
    int fd = -1;

    if (!strcmp(p, "-") || !strcmp(p, "pipe:"))
        fd = 1;
    else if (!strncmp(p, "pipe:", 5))
        fd = atoi(p + 5);
    if (fd >= 0) {
        int d = dup(fd);
        l->out = d >= 0 ? fdopen(d, "w") : NULL;
        if (!l->out && d >= 0)
            close(d);
    } else {
        l->out = fopen(p, "w");
    }
    if (!l->out) {
        set_err(l, "cannot open the NDJSON log '%s': %s", p, strerror(errno));
        return -1;
    }
    /* unbuffered: each line goes out in one write, and a failed one leaves nothing
     * behind in a buffer that a later flush would write after it */
    setvbuf(l->out, NULL, _IONBF, 0);
    return 0;
}

/* Writes the line in l->line, '\n', and flushes. */
static int write_line(VmafCudaLive *l)
{
    off_t pos;

    if (!l->ndjson_path || l->out_failed)
        return 0;
    if (l->line.oom) {
        set_err(l, "out of memory");
        return -1;
    }
    if (!l->out && open_output(l) < 0) {
        l->out_failed = 1;
        return VMAF_LIVE_EOUTPUT;
    }
    vmaf_live_buf_append(&l->line, "\n", 1);
    pos = ftello(l->out); /* -1 for a pipe */
    if (fwrite(l->line.s, 1, l->line.len, l->out) != l->line.len || fflush(l->out) != 0) {
        int err = errno;
        /* a regular file keeps whole lines only: cut the part of this one that was
         * written (a full disk) */
        if (pos >= 0)
            (void)!ftruncate(fileno(l->out), pos);
        set_err(l, "writing the NDJSON log '%s' failed: %s; it holds the lines before this "
                "one, and no further lines are written", l->ndjson_path, strerror(err));
        l->out_failed = 1;
        return VMAF_LIVE_EOUTPUT;
    }
    return 0;
}

static void key(VmafLiveBuf *b, const char *k)
{
    vmaf_live_buf_json_string(b, k);
    vmaf_live_buf_append(b, ":", 1);
}

static void num(VmafLiveBuf *b, const char *k, double v, int precision)
{
    key(b, k);
    vmaf_live_buf_json_number(b, v, precision);
}

static void uint_field(VmafLiveBuf *b, const char *k, uint64_t v)
{
    char n[32];
    key(b, k);
    snprintf(n, sizeof(n), "%llu", (unsigned long long)v);
    vmaf_live_buf_puts(b, n);
}

/* "window":{"<model>":{"frames":K,"min":...},...} */
static void window_object(VmafCudaLive *l, VmafLiveBuf *b)
{
    key(b, "window");
    vmaf_live_buf_puts(b, "{");
    for (unsigned m = 0; m < l->nb_models; m++) {
        if (m)
            vmaf_live_buf_puts(b, ",");
        key(b, l->model_names[m]);
        vmaf_live_buf_puts(b, "{");
        uint_field(b, "frames", l->stats[m].count);
        for (unsigned k = 0; k < l->nb_stats; k++) {
            vmaf_live_buf_puts(b, ",");
            num(b, l->stat_names[k], stat_value(&l->stats[m], l->stat_names[k]), l->precision);
        }
        vmaf_live_buf_puts(b, "}");
    }
    vmaf_live_buf_puts(b, "}");
}

static void frame_head(VmafCudaLive *l, VmafLiveBuf *b, const char *type, unsigned index,
                       int64_t pts, int has_pts)
{
    char t[64];
    vmaf_live_buf_reset(b);
    vmaf_live_buf_puts(b, "{\"type\":");
    vmaf_live_buf_json_string(b, type);
    vmaf_live_buf_puts(b, ",");
    uint_field(b, "frameNum", index);
    vmaf_live_buf_puts(b, ",");
    key(b, "pts_time");
    if (has_pts) {
        snprintf(t, sizeof(t), "%.6f", (double)pts * l->tb_num / l->tb_den);
        vmaf_live_buf_puts(b, t);
    } else {
        vmaf_live_buf_puts(b, "null");
    }
}

int vmaf_cuda_live_frame(VmafCudaLive *l, const VmafCudaFrameScores *fs, int64_t pts,
                         int has_pts, VmafCudaLiveFrame *out)
{
    int64_t t;
    int ret = 0;

    memset(out, 0, sizeof(*out));
    if (!l->nb_frames && first_frame(l, fs) < 0) {
        set_err(l, "out of memory");
        return -1;
    }
    l->nb_frames++;
    t = has_pts ? pts : (l->have_t ? l->last_t + l->frame_ticks : 0);
    if (l->have_t && t < l->last_t)
        t = l->last_t;
    l->last_t = t;
    l->have_t = 1;

    for (unsigned m = 0; m < l->nb_models; m++) {
        int c = l->model_col[m];
        double v = c >= 0 && (unsigned)c < fs->count ? fs->values[c] : NAN;
        if (l->windowed) {
            if (vmaf_live_window_push(&l->win[m], t, v) < 0) {
                set_err(l, "out of memory");
                return -1;
            }
            vmaf_live_window_stats(&l->win[m], &l->stats[m]);
        }
    }

    if (l->windowed) {
        size_t n = 0;
        for (unsigned m = 0; m < (l->nb_models > 1 ? l->nb_models + 1 : 1); m++) {
            const VmafLiveStats *st = &l->stats[m ? m - 1 : 0];
            snprintf(l->meta_values[n++], 32, "%zu", st->count);
            for (unsigned k = 0; k < l->nb_stats; k++)
                snprintf(l->meta_values[n++], 32, "%.17g", stat_value(st, l->stat_names[k]));
        }
        out->nb_meta = l->nb_meta;
        out->meta_keys = (const char *const *)l->meta_keys;
        out->meta_values = (const char *const *)l->meta_values;
    }

    if (l->ndjson_path && !l->out_failed) {
        frame_head(l, &l->line, "frame", fs->index, pts, has_pts);
        vmaf_live_buf_puts(&l->line, ",\"metrics\":{");
        for (unsigned i = 0; i < fs->count; i++) {
            if (i)
                vmaf_live_buf_puts(&l->line, ",");
            num(&l->line, fs->names[i], fs->values[i], l->precision);
        }
        vmaf_live_buf_puts(&l->line, "}}");
        ret = write_line(l);
        if (!ret && l->window_log && l->nb_frames % l->window_log == 0) {
            frame_head(l, &l->line, "window", fs->index, pts, has_pts);
            vmaf_live_buf_puts(&l->line, ",");
            window_object(l, &l->line);
            vmaf_live_buf_puts(&l->line, "}");
            ret = write_line(l);
        }
    }

    if (l->sei) {
        VmafLiveBuf *b = &l->sei_buf;
        vmaf_live_buf_reset(b);
        vmaf_live_buf_append(b, (const char *)vmaf_cuda_live_sei_uuid, 16);
        vmaf_live_buf_puts(b, "{");
        uint_field(b, "frameNum", fs->index);
        vmaf_live_buf_puts(b, ",\"scores\":{");
        for (unsigned m = 0; m < l->nb_models; m++) {
            int c = l->model_col[m];
            if (m)
                vmaf_live_buf_puts(b, ",");
            num(b, l->model_names[m], c >= 0 && (unsigned)c < fs->count ? fs->values[c] : NAN,
                l->precision);
        }
        vmaf_live_buf_puts(b, "}");
        if (l->windowed) {
            vmaf_live_buf_puts(b, ",");
            window_object(l, b);
        }
        vmaf_live_buf_puts(b, "}");
        if (b->oom) {
            set_err(l, "out of memory");
            return -1;
        }
        out->sei = (const uint8_t *)b->s;
        out->sei_size = b->len;
    }
    return ret;
}

int vmaf_cuda_live_finish(VmafCudaLive *l, VmafCudaSession *vs, uint64_t frames)
{
    static const int order[4] = { VMAF_CUDA_POOL_MIN, VMAF_CUDA_POOL_MAX, VMAF_CUDA_POOL_MEAN,
                                  VMAF_CUDA_POOL_HARMONIC_MEAN };
    int ret = 0;

    if (!l || !l->ndjson_path || l->out_failed)
        return 0;
    vmaf_live_buf_reset(&l->line);
    vmaf_live_buf_puts(&l->line, "{\"type\":\"pooled\",");
    uint_field(&l->line, "frames", frames);
    vmaf_live_buf_puts(&l->line, ",\"pooled_metrics\":{");
    for (unsigned i = 0; frames && vs && i < l->nb_names; i++) {
        if (i)
            vmaf_live_buf_puts(&l->line, ",");
        key(&l->line, l->names[i]);
        vmaf_live_buf_puts(&l->line, "{");
        for (int k = 0; k < 5; k++) {
            int pool = k < 4 ? order[k] : l->pool;
            double v;
            if (k == 4 && !l->perc)
                break;
            if (vmaf_cuda_pooled(vs, l->names[i], pool, &v) < 0)
                v = NAN;
            if (k)
                vmaf_live_buf_puts(&l->line, ",");
            num(&l->line, vmaf_live_pool_name(pool), v, l->precision);
        }
        vmaf_live_buf_puts(&l->line, "}");
    }
    vmaf_live_buf_puts(&l->line, "}}");
    ret = write_line(l);
    if (l->out) {
        if (fclose(l->out) != 0 && !ret) {
            set_err(l, "closing the NDJSON log '%s' failed: %s", l->ndjson_path, strerror(errno));
            ret = VMAF_LIVE_EOUTPUT;
        }
        l->out = NULL;
    }
    l->out_failed = 1; /* nothing more */
    return ret;
}

void vmaf_cuda_live_close(VmafCudaLive *l)
{
    if (!l)
        return;
    if (l->out)
        fclose(l->out);
    for (unsigned i = 0; l->model_names && i < l->nb_models; i++)
        free(l->model_names[i]);
    for (unsigned m = 0; l->win && m < l->nb_models; m++)
        vmaf_live_window_free(&l->win[m]);
    for (unsigned i = 0; l->names && i < l->nb_names; i++)
        free(l->names[i]);
    for (size_t i = 0; i < l->nb_meta; i++) {
        free(l->meta_keys[i]);
        free(l->meta_values[i]);
    }
    free(l->meta_keys);
    free(l->meta_values);
    free(l->model_names);
    free(l->model_col);
    free(l->win);
    free(l->stats);
    free(l->names);
    free(l->ndjson_path);
    vmaf_live_buf_free(&l->line);
    vmaf_live_buf_free(&l->sei_buf);
    free(l);
}
