/*
 * Liveness of vmaf_cuda's activate() through the libavfilter API: every input's frames
 * and its end are queued before the graph runs at all, then each output is pulled until
 * its end. A filter that returns from activate() with frames still queued on its inputs,
 * none sent out and no reason to be run again leaves av_buffersink_get_frame() with
 * EAGAIN although every input has ended: ffmpeg then aborts ("Assertion best_input >= 0
 * failed" in fftools/ffmpeg_filter.c). This is what ffmpeg meets when the decoders finish
 * before the filter has caught up; here it happens every time with FFmpeg 7.1's
 * buffersink (9.0's asks the filter again whenever the graph has nothing ready, which
 * hides a missing wake-up: the 7.1 build is the one that checks it).
 *
 * usage: liveness W H REF_FRAMES MAIN_FRAMES[,MAIN_FRAMES...] N_SUBSAMPLE [OPTIONS]
 *   one MAIN_FRAMES: the two-input filter; k of them: renditions=k (the ladder).
 *   OPTIONS: more vmaf_cuda options, e.g. "window=5" (appended after a ':').
 * Prints one line per output: frames out, frames with lavfi.vmaf.score, and checks that
 * each output gave max(main, reference) frames (framesync's defaults, which the options
 * given must keep: eof_action=repeat pairs the main frames after the reference's end
 * with its last frame, repeatlast=1 the main's last frame with the reference frames
 * after the main's end) and that the frames n_subsample scores carry lavfi.vmaf.score.
 * Exit 0: all as expected.
 * Frames are 8-bit 4:2:0 from a fixed seed: the reference a gradient with a moving
 * block, each rendition the reference plus seeded noise.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/mem.h>

#define MAX_INPUTS 9

static uint32_t rng_next(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static AVFrame *make_frame(int w, int h, int64_t pts, int rendition)
{
    AVFrame *f = av_frame_alloc();
    uint32_t seed = (uint32_t)(pts * 7919 + rendition * 104729 + 1);

    if (!f)
        return NULL;
    f->format = AV_PIX_FMT_YUV420P;
    f->width = w;
    f->height = h;
    f->pts = pts;
    if (av_frame_get_buffer(f, 0) < 0) {
        av_frame_free(&f);
        return NULL;
    }
    for (int p = 0; p < 3; p++) {
        int pw = p ? (w + 1) / 2 : w, ph = p ? (h + 1) / 2 : h;
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) {
                int v = (x * 3 + y * 2 + p * 40) & 255;
                if (!p && x >= (pts * 5) % pw && x < (pts * 5) % pw + 16 && y >= 8 && y < 24)
                    v = 255 - v; /* a moving block: motion is not zero */
                if (rendition >= 0)
                    v += (int)(rng_next(&seed) % 21) - 10;
                f->data[p][y * f->linesize[p] + x] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
    }
    return f;
}

