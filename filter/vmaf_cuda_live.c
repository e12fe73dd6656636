/* SPDX-License-Identifier: BSD-2-Clause-Patent */
/**
 * @file
 * Live QA helpers of the vmaf_cuda filter: exact running sums, rolling windows,
 * option parsing and number formatting (see vmaf_cuda_live.h). The NDJSON log and the
 * SEI payload are in vmaf_cuda_live_log.c.
 */

#include "vmaf_cuda_live.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const uint8_t vmaf_cuda_live_sei_uuid[16] = VMAF_CUDA_LIVE_SEI_UUID;

/* ------------------------------------------------------------ exact running sum */

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t n = *cap ? *cap : 8;
    void *q;

    if (need <= *cap)
        return 0;
    while (n < need)
        n *= 2;
    q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* Python's math.fsum (Modules/mathmodule.c, Shewchuk's msum): the partials stay a
 * non-overlapping expansion of the exact sum; adding -x cancels x exactly. */
int vmaf_live_sum_add(VmafLiveSum *s, double x, int sign)
{
    size_t i = 0;

    if (!isfinite(x)) {
        int64_t d = sign < 0 ? -1 : 1;
        if (isnan(x))
            s->nan += d;
        else if (x > 0)
            s->pinf += d;
        else
            s->ninf += d;
        return 0;
    }
    if (sign < 0)
        x = -x;
    if (grow((void **)&s->p, &s->cap, s->n + 1, sizeof(double)) < 0)
        return -1;
    for (size_t j = 0; j < s->n; j++) {
        double y = s->p[j], hi, lo;
        if (fabs(x) < fabs(y)) {
            double t = x;
            x = y;
            y = t;
        }
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0)
            s->p[i++] = lo;
        x = hi;
    }
    s->n = i;
    if (x != 0.0)
        s->p[s->n++] = x;
    return 0;
}

double vmaf_live_sum_value(const VmafLiveSum *s)
{
    size_t n = s->n;
    const double *p = s->p;
    double hi = 0.0, lo = 0.0, x, y, yr;

    if (s->nan > 0 || (s->pinf > 0 && s->ninf > 0))
        return NAN;
    if (s->pinf > 0)
        return INFINITY;
    if (s->ninf > 0)
        return -INFINITY;
    if (n > 0) {
        hi = p[--n];
        /* add from the top while the sum stays exact */
        while (n > 0) {
            x = hi;
            y = p[--n];
            hi = x + y;
            yr = hi - x;
            lo = y - yr;
            if (lo != 0.0)
                break;
        }
        /* half-even rounding across partials */
        if (n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0))) {
            y = lo * 2.0;
            x = hi + y;
            yr = x - hi;
            if (y == yr)
                hi = x;
        }
    }
    return hi;
}

