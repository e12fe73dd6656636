// SPDX-License-Identifier: BSD-2-Clause-Patent
// vmaf-cuda: score a distorted video against a reference, like libvmaf's `vmaf` tool.
// Raw YUV (-w -h -p -b) or Y4M in, luma and chroma planes passed to the library;
// libvmaf-format log (XML/JSON/CSV/SUB) out; live QA as the filter has it (rolling
// windows, the NDJSON stream, percentile pools) from the library's vmaf_cuda_live_*().

#include "video_reader.h"
#include "vmaf_cuda.h"
#include "vmaf_cuda_align.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace {

using vmaf_cuda::tools::host_picture;
using vmaf_cuda::tools::InputError;
using vmaf_cuda::tools::same_stream;
using vmaf_cuda::tools::VideoFormat;
using vmaf_cuda::tools::VideoReader;

struct Args {
    std::string ref, output, backend = "auto", precision = "6", cpumask;
    std::string window, ndjson, pool = "mean", fps; ///< live QA (as the filter's options)
    std::string sync = "none", sync_window = "2s";  ///< --sync auto (the filter's sync=auto)
    unsigned window_log = 0;
    std::vector<std::string> dist; ///< one, or a ladder's renditions
    unsigned width = 0, height = 0, bpc = 8, chroma = 420, subsample = 1, threads = 0;
    long frame_cnt = -1, frame_skip_ref = 0, frame_skip_dist = 0;
    int cuda_device = -1;
    std::vector<std::string> models, features;
    bool xml = false, json = false, csv = false, sub = false, quiet = false;
    bool no_prediction = false;
    bool given_w = false, given_h = false, given_p = false, given_b = false; ///< on the command line
};

/// The library's cap on worker threads (vmaf_cuda.h, n_threads).
constexpr unsigned kMaxThreads = 64;

/// A progress line is on the terminal (no newline yet): a message clears it first.
bool progress_line = false;

void clear_progress() {
    if (progress_line) std::fputs("\r\033[K", stderr);
    progress_line = false;
}

void warn(const std::string& msg) {
    clear_progress();
    std::fprintf(stderr, "vmaf-cuda: warning: %s\n", msg.c_str());
}

int fail(const std::string& msg) {
    clear_progress();
    std::fprintf(stderr, "vmaf-cuda: error: %s\n", msg.c_str());
    return 1;
}

/// --sync auto: the offset between the inputs' first 2 x `window` seconds (after the
/// frame skips), found by the library's alignment (vmaf_cuda_align.h) on signatures of
/// their pictures, read by readers of their own (the run reads the files again). The
/// offset is in frames, the main relative to the reference: main frame t shows reference
/// frame t - offset. Returns 0 (*found: whether one was told apart), or fail()'s 1.
int find_sync(const Args& a, const VideoFormat& fmt, unsigned fps_num, unsigned fps_den,
              double window, long* offset, double* seconds, bool* found) {
    VideoReader ref(a.ref, fmt), dist(a.dist[0], fmt);
    std::vector<std::uint8_t> rb, db;
    for (long i = 0; i < a.frame_skip_ref && ref.read(rb); ++i) {}
    for (long i = 0; i < a.frame_skip_dist && dist.read(db); ++i) {}
    const VideoFormat& rf = ref.format();
    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = rf.width;
    s.height = rf.height;
    s.bpc = rf.bpc;
    s.backend = VMAF_CUDA_BACKEND_CPU; // (host pictures: the signatures are host sums)
    s.keep_history = 0;
    char err[512] = {};
    VmafCudaSession* vs = nullptr;
    if (vmaf_cuda_open(&vs, &s, err, sizeof err) < 0) return fail(err);
    struct Closer { VmafCudaSession* s; VmafCudaAlign* a; ~Closer() { vmaf_cuda_close(s); vmaf_cuda_align_close(a); } } c{vs, nullptr};
    // ticks of one frame period: the offsets are whole frames
    VmafCudaAlignSettings as{};
    as.window = std::max<long>(1, std::lround(window * fps_num / fps_den));
    as.tb_num = int(fps_den);
    as.tb_den = int(fps_num);
    as.prefix = "";
    if (vmaf_cuda_align_open(&c.a, &as) < 0) return fail("--sync auto: cannot open the alignment");
    VmafCudaAlignResult r{};
    bool ended[2] = {false, false};
    int decided = 0;
    for (std::int64_t t = 0; !decided; ++t) {
        VideoReader* rd[2] = {&dist, &ref};
        std::vector<std::uint8_t>* buf[2] = {&db, &rb};
        for (int i = 0; i < 2; ++i) {
            if (ended[i]) continue;
            if (!rd[i]->read(*buf[i])) {
                ended[i] = true;
                vmaf_cuda_align_input_ended(c.a, i);
                continue;
            }
            const VmafCudaPicture pic = host_picture(*buf[i], rd[i]->format());
            VmafCudaSignature sig;
            if (vmaf_cuda_picture_signature(vs, &pic, &sig) < 0) return fail(vmaf_cuda_error_message(vs));
            vmaf_cuda_align_add(c.a, i, t, &sig);
        }
        if ((decided = vmaf_cuda_align_poll(c.a, ended[0] && ended[1], &r)) < 0)
            return fail("--sync auto: the alignment failed");
    }
    *offset = long(r.offset);
    *seconds = r.seconds;
    *found = r.found;
    if (!r.found) warn(r.message);
    else if (!a.quiet) std::fprintf(stderr, "vmaf-cuda: %s\n", r.message);
    return 0;
}

/// errno of the first failed flush of stdout (0: none); main() reports it.
int stdout_errno = 0;

void flush_stdout() {
    if (std::fflush(stdout) != 0 && !stdout_errno) stdout_errno = errno;
}

/// This run's log paths and NDJSON paths (one per rendition) and whether each was
/// written. A run that has started (its options valid, its inputs open) and ends without
/// writing one leaves no older regular file there to be taken for it; an option or input
/// error before that leaves every file alone (a typo must not cost the user's file).
struct LogPaths {
    std::vector<std::string> paths;   ///< -o
    std::vector<char> written;
    std::vector<std::string> ndjson;  ///< --ndjson
    std::vector<char> ndjson_written; ///< a line was written (or tried: the stream is opened)
    bool started = false;