int main(int argc, char **argv)
{
    int w, h, ref_frames, n_subsample, nb_main = 0, main_frames[MAX_INPUTS];
    AVFilterGraph *graph;
    AVFilterContext *src[MAX_INPUTS + 1], *sink[MAX_INPUTS], *vmaf;
    AVFrame *f;
    char args[512], opts[1024], *list, *tok, *save = NULL;
    int64_t out[MAX_INPUTS] = { 0 }, scored[MAX_INPUTS] = { 0 };
    int eof[MAX_INPUTS] = { 0 }, nb_eof = 0, ret, fail = 0;

    if (argc < 6) {
        fprintf(stderr, "usage: %s W H REF_FRAMES MAIN_FRAMES[,...] N_SUBSAMPLE [OPTIONS]\n",
                argv[0]);
        return 2;
    }
    w = atoi(argv[1]);
    h = atoi(argv[2]);
    ref_frames = atoi(argv[3]);
    n_subsample = atoi(argv[5]);
    list = av_strdup(argv[4]);
    for (tok = strtok_r(list, ",", &save); tok && nb_main < MAX_INPUTS;
         tok = strtok_r(NULL, ",", &save))
        main_frames[nb_main++] = atoi(tok);
    av_free(list);
    if (!nb_main || n_subsample < 1)
        return 2;

    graph = avfilter_graph_alloc();
    snprintf(args, sizeof(args), "video_size=%dx%d:pix_fmt=yuv420p:time_base=1/30:"
             "pixel_aspect=1/1", w, h);
    for (int i = 0; i <= nb_main; i++) {
        char name[16];
        snprintf(name, sizeof(name), "in%d", i);
        if ((ret = avfilter_graph_create_filter(&src[i], avfilter_get_by_name("buffer"),
                                                name, args, NULL, graph)) < 0) {
            fprintf(stderr, "buffer: %s\n", av_err2str(ret));
            return 1;
        }
    }
    /* renditions=1 is the two-input filter */
    snprintf(opts, sizeof(opts), "backend=cpu:n_subsample=%d:renditions=%d%s%s", n_subsample,
             nb_main, argc > 6 ? ":" : "", argc > 6 ? argv[6] : "");
    if ((ret = avfilter_graph_create_filter(&vmaf, avfilter_get_by_name("vmaf_cuda"), "vmaf",
                                            opts, NULL, graph)) < 0) {
        fprintf(stderr, "vmaf_cuda=%s: %s\n", opts, av_err2str(ret));
        return 1;
    }
    for (int i = 0; i <= nb_main; i++)
        if ((ret = avfilter_link(src[i], 0, vmaf, i)) < 0)
            return 1;
    for (int k = 0; k < nb_main; k++) {
        char name[16];
        snprintf(name, sizeof(name), "out%d", k);
        if ((ret = avfilter_graph_create_filter(&sink[k], avfilter_get_by_name("buffersink"),
                                                name, NULL, NULL, graph)) < 0 ||
            (ret = avfilter_link(vmaf, k, sink[k], 0)) < 0) {
            fprintf(stderr, "buffersink: %s\n", av_err2str(ret));
            return 1;
        }
    }
    if ((ret = avfilter_graph_config(graph, NULL)) < 0) {
        fprintf(stderr, "graph: %s\n", av_err2str(ret));
        return 1;
    }

    /* every frame and every end first, without running the graph (no PUSH flag) */
    for (int i = 0; i <= nb_main; i++) {
        int n = i < nb_main ? main_frames[i] : ref_frames;
        for (int64_t t = 0; t < n; t++) {
            AVFrame *in = make_frame(w, h, t, i < nb_main ? i : -1);
            if (!in || (ret = av_buffersrc_add_frame_flags(src[i], in, 0)) < 0) {
                fprintf(stderr, "add frame: %s\n", in ? av_err2str(ret) : "no memory");
                return 1;
            }
            av_frame_free(&in);
        }
        if ((ret = av_buffersrc_close(src[i], n, 0)) < 0)
            return 1;
    }

    /* then pull every output to its end, as ffmpeg does once no input can bring more */
    if (!(f = av_frame_alloc()))
        return 1;
    while (nb_eof < nb_main) {
        int again = 0;
        for (int k = 0; k < nb_main; k++) {
            if (eof[k])
                continue;
            ret = av_buffersink_get_frame(sink[k], f);
            if (ret >= 0) {
                int expect = (out[k] % n_subsample) == 0;
                int has = av_dict_get(f->metadata, "lavfi.vmaf.score", NULL, 0) != NULL;
                if (has != expect) {
                    fprintf(stderr, "output %d frame %" PRId64 ": %s a VMAF score "
                            "(n_subsample=%d)\n", k, out[k], has ? "has" : "lacks",
                            n_subsample);
                    fail = 1;
                }
                scored[k] += has;
                out[k]++;
            } else if (ret == AVERROR_EOF) {
                eof[k] = 1;
                nb_eof++;
            } else if (ret == AVERROR(EAGAIN)) {
                again++;
            } else {
                fprintf(stderr, "output %d: %s\n", k, av_err2str(ret));
                return 1;
            }
            av_frame_unref(f);
        }
        if (again && again == nb_main - nb_eof) {
            for (int k = 0; k < nb_main; k++)
                fprintf(stderr, "output %d: %" PRId64 " frames out%s\n", k, out[k],
                        eof[k] ? ", ended" : ", waiting");
            fprintf(stderr, "STALL: every input has ended, yet the filter wants more input "
                    "(EAGAIN); ffmpeg would abort here\n");
            return 1;
        }
    }
    for (int k = 0; k < nb_main; k++) {
        int64_t want = main_frames[k] > ref_frames ? main_frames[k] : ref_frames;
        printf("output %d: %" PRId64 " frames out, %" PRId64 " with a VMAF score\n", k,
               out[k], scored[k]);
        if (out[k] != want) {
            fprintf(stderr, "output %d: %" PRId64 " frames out, expected %" PRId64
                    "\n", k, out[k], want);
            fail = 1;
        }
    }
    av_frame_free(&f);
    avfilter_graph_free(&graph);
    return fail;
}