void vmaf_live_sum_free(VmafLiveSum *s)
{
    free(s->p);
    memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------ rings */

static VmafLiveEntry *ring_at(const VmafLiveRing *r, size_t i)
{
    return &r->e[(r->head + i) % r->cap];
}

static int ring_push(VmafLiveRing *r, VmafLiveEntry e)
{
    if (r->count == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        VmafLiveEntry *n = malloc(cap * sizeof(*n));
        if (!n)
            return -1;
        for (size_t i = 0; i < r->count; i++)
            n[i] = *ring_at(r, i);
        free(r->e);
        r->e = n;
        r->cap = cap;
        r->head = 0;
    }
    r->e[(r->head + r->count++) % r->cap] = e;
    return 0;
}

static void ring_pop_front(VmafLiveRing *r)
{
    r->head = (r->head + 1) % r->cap;
    r->count--;
}

static void ring_free(VmafLiveRing *r)
{
    free(r->e);
    memset(r, 0, sizeof(*r));
}

/* a < b with NaN after every number (min deque, percentiles) */
static int lt_nan_last(double a, double b)
{
    if (isnan(a) || isnan(b))
        return !isnan(a) && isnan(b);
    return a < b;
}

/* a > b with NaN before every number (max deque) */
static int gt_nan_first(double a, double b)
{
    if (isnan(a) || isnan(b))
        return !isnan(a) && isnan(b);
    return a > b;
}

/* ------------------------------------------------------------ order-statistic treap */

static int key_less(double a, uint64_t sa, double b, uint64_t sb)
{
    if (lt_nan_last(a, b))
        return 1;
    if (lt_nan_last(b, a))
        return 0;
    return sa < sb;
}

static uint32_t tsize(const VmafLiveTreapNode *n, int32_t t)
{
    return t < 0 ? 0 : n[t].size;
}

static void tupdate(VmafLiveTreapNode *n, int32_t t)
{
    n[t].size = 1 + tsize(n, n[t].l) + tsize(n, n[t].r);
}

static int32_t tmerge(VmafLiveTreapNode *n, int32_t a, int32_t b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    if (n[a].prio > n[b].prio) {
        n[a].r = tmerge(n, n[a].r, b);
        tupdate(n, a);
        return a;
    }
    n[b].l = tmerge(n, a, n[b].l);
    tupdate(n, b);
    return b;
}

/* *l: keys < (v, seq); *r: the others */
static void tsplit(VmafLiveTreapNode *n, int32_t t, double v, uint64_t seq, int32_t *l, int32_t *r)
{
    if (t < 0) {
        *l = *r = -1;
        return;
    }
    if (key_less(n[t].v, n[t].seq, v, seq)) {
        int32_t a, b;
        tsplit(n, n[t].r, v, seq, &a, &b);
        n[t].r = a;
        *l = t;
        *r = b;
    } else {
        int32_t a, b;
        tsplit(n, n[t].l, v, seq, &a, &b);
        n[t].l = b;
        *l = a;
        *r = t;
    }
    tupdate(n, t);
}

static int32_t terase(VmafLiveTreapNode *n, int32_t t, double v, uint64_t seq)
{
    if (t < 0)
        return t;
    if (n[t].seq == seq)
        return tmerge(n, n[t].l, n[t].r);
    if (key_less(v, seq, n[t].v, n[t].seq))
        n[t].l = terase(n, n[t].l, v, seq);
    else
        n[t].r = terase(n, n[t].r, v, seq);
    tupdate(n, t);
    return t;
}

static double tkth(const VmafLiveTreapNode *n, int32_t t, uint32_t k)
{
    while (t >= 0) {
        uint32_t ls = tsize(n, n[t].l);
        if (k < ls) {
            t = n[t].l;
        } else if (k == ls) {
            return n[t].v;
        } else {
            k -= ls + 1;
            t = n[t].r;
        }
    }
    return NAN;
}

static int32_t tnew(VmafLiveWindow *w, double v, uint64_t seq)
{
    int32_t i;

    if (w->free_list >= 0) {
        i = w->free_list;
        w->free_list = w->nodes[i].l;
    } else {
        size_t used = w->nodes_cap;
        if (grow((void **)&w->nodes, &w->nodes_cap, used + 1, sizeof(*w->nodes)) < 0)
            return -1;
        /* the new slots go on the free list, the first one is returned */
        for (size_t k = w->nodes_cap; k-- > used + 1;) {
            w->nodes[k].l = w->free_list;
            w->free_list = (int32_t)k;
        }
        i = (int32_t)used;
    }
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 17;
    w->rng ^= w->rng << 5;
    w->nodes[i] = (VmafLiveTreapNode){ .v = v, .seq = seq, .prio = w->rng, .l = -1, .r = -1, .size = 1 };
    return i;
}

/* ------------------------------------------------------------ window */

int vmaf_live_window_init(VmafLiveWindow *w, size_t max_frames, int64_t duration, unsigned perc)
{
    memset(w, 0, sizeof(*w));
    if ((!max_frames && duration <= 0) || perc > 100)
        return -1;
    w->max_frames = max_frames;
    w->duration = duration;
    w->perc = perc;
    w->root = -1;
    w->free_list = -1;
    w->rng = 0x9e3779b9u;
    return 0;
}

static int window_pop_front(VmafLiveWindow *w)
{
    VmafLiveEntry e = *ring_at(&w->values, 0);

    ring_pop_front(&w->values);
    if (vmaf_live_sum_add(&w->sum, e.v, -1) < 0 ||
        vmaf_live_sum_add(&w->inv_sum, 1.0 / (e.v + 1.0), -1) < 0)
        return -1;
    if (e.node >= 0) {
        w->root = terase(w->nodes, w->root, e.v, e.seq);
        w->nodes[e.node].l = w->free_list;
        w->free_list = e.node;
    }
    if (w->min_dq.count && ring_at(&w->min_dq, 0)->seq == e.seq)
        ring_pop_front(&w->min_dq);
    if (w->max_dq.count && ring_at(&w->max_dq, 0)->seq == e.seq)
        ring_pop_front(&w->max_dq);
    return 0;
}

int vmaf_live_window_push(VmafLiveWindow *w, int64_t t, double v)
{
    VmafLiveEntry e = { .t = t, .seq = w->next_seq++, .v = v, .node = -1 };

    if (w->values.count && t < ring_at(&w->values, w->values.count - 1)->t)
        e.t = t = ring_at(&w->values, w->values.count - 1)->t;
    if (w->perc) {
        int32_t l, r;
        if ((e.node = tnew(w, v, e.seq)) < 0)
            return -1;
        tsplit(w->nodes, w->root, v, e.seq, &l, &r);
        w->root = tmerge(w->nodes, tmerge(w->nodes, l, e.node), r);
    }
    if (ring_push(&w->values, e) < 0 ||
        vmaf_live_sum_add(&w->sum, v, 1) < 0 ||
        vmaf_live_sum_add(&w->inv_sum, 1.0 / (v + 1.0), 1) < 0)
        return -1;
    while (w->min_dq.count && !lt_nan_last(ring_at(&w->min_dq, w->min_dq.count - 1)->v, v))
        w->min_dq.count--;
    while (w->max_dq.count && !gt_nan_first(ring_at(&w->max_dq, w->max_dq.count - 1)->v, v))
        w->max_dq.count--;
    if (ring_push(&w->min_dq, e) < 0 || ring_push(&w->max_dq, e) < 0)
        return -1;
    for (;;) {
        const VmafLiveEntry *front = ring_at(&w->values, 0);
        int out = w->max_frames ? w->values.count > w->max_frames
                                : front->t <= t - w->duration;
        if (!out)
            break;
        if (window_pop_front(w) < 0)
            return -1;
    }
    return 0;
}

void vmaf_live_window_stats(const VmafLiveWindow *w, VmafLiveStats *out)
{
    size_t n = w->values.count;

    out->count = n;
    if (!n) {
        out->min = out->max = out->mean = out->harmonic_mean = out->perc = NAN;
        return;
    }
    out->min = ring_at(&w->min_dq, 0)->v;
    out->max = ring_at(&w->max_dq, 0)->v;
    out->mean = vmaf_live_sum_value(&w->sum) / (double)n;
    out->harmonic_mean = (double)n / vmaf_live_sum_value(&w->inv_sum) - 1.0;
    out->perc = NAN;
    if (w->perc) {
        size_t rank = ((size_t)w->perc * n + 99) / 100;
        out->perc = tkth(w->nodes, w->root, (uint32_t)(rank ? rank - 1 : 0));
    }
}

void vmaf_live_window_free(VmafLiveWindow *w)
{
    ring_free(&w->values);
    ring_free(&w->min_dq);
    ring_free(&w->max_dq);
    vmaf_live_sum_free(&w->sum);
    vmaf_live_sum_free(&w->inv_sum);
    free(w->nodes);
    memset(w, 0, sizeof(*w));
    w->root = w->free_list = -1;
}

/* ------------------------------------------------------------ options */

int vmaf_live_parse_window(const char *str, size_t *frames, double *seconds)
{
    const char *c;
    char *end;
    double d;

    *frames = 0;
    *seconds = 0;
    if (!str || !*str)
        return -1;
    for (c = str; isdigit((unsigned char)*c); c++)
        ;
    if (!*c) {
        unsigned long long n = strtoull(str, NULL, 10);
        if (n < 1 || n > 100000000ull)
            return -1;
        *frames = (size_t)n;
        return 0;
    }
    d = strtod(str, &end);
    if (end == str || !isfinite(d))
        return -1;
    if (!strcmp(end, "ms"))
        d /= 1000;
    else if (strcmp(end, "s"))
        return -1;
    if (!(d > 0))
        return -1;
    *seconds = d;
    return 0;
}

static const struct { const char *name; int pool; } pools[] = {
    { "mean", VMAF_CUDA_POOL_MEAN }, { "harmonic_mean", VMAF_CUDA_POOL_HARMONIC_MEAN },
    { "min", VMAF_CUDA_POOL_MIN }, { "max", VMAF_CUDA_POOL_MAX },
    { "perc1", VMAF_CUDA_POOL_PERC1 }, { "perc5", VMAF_CUDA_POOL_PERC5 },
    { "perc10", VMAF_CUDA_POOL_PERC10 },
};

int vmaf_live_parse_pool(const char *name)
{
    for (size_t i = 0; name && i < sizeof(pools) / sizeof(pools[0]); i++)
        if (!strcmp(name, pools[i].name))
            return pools[i].pool;
    return -1;
}

const char *vmaf_live_pool_name(int pool)
{
    for (size_t i = 0; i < sizeof(pools) / sizeof(pools[0]); i++)
        if (pools[i].pool == pool)
            return pools[i].name;
    return NULL;
}

unsigned vmaf_live_pool_percentile(int pool)
{
    switch (pool) {
    case VMAF_CUDA_POOL_PERC1:  return 1;
    case VMAF_CUDA_POOL_PERC5:  return 5;
    case VMAF_CUDA_POOL_PERC10: return 10;
    default:                    return 0;
    }
}

/* ------------------------------------------------------------ text */

void vmaf_live_buf_reset(VmafLiveBuf *b)
{
    b->len = 0;
    b->oom = 0;
    if (b->s)
        b->s[0] = 0;
}

void vmaf_live_buf_free(VmafLiveBuf *b)
{
    free(b->s);
    memset(b, 0, sizeof(*b));
}

void vmaf_live_buf_append(VmafLiveBuf *b, const char *s, size_t n)
{
    if (b->oom || grow((void **)&b->s, &b->cap, b->len + n + 1, 1) < 0) {
        b->oom = 1;
        return;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void vmaf_live_buf_puts(VmafLiveBuf *b, const char *s)
{
    vmaf_live_buf_append(b, s, strlen(s));
}

void vmaf_live_buf_json_string(VmafLiveBuf *b, const char *s)
{
    vmaf_live_buf_append(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            vmaf_live_buf_append(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            vmaf_live_buf_append(b, esc, 6);
        } else {
            vmaf_live_buf_append(b, s, 1);
        }
    }
    vmaf_live_buf_append(b, "\"", 1);
}

/* libvmaf's count_leading_zeros_d, as engine/writers.cpp has it */
static int leading_zeros(double x)
{
    int int_part, n = 0;
    double frac;

    if (x < 0)
        x = fabs(x);
    if (!(x < 2147483648.0))
        return 0;
    int_part = (int)x;
    frac = x - int_part;
    while (frac < 1.0 && frac != 0) {
        frac *= 10;
        ++n;
    }
    return n;
}

int vmaf_live_format_number(char *buf, size_t size, double v, int precision)
{
    int digits;

    if (!isfinite(v))
        return snprintf(buf, size, "null");
    if (precision < 0)
        return snprintf(buf, size, "%.17g", v);
    digits = leading_zeros(v) <= precision ? precision : (precision > 16 ? precision : 16);
    return snprintf(buf, size, "%.*f", digits, v);
}

void vmaf_live_buf_json_number(VmafLiveBuf *b, double v, int precision)
{
    char num[400]; /* DBL_MAX in fixed notation: 309 digits + sign + point + 17 */
    int n = vmaf_live_format_number(num, sizeof(num), v, precision);

    if (n < 0 || (size_t)n >= sizeof(num))
        vmaf_live_buf_puts(b, "null");
    else
        vmaf_live_buf_append(b, num, (size_t)n);
}