    void remove_unwritten() const {
        if (!started) return;
        remove(paths, written);
        remove(ndjson, ndjson_written);
    }

  private:
    /// The library removes regular files only (not a FIFO, a device, "-", "pipe:N"); a
    /// symbolic link to one is left as it is, and named (its file may hold an older log).
    /// A ladder's messages begin with "rendition K: ".
    static void remove(const std::vector<std::string>& p, const std::vector<char>& done) {
        for (std::size_t k = 0; k < p.size(); ++k) {
            if (done[k]) continue;
            const std::string pre = p.size() > 1 ? "rendition " + std::to_string(k) + ": " : "";
            char err[1024];
            const int rc = vmaf_cuda_remove_stale_log(p[k].c_str(), err, sizeof err);
            if (rc == 1)
                fail(pre + "removed the older file at \"" + p[k] +
                     "\" so that it is not taken for this run's log");
            else if (rc == 2)
                warn(pre + "\"" + p[k] + "\" is a link to an older file, left as it is: it does "
                     "not hold this run's log");
            else if (rc < 0)
                fail(pre + err + ": it is not this run's log");
        }
    }
};

std::string join(const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
    return out;
}

/// One `--feature` as libvmaf's `vmaf` reads it (tools/cli_parse.c): the extractor's
/// name up to the first '=', then ':'-separated key=value options, e.g.
/// `adm=adm_enhn_gain_limit=1.0:debug=false`. Returned in the library's syntax
/// (`name=adm:adm_enhn_gain_limit=1.0:debug=false`). An option given twice within one
/// feature is an error naming it (which value was meant?), and so is name=, which would
/// rename the extractor.
std::string feature_option(const std::string& arg) {
    const std::size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    if (name.empty()) throw InputError("--feature '" + arg + "': no feature name");
    std::string out = "name=" + name;
    if (eq == std::string::npos) return out;
    std::vector<std::string> keys;
    std::size_t pos = eq + 1;
    while (pos <= arg.size()) {
        std::size_t end = arg.find(':', pos);
        if (end == std::string::npos) end = arg.size();
        const std::string kv = arg.substr(pos, end - pos);
        if (!kv.empty()) {
            const std::size_t e = kv.find('=');
            if (e == std::string::npos || e == 0 || e + 1 == kv.size())
                throw InputError("Problem parsing feature \"" + name + "\", bad option string \"" +
                                 kv + "\" (options are key=value, separated by ':')");
            const std::string key = kv.substr(0, e);
            if (key == "name")
                throw InputError("--feature '" + arg + "': name= is not an option: the feature's "
                                 "name is what comes before the first '=' (" + name + ")");
            if (std::find(keys.begin(), keys.end(), key) != keys.end())
                throw InputError("--feature '" + arg + "': option \"" + key + "\" of feature \"" +
                                 name + "\" is given twice: give it once");
            keys.push_back(key);
            out += ":" + kv;
        }
        pos = end + 1;
    }
    return out;
}

/// The label `vmaf` prints before a model's pooled score: its version= or path=.
std::string model_label(const std::string& model) {
    std::string label = "vmaf_v0.6.1";
    std::size_t pos = 0;
    while (pos <= model.size()) {
        std::size_t end = model.find(':', pos);
        if (end == std::string::npos) end = model.size();
        const std::string kv = model.substr(pos, end - pos);
        if (kv.rfind("version=", 0) == 0) label = kv.substr(8);
        if (kv.rfind("path=", 0) == 0) label = kv.substr(5);
        pos = end + 1;
    }
    return label;
}

/// --precision: 1..17 digits, or "max" (-1).
int parse_precision(const std::string& p) {
    if (p == "max") return -1;
    std::size_t used = 0;
    int v = 0;
    try {
        v = std::stoi(p, &used);
    } catch (...) {
        used = 0;
    }
    if (used == 0 || used != p.size() || v < 1 || v > 17)
        throw InputError("--precision must be 1..17 or max, not '" + p + "'");
    return v;
}

/// --fps: "N" or "N/D" (frames per second of raw input), both > 0.
bool parse_fps(const std::string& text, unsigned* num, unsigned* den) {
    const std::size_t slash = text.find('/');
    const std::string n = text.substr(0, slash), d = slash == std::string::npos ? "1" : text.substr(slash + 1);
    auto digits = [](const std::string& t) {
        return !t.empty() && t.size() <= 9 && t.find_first_not_of("0123456789") == std::string::npos;
    };
    if (!digits(n) || !digits(d)) return false;
    *num = unsigned(std::stoul(n));
    *den = unsigned(std::stoul(d));
    return *num > 0 && *den > 0;
}

/// Whether an output path (-o, --ndjson) is standard output: "-", "pipe:", "pipe:1" (as
/// the library reads pipe:N), "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", or a path
/// that is the file open as descriptor 1 (the same device and inode: `-o /dev/null
/// >/dev/null`, a FIFO that stdout writes to as well; a regular file open as stdout is
/// refused by vmaf_cuda_check_log_path()). The score lines then go to stderr, so that
/// stdout holds the log or the NDJSON lines only.
bool is_stdout(const std::string& path) {
    if (path == "-" || path == "/dev/stdout") return true;
    // "pipe:N" (no file of that name), /dev/fd/N, /proc/self/fd/N: descriptor N, as the
    // library reads N (leading zeros too)
    for (const char* dir : {"pipe:", "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"}) {
        if (path.rfind(dir, 0) != 0) continue;
        const std::string n = path.substr(std::strlen(dir));
        if (n.empty()) return std::strcmp(dir, "pipe:") == 0;
        if (n.size() <= 9 && n.find_first_not_of("0123456789") == std::string::npos)
            return std::stol(n) == 1;
    }
    struct stat ps {}, os {};
    return !path.empty() && ::stat(path.c_str(), &ps) == 0 && ::fstat(1, &os) == 0 &&
           ps.st_dev == os.st_dev && ps.st_ino == os.st_ino;
}

