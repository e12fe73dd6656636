/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * Dashboards: metrics_port=N serves the library's metrics of the live run
 * (vmaf_cuda_live_metrics(): the last frame's scores, the window's, counts of frames
 * scored and unscored, events, uptime) in the Prometheus text format, on
 * metrics_address (default 127.0.0.1), at /metrics (and /). The HTTP server is FFmpeg's
 * own (libavformat's http protocol with listen=2, one client at a time) in a thread of
 * its own, which reads the renditions' live states while the filter thread scores.
 *
 * Copied into FFmpeg's libavfilter/ with vf_vmaf_cuda.c by patches/build-ffmpeg.sh.
 */

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <vmaf_cuda.h>

#include "libavformat/avio.h"
#include "libavutil/avstring.h"
#include "libavutil/dict.h"
#include "libavutil/error.h"
#include "libavutil/log.h"
#include "libavutil/mem.h"
#include "libavutil/opt.h"
#include "libavutil/thread.h"

#include "vmaf_cuda_pipeline.h"

struct VmafCudaMetrics {
    AVIOContext *server;
    pthread_t thread;
    atomic_int stop;
    const VmafCudaLive *lives[VMAF_CUDA_MAX_RENDITIONS];
    unsigned n;
    char where[320];             /**< "127.0.0.1:9100", for messages */
    void *log_ctx;
};

static int stopped(void *opaque)
{
    VmafCudaMetrics *m = opaque;
    return atomic_load(&m->stop);
}

/** One scrape: the request, then the metrics (200) or 404. */
static void serve(VmafCudaMetrics *m, AVIOContext *client)
{
    char *resource = NULL, *text = NULL;
    int ret, code = 404, len = 0;

    while ((ret = avio_handshake(client)) > 0) {
        av_freep(&resource);
        av_opt_get(client, "resource", AV_OPT_SEARCH_CHILDREN, (uint8_t **)&resource);
        if (resource && *resource)
            break;
    }
    if (ret < 0)
        goto end;
    if (resource && (!strcmp(resource, "/metrics") || !strcmp(resource, "/"))) {
        len = vmaf_cuda_live_metrics(m->lives, m->n, NULL, 0);
        if (len >= 0 && (text = av_malloc(len + 256)))
            len = vmaf_cuda_live_metrics(m->lives, m->n, text, len + 256);
        code = len >= 0 && text ? 200 : 500;
    }
    av_opt_set_int(client, "reply_code", code, AV_OPT_SEARCH_CHILDREN);
    av_opt_set(client, "content_type", "text/plain; version=0.0.4; charset=utf-8",
               AV_OPT_SEARCH_CHILDREN);
    while ((ret = avio_handshake(client)) > 0)
        ;
    if (ret >= 0 && code == 200) {
        avio_write(client, (const unsigned char *)text, len);
        avio_flush(client);
    }
end:
    av_free(resource);
    av_free(text);
    avio_closep(&client);
}

static void *server_thread(void *arg)
{
    VmafCudaMetrics *m = arg;

    while (!atomic_load(&m->stop)) {
        AVIOContext *client = NULL;
        int ret = avio_accept(m->server, &client);
        if (ret < 0) {
            if (atomic_load(&m->stop))
                break;
            av_log(m->log_ctx, AV_LOG_WARNING, "metrics_port (%s): accepting a scrape "
                   "failed: %s\n", m->where, av_err2str(ret));
            continue;
        }
        serve(m, client);
    }
    return NULL;
}

int ff_vmaf_cuda_metrics_start(AVFilterContext *ctx, VmafCudaPipeline *p, const char *address,
                               int port)
{
    AVIOInterruptCB cb = { stopped, NULL };
    AVDictionary *opts = NULL;
    VmafCudaMetrics *m;
    char url[400];
    int ret;

    if (port <= 0 || p->metrics)
        return 0;
    if (!(m = av_mallocz(sizeof(*m))))
        return AVERROR(ENOMEM);
    m->log_ctx = ctx;
    for (unsigned k = 0; k < p->n; k++)
        m->lives[m->n++] = p->r[k].st.live;
    /* an IPv6 address goes in brackets */
    snprintf(m->where, sizeof(m->where), strchr(address, ':') ? "[%s]:%d" : "%s:%d",
             address, port);
    snprintf(url, sizeof(url), "http://%s", m->where);
    av_dict_set(&opts, "listen", "2", 0);
    /* a client that connects and sends nothing holds the server no longer than this */
    av_dict_set(&opts, "rw_timeout", "5000000", 0);
    cb.opaque = m;
    ret = avio_open2(&m->server, url, AVIO_FLAG_WRITE, &cb, &opts);
    av_dict_free(&opts);
    if (ret < 0) {
        av_log(ctx, AV_LOG_ERROR, "metrics_port: cannot listen on %s: %s\n", m->where,
               av_err2str(ret));
        av_free(m);
        return ret;
    }
    if ((ret = pthread_create(&m->thread, NULL, server_thread, m))) {
        avio_closep(&m->server);
        av_free(m);
        return AVERROR(ret);
    }
    av_log(ctx, AV_LOG_INFO, "metrics_port: Prometheus metrics at http://%s/metrics\n",
           m->where);
    p->metrics = m;
    return 0;
}

void ff_vmaf_cuda_metrics_stop(VmafCudaPipeline *p)
{
    VmafCudaMetrics *m = p->metrics;

    if (!m)
        return;
    atomic_store(&m->stop, 1);
    pthread_join(m->thread, NULL);
    avio_closep(&m->server);
    av_free(m);
    p->metrics = NULL;
}