std::string chroma_name(unsigned chroma) {
    return chroma == 400 ? "4:0:0 (mono)" : "4:" + std::to_string(chroma / 10 % 10) + ":" +
                                                std::to_string(chroma % 10);
}

/// A ladder's log path: `pattern` with each %d replaced by k and %% by %
/// (vmaf_cuda_rendition_path(), as the filter's log_path); "" when it has no %d. One
/// distorted input: `pattern` as given.
std::string rendition_path(const std::string& pattern, unsigned k, unsigned n) {
    if (n == 1) return pattern;
    std::vector<char> out(pattern.size() + 16);
    return vmaf_cuda_rendition_path(pattern.c_str(), k, out.data(), out.size()) == VMAF_CUDA_OK
               ? std::string(out.data())
               : std::string();
}

/// The Y4M header of `r` against -w/-h/-p/-b: an option given and different is an error
/// (naming the option, its value and the header's); an equal one is fine.
void check_against_header(const Args& a, const VideoReader& r, const std::string& path) {
    if (!r.is_y4m()) return;
    const VideoFormat& f = r.format();
    auto check = [&](bool given, const char* opt, unsigned user, unsigned hdr, const std::string& said) {
        if (given && user != hdr)
            throw InputError(std::string(opt) + " " + std::to_string(user) +
                             " contradicts the Y4M header of \"" + path + "\", which says " + said +
                             ": leave " + opt + " out for Y4M input, or fix it");
    };
    check(a.given_w, "-w", a.width, f.width, std::to_string(f.width));
    check(a.given_h, "-h", a.height, f.height, std::to_string(f.height));
    check(a.given_p, "-p", a.chroma, f.chroma,
          (f.chroma == 400 ? std::string("mono") : std::to_string(f.chroma)) + " (" +
              r.y4m_colour_space() + ")");
    check(a.given_b, "-b", a.bpc, f.bpc, std::to_string(f.bpc) + " (" + r.y4m_colour_space() + ")");
}

int run(const Args& a, LogPaths& logs) {
    const unsigned n_dist = unsigned(a.dist.size());
    // A ladder's message about one rendition begins with "rendition K: " (K 0-based, in
    // -d order), as its score lines do; one distorted input has no prefix.
    auto rend = [n_dist](unsigned k) {
        return n_dist > 1 ? "rendition " + std::to_string(k) + ": " : std::string();
    };
    if (n_dist > VMAF_CUDA_MAX_RENDITIONS)
        return fail("at most " + std::to_string(VMAF_CUDA_MAX_RENDITIONS) +
                    " distorted inputs (-d), not " + std::to_string(n_dist));
    if (n_dist > 1 && !a.output.empty() && rendition_path(a.output, 0, n_dist).empty())
        return fail("-o '" + a.output + "': with " + std::to_string(n_dist) +
                    " distorted inputs the log path must contain %d (the 0-based rendition "
                    "index), e.g. -o vmaf.%d.json");
    // Every log path, checked before any frame is read. One that is an input is refused
    // (and never removed); once the run has started (below), a run that writes no log
    // removes an older regular file there (main()).
    std::vector<std::string> inputs = a.dist;
    inputs.insert(inputs.begin(), a.ref);
    if (!a.output.empty())
        for (unsigned k = 0; k < n_dist; ++k) {
            const std::string path = rendition_path(a.output, k, n_dist);
            struct stat lst {}, ist {};
            for (const std::string& in : inputs)
                if (in != "-" && ::stat(path.c_str(), &lst) == 0 && ::stat(in.c_str(), &ist) == 0 &&
                    S_ISREG(lst.st_mode) && lst.st_dev == ist.st_dev && lst.st_ino == ist.st_ino)
                    return fail(rend(k) + "-o \"" + path + "\" is the input \"" + in +
                                "\": give the log another path");
            logs.paths.push_back(path);
            logs.written.push_back(0);
        }
    const int precision = parse_precision(a.precision);
    if (a.threads > kMaxThreads)
        return fail("--threads " + std::to_string(a.threads) + ": at most " +
                    std::to_string(kMaxThreads) + " (the library caps its worker threads at " +
                    std::to_string(kMaxThreads) + ")");
    for (unsigned k = 0; k < logs.paths.size(); ++k) {
        char err[1024];
        if (vmaf_cuda_check_log_path(logs.paths[k].c_str(), err, sizeof err) < 0)
            return fail(rend(k) + err);
    }
    // live QA: the filter's options window=, window_log=, pool=, log_fmt=ndjson
    const int pool = vmaf_cuda_pool_from_name(a.pool.c_str());
    if (pool < 0) return fail("--pool '" + a.pool + "' is not one of " VMAF_CUDA_POOL_NAMES);
    double window_secs = 0;
    if (!a.window.empty() && vmaf_cuda_parse_window(a.window.c_str(), nullptr, &window_secs) < 0)
        return fail("--window '" + a.window + "' is neither a number of frames (--window 50) nor "
                    "a duration (--window 2s, --window 500ms)");
    if (a.window_log && (a.window.empty() || a.ndjson.empty()))
        return fail("--window-log " + std::to_string(a.window_log) + " writes window lines into "
                    "the NDJSON stream: it needs --window and --ndjson");
    if (!a.window.empty() && !a.window_log)
        return fail("--window " + a.window + ": the window's values go into the NDJSON stream's "
                    "window lines: give --window-log N (a line after every N-th scored frame) "
                    "and --ndjson");
    unsigned fps_num = 0, fps_den = 0;
    if (!a.fps.empty() && !parse_fps(a.fps, &fps_num, &fps_den))
        return fail("--fps '" + a.fps + "' is not a frame rate (25, 30000/1001)");
    if (!a.ndjson.empty()) {
        if (n_dist > 1 && rendition_path(a.ndjson, 0, n_dist).empty())
            return fail("--ndjson '" + a.ndjson + "': with " + std::to_string(n_dist) +
                        " distorted inputs the NDJSON path must contain %d (the 0-based "
                        "rendition index), e.g. --ndjson vmaf.%d.ndjson");
        for (unsigned k = 0; k < n_dist; ++k) {
            const std::string path = rendition_path(a.ndjson, k, n_dist);
            struct stat lst {}, ist {};
            for (const std::string& in : inputs)
                if (in != "-" && ::stat(path.c_str(), &lst) == 0 && ::stat(in.c_str(), &ist) == 0 &&
                    S_ISREG(lst.st_mode) && lst.st_dev == ist.st_dev && lst.st_ino == ist.st_ino)
                    return fail(rend(k) + "--ndjson \"" + path + "\" is the input \"" + in +
                                "\": give the NDJSON stream another path");
            struct stat dev {}, null {};  // /dev/null (stdout redirected there too) twice is no conflict
            const bool discard = ::stat(path.c_str(), &dev) == 0 && ::stat("/dev/null", &null) == 0 &&
                                 S_ISCHR(dev.st_mode) && dev.st_rdev == null.st_rdev;
            for (const std::string& log : logs.paths)
                if (!discard && (log == path || (is_stdout(log) && is_stdout(path))))
                    return fail(rend(k) + "-o \"" + log + "\" and --ndjson \"" + path + "\" are the same "
                                "output: give them different paths");
            char err[1024];
            // a stream (a FIFO waits for its reader) is opened at the first frame
            if (!vmaf_cuda_live_path_is_stream(path.c_str()) &&
                vmaf_cuda_check_log_path(path.c_str(), err, sizeof err) < 0)
                return fail(rend(k) + err);
            logs.ndjson.push_back(path);
            logs.ndjson_written.push_back(0);
        }
    }
    // a log or NDJSON stream on stdout leaves it to that output: the score lines go to stderr
    bool stdout_taken = false;
    for (const std::string& path : logs.paths) stdout_taken = stdout_taken || is_stdout(path);
    for (const std::string& path : logs.ndjson) stdout_taken = stdout_taken || is_stdout(path);
    // Two readers of one pipe (or of standard input) would split its frames.
    for (std::size_t i = 0; i < inputs.size(); ++i)
        for (std::size_t j = i + 1; j < inputs.size(); ++j)
            if (same_stream(inputs[i], inputs[j]))
                return fail("\"" + inputs[i] + "\" and \"" + inputs[j] + "\" are the same " +
                            (inputs[i] == "-" || inputs[j] == "-" ? "stream, standard input"
                                                                   : "stream (a pipe or FIFO)") +
                            ": at most one input can be read from it");

    VideoFormat fmt;
    fmt.width = a.width;
    fmt.height = a.height;
    fmt.bpc = a.bpc;
    fmt.chroma = a.chroma;
    VideoReader ref(a.ref, fmt);
    std::vector<std::unique_ptr<VideoReader>> dist;
    for (const std::string& d : a.dist) dist.push_back(std::make_unique<VideoReader>(d, fmt));
    const VideoFormat& rf = ref.format();
    for (unsigned k = 0; k < n_dist; ++k) {
        const VideoFormat& df = dist[k]->format();
        // both named: "reference "r.yuv" is 320x240 but distorted "d.y4m" is 640x480: ..."
        const std::string ref = "reference \"" + a.ref + "\" is ";
        const std::string which = " but distorted \"" + a.dist[k] + "\" is ";
        if (rf.width != df.width || rf.height != df.height)
            return fail(rend(k) + ref + std::to_string(rf.width) + "x" + std::to_string(rf.height) +
                        which + std::to_string(df.width) + "x" + std::to_string(df.height) +
                        ": sizes must match (scale the rendition to the reference's size first)");
        if (rf.bpc != df.bpc)
            return fail(rend(k) + ref + std::to_string(rf.bpc) + "-bit" + which +
                        std::to_string(df.bpc) + "-bit: bit depths must match");
        if (rf.chroma != df.chroma)
            return fail(rend(k) + ref + chroma_name(rf.chroma) + which + chroma_name(df.chroma) +
                        ": chroma subsampling must match");
    }
    // After the inputs agree: raw inputs take -w/-h/-p/-b, so a Y4M header that differs
    // from one given is the mismatch above when a raw input is there, and this otherwise.
    check_against_header(a, ref, a.ref);
    for (unsigned k = 0; k < n_dist; ++k) check_against_header(a, *dist[k], a.dist[k]);
    // the frame rate of the NDJSON pts_time and of duration windows: the reference's Y4M
    // header, or --fps (given with a Y4M header, it must agree)
    if (rf.fps_num && rf.fps_den) {
        if (fps_num && std::uint64_t(fps_num) * rf.fps_den != std::uint64_t(rf.fps_num) * fps_den)
            return fail("--fps " + a.fps + " contradicts the Y4M header of \"" + a.ref +
                        "\", which says " + std::to_string(rf.fps_num) + ":" +
                        std::to_string(rf.fps_den) + ": leave --fps out for Y4M input, or fix it");
        fps_num = rf.fps_num;
        fps_den = rf.fps_den;
    }
    if (window_secs > 0 && !fps_num)
        return fail("--window " + a.window + " is a duration: it needs the frame rate, from a "
                    "Y4M header or --fps for raw input");
    // --sync auto: the offset first, then the run skips the leading frames it finds
    double sync_seconds = 0;
    bool synced = false;
    long skip_ref = a.frame_skip_ref, skip_dist = a.frame_skip_dist;
    if (a.sync == "auto") {
        double win = 0;
        std::uint64_t frames = 0;
        if (vmaf_cuda_parse_window(a.sync_window.c_str(), &frames, &win) < 0 || frames ||
            !(win >= 0.1 && win <= 300))
            return fail("--sync_window '" + a.sync_window + "' is not a duration from 100ms to 300s (e.g. 2s, 500ms)");
        if (n_dist > 1)
            return fail("--sync auto aligns one distorted input with the reference: run it per "
                        "rendition (a ladder shares the reference's frames)");
        if (!fps_num)
            return fail("--sync auto needs the frame rate: from a Y4M header, or --fps for raw input");
        for (const std::string& p : {a.ref, a.dist[0]}) {
            struct stat st{};
            if (p == "-" || ::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
                return fail("--sync auto reads the first seconds of \"" + p + "\" twice: it must "
                            "be a regular file (not standard input, a pipe or a device)");
        }
        long off = 0;
        if (const int rc = find_sync(a, fmt, fps_num, fps_den, win, &off, &sync_seconds, &synced))
            return rc;
        if (off > 0) skip_dist += off; // the main's first frames have no reference
        else skip_ref += -off;
    }
    std::vector<std::string> features;
    for (const std::string& f : a.features) features.push_back(feature_option(f));
    if (a.no_prediction && !a.models.empty())
        return fail("--no_prediction scores no model: give -m or --no_prediction, not both");
    if (a.no_prediction && features.empty())
        return fail("--no_prediction without --feature: nothing to compute");

    // one buffer per input, each frame read whole (luma, Cb, Cr) into it
    std::vector<std::uint8_t> rl;
    std::vector<std::vector<std::uint8_t>> dl(n_dist);
    // A distorted input that cannot be read on (truncated, a sample above its bit depth,
    // a read error) fails the run when it is the only one; in a ladder it fails alone, as
    // an empty rendition does: no log, no score line, exit status 1, the others scored.
    std::vector<char> failed(n_dist, 0), active(n_dist, 1);
    auto read_dist = [&](unsigned k) -> int { // 1: a frame, 0: its end, -1: failed
        try {
            return dist[k]->read(dl[k]) ? 1 : 0;
        } catch (const InputError& e) {
            if (n_dist == 1) throw;
            fail(rend(k) + e.what() +
                 ": no log written, no VMAF score");
            failed[k] = 1;
            return -1;
        }
    };
    // The options are valid and the inputs open: the run starts with its first read (a
    // model or feature that the library refuses at open below is an option error still).
    logs.started = true;
    // --frame_skip_ref/--frame_skip_dist: the first frames of either input are not scored
    for (long i = 0; i < skip_ref && ref.read(rl); ++i) {}
    for (unsigned k = 0; k < n_dist; ++k)
        for (long i = 0; i < skip_dist && read_dist(k) > 0; ++i) {}
    // The first frames (after the skips) are read before the session opens: a header that
    // claims a huge frame fails on its missing data, not on the session's buffers for that
    // size (a 40-byte Y4M file claiming 32768x32768 4:4:4 16-bit would ask for GiBs).
    int ref_ahead = ref.read(rl) ? 1 : 0;       // -1: taken
    std::vector<int> dist_ahead(n_dist, 0);     // 1 frame, 0 end, -1 failed; 2: taken
    for (unsigned k = 0; k < n_dist; ++k) dist_ahead[k] = failed[k] ? -1 : read_dist(k);
    auto next_ref = [&]() -> bool {
        if (ref_ahead < 0) return ref.read(rl);
        const bool h = ref_ahead == 1;
        ref_ahead = -1;
        return h;
    };
    auto next_dist = [&](unsigned k) -> int {
        if (dist_ahead[k] == 2) return read_dist(k);
        const int h = dist_ahead[k];
        dist_ahead[k] = 2;
        return h;
    };

    VmafCudaSettings s;
    vmaf_cuda_default_settings(&s);
    s.width = rf.width;
    s.height = rf.height;
    s.bpc = rf.bpc;
    s.chroma = rf.chroma == 444 ? VMAF_CUDA_CHROMA_444
             : rf.chroma == 422 ? VMAF_CUDA_CHROMA_422
             : rf.chroma == 400 ? VMAF_CUDA_CHROMA_400 : VMAF_CUDA_CHROMA_420;
    s.backend = a.backend == "cuda" ? VMAF_CUDA_BACKEND_CUDA
              : a.backend == "cpu" ? VMAF_CUDA_BACKEND_CPU : VMAF_CUDA_BACKEND_AUTO;
    const std::string models = join(a.models, "|");
    const std::string feature_list = join(features, "|");
    s.models = models.empty() ? nullptr : models.c_str();
    s.features = feature_list.empty() ? nullptr : feature_list.c_str();
    s.no_prediction = a.no_prediction;
    s.n_subsample = a.subsample;
    s.n_threads = a.threads;
    s.cuda_device = a.cuda_device;
    // the per-frame history only for what needs the whole stream (a log, a percentile
    // pool): without it memory stays flat over an endless stream read from a pipe
    s.keep_history = !a.output.empty() || vmaf_cuda_pool_percentile(pool) > 0;

    // One distorted input is a ladder of one: the same scores as a plain session.
    char err[512] = {};
    VmafCudaLadder* lad = nullptr;
    if (vmaf_cuda_ladder_open(&lad, &s, n_dist, err, sizeof err) < 0) {
        logs.started = false;
        return fail(err);
    }
    struct Closer { VmafCudaLadder* p; ~Closer() { vmaf_cuda_ladder_close(p); } } closer{lad};
    std::vector<VmafCudaSession*> vs(n_dist);
    for (unsigned k = 0; k < n_dist; ++k) vs[k] = vmaf_cuda_ladder_session(lad, k);
    if (a.sync == "auto" && vmaf_cuda_set_sync_offset(vs[0], 0, synced ? sync_seconds : NAN) < 0)
        return fail(vmaf_cuda_error_message(vs[0]));
    if (*vmaf_cuda_open_warning(vs[0]))
        std::fprintf(stderr, "vmaf-cuda: warning: %s\n", vmaf_cuda_open_warning(vs[0]));
    // live QA per rendition: its windows and NDJSON stream (vmaf_cuda_live_*())
    struct LiveCloser {
        std::vector<VmafCudaLive*> p;
        ~LiveCloser() {
            for (VmafCudaLive* l : p) vmaf_cuda_live_close(l);
        }
    } live;
    live.p.assign(n_dist, nullptr);
    std::vector<char> live_lost(n_dist, 0);
    for (unsigned k = 0; k < logs.ndjson.size(); ++k) {
        VmafCudaLiveSettings ls;
        vmaf_cuda_live_default_settings(&ls);
        ls.window = a.window.empty() ? nullptr : a.window.c_str();
        ls.window_log = a.window_log;
        ls.ndjson_path = logs.ndjson[k].c_str();
        ls.precision = precision;
        ls.pool = VmafCudaPool(pool);
        if (fps_num) { // pts: the frame's number, in frame periods
            ls.tb_num = int(fps_den);
            ls.tb_den = int(fps_num);
            ls.fr_num = int(fps_num);
            ls.fr_den = int(fps_den);
        }
        if (vmaf_cuda_live_open(&live.p[k], vs[k], &ls, err, sizeof err) < 0) {
            logs.started = false;
            return fail(err);
        }
    }
    auto live_frame = [&](unsigned k, const VmafCudaFrameScores& f) {
        if (!live.p[k] || live_lost[k]) return;
        logs.ndjson_written[k] = 1; // this run's stream from its first line
        VmafCudaLiveFrame out;
        if (vmaf_cuda_live_frame(live.p[k], &f, std::int64_t(f.index), fps_num > 0, &out) < 0) {
            // the NDJSON stream lost this line: scoring goes on, the exit status is 1
            fail(rend(k) + vmaf_cuda_live_error(live.p[k]));
            live_lost[k] = 1;
        }
    };
    if (!a.quiet)
        std::fprintf(stderr, "vmaf-cuda %s, backend %s, %ux%u %u-bit %s%s\n", vmaf_cuda_version(),
                     vmaf_cuda_backend_name(vs[0]), s.width, s.height, s.bpc,
                     chroma_name(rf.chroma).c_str(),
                     n_dist > 1 ? (", " + std::to_string(n_dist) + " renditions").c_str() : "");

    std::vector<long> n(n_dist, 0);
    std::vector<std::uint64_t> scored(n_dist, 0); // frames vmaf_cuda_receive() returned
    long frames = 0;
    const auto t0 = std::chrono::steady_clock::now();
    VmafCudaFrameScores fs;
    auto end_rendition = [&](unsigned k) {
        active[k] = 0;
        return vmaf_cuda_flush(vs[k]) < 0 ? fail(rend(k) + vmaf_cuda_error_message(vs[k])) : 0;
    };
    std::vector<VmafCudaPicture> dp(n_dist);
    std::vector<const VmafCudaPicture*> dptr(n_dist);
    bool ref_empty = false; // the reference had no frame (after --frame_skip_ref)
    // Progress on a terminal, as libvmaf's vmaf: frames scored and frames/s on one line
    // of stderr, redrawn at most 4 times a second; cleared before the summary lines.
    // (not when a log or the NDJSON stream goes to the same terminal: its lines would mix)
    const bool progress = !a.quiet && isatty(STDERR_FILENO) && !(stdout_taken && isatty(STDOUT_FILENO));
    auto last_progress = t0;
    auto show_progress = [&] {
        const auto now = std::chrono::steady_clock::now();
        if (!progress || now - last_progress < std::chrono::milliseconds(250)) return;
        last_progress = now;
        const double s = std::chrono::duration<double>(now - t0).count();
        std::fprintf(stderr, "\r%ld frame%s scored, %.1f frames/s\033[K", frames,
                     frames == 1 ? "" : "s", s > 0 ? double(frames) / s : 0.0);
        std::fflush(stderr);
        progress_line = true;
    };
    while (a.frame_cnt < 0 || frames < a.frame_cnt) {
        const bool hr = next_ref();
        if (!hr && frames == 0) ref_empty = true;
        std::fill(dptr.begin(), dptr.end(), nullptr);
        bool any = false;
        std::string longer; // renditions with frames left when the reference ended
        for (unsigned k = 0; k < n_dist; ++k) {
            if (!active[k]) continue;
            const int hd = failed[k] ? -1 : next_dist(k);
            if (hd < 0) {
                if (end_rendition(k)) return 1;
                continue;
            }
            if (hr && hd) {
                dp[k] = host_picture(dl[k], dist[k]->format());
                dptr[k] = &dp[k];
                any = true;
                continue;
            }
            // as libvmaf's vmaf: score the frames both have
            if (hr)
                warn(rend(k) + "\"" + a.dist[k] + "\" ended before \"" + a.ref + "\": scoring the " +
                     std::to_string(n[k]) + " frames both have");
            else if (hd)
                longer += (longer.empty() ? "\"" : ", \"") + a.dist[k] + "\"";
            if (end_rendition(k)) return 1;
        }
        if (!longer.empty()) // once, however many renditions it cuts short
            warn("\"" + a.ref + "\" ended before " + longer + ": scoring the " +
                 std::to_string(frames) + " frames both have");
        if (!hr || !any) break;
        const VmafCudaPicture rp = host_picture(rl, rf);
        if (vmaf_cuda_ladder_send(lad, &rp, dptr.data()) < 0)
            return fail(vmaf_cuda_ladder_error_message(lad));
        ++frames;
        show_progress();
        for (unsigned k = 0; k < n_dist; ++k) {
            if (!dptr[k]) continue;
            ++n[k];
            int r;
            while ((r = vmaf_cuda_receive(vs[k], &fs)) == VMAF_CUDA_OK) {
                live_frame(k, fs);
                ++scored[k];
            }
            if (r != VMAF_CUDA_EAGAIN) return fail(rend(k) + vmaf_cuda_error_message(vs[k]));
        }
    }
    clear_progress();
    // A rendition with no frame to score is an error (exit status 1), as alone; the
    // others are still scored and logged, as the filter's ladder does.
    if (ref_empty) return fail("no frames to score: the reference \"" + a.ref + "\" has none");
    if (n_dist == 1 && n[0] == 0)
        return fail("no frames to score in \"" + a.dist[0] + "\": no log written, no VMAF score");
    bool empty = false;
    for (unsigned k = 0; k < n_dist; ++k) {
        if (n[k] == 0 && !failed[k])
            fail(rend(k) + "no frames to score in \"" + a.dist[k] +
                 "\": no log written, no VMAF score");
        if (n[k] == 0 || failed[k]) empty = true;
    }
    if (frames == 0) return 1; // every rendition empty: nothing to flush or report
    if (vmaf_cuda_ladder_flush(lad) < 0) return fail(vmaf_cuda_ladder_error_message(lad));
    for (unsigned k = 0; k < n_dist; ++k) {
        if (n[k] == 0) continue;
        int r;
        while ((r = vmaf_cuda_receive(vs[k], &fs)) == VMAF_CUDA_OK) {
            live_frame(k, fs);
            ++scored[k];
        }
        if (r != VMAF_CUDA_EOF) return fail(rend(k) + vmaf_cuda_error_message(vs[k]));
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // A log that cannot be written fails its rendition: no score line, exit status 1.
    for (unsigned k = 0; k < n_dist; ++k) {
        const double fps = secs > 0 ? double(n[k]) / secs : NAN;
        if (!a.output.empty() && n[k] && !failed[k]) {
            const VmafCudaLogFormat lf = a.json ? VMAF_CUDA_LOG_JSON : a.csv ? VMAF_CUDA_LOG_CSV
                                       : a.sub ? VMAF_CUDA_LOG_SUB : VMAF_CUDA_LOG_XML;
            if (vmaf_cuda_write_log(vs[k], logs.paths[k].c_str(), lf, precision, fps) < 0) {
                fail(rend(k) + vmaf_cuda_error_message(vs[k]));
                failed[k] = 1;
                empty = true;
            } else {
                logs.written[k] = 1;
            }
        }
    }
    // the NDJSON streams' pooled lines; a stream that lost a line is exit status 1 (the
    // rendition's score lines are still printed, as the filter prints them)
    bool lost = false;
    for (unsigned k = 0; k < n_dist; ++k) {
        if (!live.p[k] || n[k] == 0 || failed[k]) continue;
        logs.ndjson_written[k] = 1;
        if (vmaf_cuda_live_finish(live.p[k], vs[k], scored[k]) < 0) {
            fail(rend(k) + vmaf_cuda_live_error(live.p[k]));
            live_lost[k] = 1;
        }
        if (live_lost[k]) lost = true;
    }
    if (!a.quiet)
        std::fprintf(stderr, "%ld frames in %.3f s (%.1f frames/s)\n", frames, secs,
                     secs > 0 ? double(frames) / secs : NAN);
    // vmaf's lines, "<version or path>: <pooled mean>" per model on stderr (not with -q
    // and -o), then the library's (vmaf_cuda_summary(), as the filter logs them) on stdout:
    // "VMAF score: X" per model pooled with --pool, then each bootstrap collection's line
    // (on stderr when a log or the NDJSON stream is stdout). A ladder prefixes each line with
    // "rendition K: " (K 0-based, in -d order).
    for (unsigned k = 0; k < n_dist; ++k) {
        if (n[k] == 0 || failed[k]) continue;
        const std::string prefix = rend(k);
        for (unsigned i = 0; i < vmaf_cuda_model_count(vs[k]); ++i) {
            double score = 0;
            if (vmaf_cuda_pooled(vs[k], vmaf_cuda_model_name(vs[k], i), VMAF_CUDA_POOL_MEAN, &score) < 0)
                return fail(prefix + vmaf_cuda_error_message(vs[k]));
            const std::string label = model_label(i < a.models.size() ? a.models[i] : "");
            if (!a.quiet || a.output.empty())
                std::fprintf(stderr, "%s%s: %f\n", prefix.c_str(), label.c_str(), score);
        }
        // then, as vmaf, per bootstrap collection: "<label>: bagging, ci.p95: [lo, hi], stddev: s"
        for (unsigned i = 0; i < vmaf_cuda_model_count(vs[k]); ++i) {
            if (!vmaf_cuda_model_bootstrap_count(vs[k], i)) continue;
            const std::string name = vmaf_cuda_model_name(vs[k], i);
            double v[4];
            const char* suffix[4] = {"_bagging", "_ci_p95_lo", "_ci_p95_hi", "_stddev"};
            for (int j = 0; j < 4; ++j)
                if (vmaf_cuda_pooled(vs[k], (name + suffix[j]).c_str(), VMAF_CUDA_POOL_MEAN, &v[j]) < 0)
                    return fail(prefix + vmaf_cuda_error_message(vs[k]));
            if (!a.quiet || a.output.empty())
                std::fprintf(stderr, "%s%s: %f, ci.p95: [%f, %f], stddev: %f\n", prefix.c_str(),
                             model_label(i < a.models.size() ? a.models[i] : "").c_str(), v[0],
                             v[1], v[2], v[3]);
        }
        std::fflush(stderr);
        const int len = vmaf_cuda_summary(vs[k], pool, prefix.c_str(), nullptr, 0);
        if (len < 0) return fail(prefix + vmaf_cuda_error_message(vs[k]));
        std::vector<char> text(std::size_t(len) + 1);
        vmaf_cuda_summary(vs[k], pool, prefix.c_str(), text.data(), text.size());
        std::fputs(text.data(), stdout_taken ? stderr : stdout);
        flush_stdout();
    }
    return empty || lost ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
    // A reader that goes away (`-o - | head -c 100`) is an error for what was written to
    // it, named, with exit status 1 (the write fails with EPIPE), as in the filter: not a
    // signal that ends the run without a word.
    std::signal(SIGPIPE, SIG_IGN);
    Args a;
    CLI::App app{"vmaf-cuda: VMAF bit-exact with libvmaf v3.2.0, on the GPU or the CPU.\n"
                 "Inputs are raw planar YUV (give -w -h -p -b) or Y4M."};
    app.set_help_flag("--help", "Print this help and exit");
    app.add_option("-r,--reference", a.ref,
                   "Reference video (.yuv or .y4m; a pipe, a FIFO, or - for standard input "
                   "is read to its end)")->required();
    app.add_option("-d,--distorted", a.dist,
                   "Distorted video (.yuv or .y4m, or a stream as -r); give it several times to score a ladder's "
                   "renditions against one reference (the reference's work is shared; -o then "
                   "needs %d, the 0-based rendition index)")
        ->required()->take_all();
    auto* ow = app.add_option("-w,--width", a.width, "Width of raw YUV input (Y4M: must match its header)");
    auto* oh = app.add_option("-h,--height", a.height, "Height of raw YUV input (Y4M: must match its header)");
    auto* op = app.add_option("-p,--pixel_format", a.chroma, "Chroma subsampling of raw YUV input")
        ->check(CLI::IsMember({420, 422, 444}));
    auto* ob = app.add_option("-b,--bitdepth", a.bpc,
                              "Bit depth of raw YUV input (8..16; every sample is checked against it)")
        ->check(CLI::Range(8, 16));
    app.add_option("-m,--model", a.models,
                   "Model: version=NAME or path=FILE.json, with :name=, :enable_transform, "
                   ":disable_clip (repeatable; default version=vmaf_v0.6.1)");
    app.add_option("--feature", a.features,
                   "Extra feature as vmaf takes it: NAME or NAME=opt=val:opt=val (adm, vif, "
                   "motion, psnr, float_ssim, float_ms_ssim, ciede, cambi, speed_chroma, "
                   "speed_temporal, float_adm, float_vif, float_motion; repeatable)");
    app.add_option("-o,--output", a.output,
                   "Log file to write; - or pipe:1 (or /dev/stdout) is stdout, and the score "
                   "lines then go to stderr");
    auto* fx = app.add_flag("--xml", a.xml, "Log in XML (default)");
    auto* fj = app.add_flag("--json", a.json, "Log in JSON");
    auto* fc = app.add_flag("--csv", a.csv, "Log in CSV");
    auto* fsu = app.add_flag("--sub", a.sub, "Log in MicroDVD SUB");
    fx->excludes(fj)->excludes(fc)->excludes(fsu);
    fj->excludes(fc)->excludes(fsu);
    fc->excludes(fsu);
    app.add_option("--subsample", a.subsample, "Score every N-th frame")->check(CLI::Range(1, 1 << 20));
    app.add_option("--frame_cnt", a.frame_cnt, "Score at most the first N frames")->check(CLI::Range(1L, 1L << 40));
    app.add_option("--frame_skip_ref", a.frame_skip_ref, "Skip the first N frames of the reference")
        ->check(CLI::Range(0L, 1L << 40));
    app.add_option("--frame_skip_dist", a.frame_skip_dist, "Skip the first N frames of the distorted")
        ->check(CLI::Range(0L, 1L << 40));
    app.add_flag("-n,--no_prediction", a.no_prediction,
                 "No model: extract the --feature features only");
    app.add_option("--cpumask", a.cpumask,
                   "Accepted for vmaf compatibility; no effect (vmaf-cuda has one CPU path, "
                   "libvmaf's scalar C arithmetic)");
    app.add_option("--threads", a.threads, "CPU worker threads (at most 64)");
    app.add_option("--precision", a.precision,
                   "Digits after the point in the log (default 6, as libvmaf), or 'max' (round-trip)");
    app.add_option("--backend", a.backend, "auto, cuda or cpu")
        ->check(CLI::IsMember({"auto", "cuda", "cpu"}));
    app.add_option("--cuda-device", a.cuda_device, "CUDA device ordinal (default 0)")
        ->check(CLI::Range(0, 1 << 16));
    app.add_option("--window", a.window,
                   "Live QA as the filter's window=: a rolling window of each model's scores, "
                   "N frames or a duration (2s, 500ms: needs the frame rate); its values go "
                   "into the NDJSON stream's window lines (--window-log)");
    app.add_option("--window-log", a.window_log,
                   "An NDJSON window line after every N-th scored frame (needs --window)")
        ->check(CLI::Range(1u, 1u << 30));
    app.add_option("--ndjson", a.ndjson,
                   "NDJSON stream, one JSON line per frame as it is scored, then the pooled "
                   "line: a file, a named pipe, - or pipe:1 (stdout; the score lines then go "
                   "to stderr) or pipe:N; with several -d it needs %d");
    app.add_option("--pool", a.pool,
                   "Pooling of the VMAF score lines and the NDJSON pooled line: mean, "
                   "harmonic_mean, min, max, perc1, perc5, perc10 (nearest rank)");
    app.add_option("--fps", a.fps,
                   "Frame rate of raw input, N or N/D (Y4M: its header's): the NDJSON "
                   "pts_time and duration windows");
    app.add_option("--sync", a.sync,
                   "Pairing: none (frame by frame, as vmaf) or auto: find the offset between "
                   "the inputs in their first 2 x --sync_window seconds, then skip the leading "
                   "frames of the one ahead (regular files; needs the frame rate)")
        ->check(CLI::IsMember({"none", "auto"}));
    app.add_option("--sync_window", a.sync_window,
                   "--sync auto: offsets searched each way, a duration (default 2s)");
    app.add_flag("-q,--quiet", a.quiet,
                 "Print only the scores (no model score lines on stderr with -o, as vmaf)");
    const std::string archs = *vmaf_cuda_cuda_archs() ? vmaf_cuda_cuda_archs() : "none (built without CUDA)";
    app.set_version_flag("--version", std::string("vmaf-cuda ") + vmaf_cuda_version() +
                                          "\nCUDA kernels: " + archs);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    a.given_w = ow->count() > 0;
    a.given_h = oh->count() > 0;
    a.given_p = op->count() > 0;
    a.given_b = ob->count() > 0;
    LogPaths logs;
    int rc;
    try {
        rc = run(a, logs);
    } catch (const std::exception& e) {
        rc = fail(e.what());
    }
    logs.remove_unwritten();
    // The exit status is the truth: a score line that did not reach stdout, or a message
    // that did not reach stderr, is a failure.
    flush_stdout();
    if (stdout_errno || std::ferror(stdout)) {
        rc = fail(std::string("cannot write to standard output") +
                  (stdout_errno ? std::string(": ") + std::strerror(stdout_errno) : ""));
    }
    if (std::fflush(stderr) != 0 || std::ferror(stderr)) rc = 1;
    return rc;
}
