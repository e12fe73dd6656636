// SPDX-License-Identifier: BSD-2-Clause-Patent
// Dashboards (API 9): a Prometheus scrape endpoint for live states, vmaf_cuda_metrics_serve().
// One listening socket and one thread that answers one request at a time: GET or HEAD of
// /metrics or / (a query string is ignored) gets vmaf_cuda_live_metrics()'s text; other
// paths 404, other methods 405. Every client is bounded: its request must arrive within
// 2 s and hold at most 8 KiB before the blank line, a reply that cannot be sent in 2 s is
// dropped, and its socket is closed whatever happens, so no client can hold the server
// or leak a descriptor. (FFmpeg's own HTTP server mode, tried first, leaked the socket of
// every failed handshake and let an idle client hold it for the whole run.)

#include "vmaf_cuda.h"

#include "api_internal.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct VmafCudaMetricsServer {
    std::vector<const VmafCudaLive*> lives;
    int fd = -1;
    std::atomic<bool> stop{false};
    std::thread thread;
};

namespace {

constexpr int kClientMs = 2000;        ///< a client's request, and the reply, in this time
constexpr std::size_t kMaxRequest = 8192;

long long now_ms() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/// Waits for `events` on fd until `deadline` (ms) or the server stops: true when ready.
bool wait_for(int fd, short events, long long deadline, const std::atomic<bool>& stop) {
    for (;;) {
        const long long left = deadline - now_ms();
        if (left <= 0 || stop) return false;
        pollfd p{fd, events, 0};
        const int r = poll(&p, 1, int(left < 200 ? left : 200));
        if (r > 0) return true;
        if (r < 0 && errno != EINTR) return false;
    }
}

void send_all(int fd, const std::string& s, long long deadline, const std::atomic<bool>& stop) {
    std::size_t off = 0;
    while (off < s.size()) {
        if (!wait_for(fd, POLLOUT, deadline, stop)) return;
        const ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return;
        off += std::size_t(n);
    }
}

void answer(VmafCudaMetricsServer& s, int fd) {
    const long long deadline = now_ms() + kClientMs;
    std::string req;
    char buf[2048];
    while (req.find("\r\n\r\n") == std::string::npos && req.find("\n\n") == std::string::npos) {
        if (req.size() > kMaxRequest || !wait_for(fd, POLLIN, deadline, s.stop)) return;
        const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return;
        req.append(buf, std::size_t(n));
    }
    // "METHOD TARGET VERSION"
    const std::size_t sp1 = req.find(' '), sp2 = sp1 == std::string::npos ? sp1 : req.find(' ', sp1 + 1);
    const std::string method = req.substr(0, sp1);
    std::string path = sp2 == std::string::npos ? "" : req.substr(sp1 + 1, sp2 - sp1 - 1);
    path = path.substr(0, path.find('?'));
    std::string body, status = "200 OK";
    if (method != "GET" && method != "HEAD") {
        status = "405 Method Not Allowed";
        body = "only GET and HEAD\n";
    } else if (path != "/metrics" && path != "/") {
        status = "404 Not Found";
        body = "the metrics are at /metrics\n";
    } else {
        const int rc = vmaf_cuda::api::guarded_to(nullptr, [&] {
            std::vector<char> text;
            for (int len = vmaf_cuda_live_metrics(s.lives.data(), unsigned(s.lives.size()), nullptr, 0);
                 len >= 0;) {
                text.resize(std::size_t(len) + 1);
                const int got = vmaf_cuda_live_metrics(s.lives.data(), unsigned(s.lives.size()),
                                                       text.data(), text.size());
                if (got < 0 || std::size_t(got) < text.size()) { // (it may grow between calls)
                    if (got >= 0) body.assign(text.data(), std::size_t(got));
                    return got < 0 ? got : 0;
                }
                len = got;
            }
            return int(VMAF_CUDA_EINTERNAL);
        });
        if (rc < 0) {
            status = "500 Internal Server Error";
            body = "the metrics could not be rendered\n";
        }
    }
    std::string head = "HTTP/1.1 " + status + "\r\nContent-Type: " +
                       (status[0] == '2' ? "text/plain; version=0.0.4; charset=utf-8"
                                         : "text/plain; charset=utf-8") +
                       "\r\nContent-Length: " + std::to_string(body.size()) +
                       "\r\nConnection: close\r\n\r\n";
    send_all(fd, method == "HEAD" ? head : head + body, deadline, s.stop);
}

void serve(VmafCudaMetricsServer& s) {
    while (!s.stop) {
        pollfd p{s.fd, POLLIN, 0};
        const int r = poll(&p, 1, 200);
        if (r <= 0) continue;
        const int c = accept4(s.fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0) {
            if (errno == EMFILE || errno == ENFILE) usleep(100000); // (out of descriptors: wait)
            continue;
        }
        answer(s, c);
        close(c);
    }
}

} // namespace

extern "C" {

int vmaf_cuda_metrics_serve(VmafCudaMetricsServer** out, const VmafCudaLive* const* lives,
                            unsigned n, const char* address, int port, char* err,
                            size_t err_size) {
    using vmaf_cuda::api::write_err;
    if (out) *out = nullptr;
    write_err(err, err_size, "");
    if (!out || !lives || !n || !address || port < 1 || port > 65535) {
        write_err(err, err_size, "vmaf_cuda_metrics_serve: no live state, no address, or a "
                                 "port outside 1..65535");
        return VMAF_CUDA_EINVAL;
    }
    for (unsigned k = 0; k < n; ++k)
        if (!lives[k]) {
            write_err(err, err_size, "vmaf_cuda_metrics_serve: NULL live state");
            return VMAF_CUDA_EINVAL;
        }
    // "[::1]" as URLs write it: the address inside
    std::string host = address;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    const std::string where = (host.find(':') != std::string::npos ? "[" + host + "]" : host) +
                              ":" + std::to_string(port);
    if (host.empty()) {
        write_err(err, err_size, "no address to listen on (e.g. 127.0.0.1, ::1, 0.0.0.0)");
        return VMAF_CUDA_EINVAL;
    }
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    const int gai = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (gai != 0) {
        write_err(err, err_size, "cannot listen on " + where + ": the address does not "
                                 "resolve (" + gai_strerror(gai) + ")");
        return VMAF_CUDA_EINVAL;
    }
    int fd = -1, saved = 0;
    for (addrinfo* a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        const int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) < 0 || listen(fd, 16) < 0) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        write_err(err, err_size, "cannot listen on " + where + ": " + std::strerror(saved));
        return VMAF_CUDA_EIO;
    }
    std::string msg;
    VmafCudaMetricsServer* server = nullptr;
    const int rc = vmaf_cuda::api::guarded_to(&msg, [&] {
        auto s = std::make_unique<VmafCudaMetricsServer>();
        s->lives.assign(lives, lives + n);
        s->fd = fd;
        s->thread = std::thread([p = s.get()] { serve(*p); });
        server = s.release();
        return VMAF_CUDA_OK;
    });
    if (rc < 0) {
        close(fd);
        write_err(err, err_size, msg);
        return rc;
    }
    *out = server;
    return VMAF_CUDA_OK;
}

void vmaf_cuda_metrics_close(VmafCudaMetricsServer* s) {
    if (!s) return;
    s->stop = true;
    if (s->thread.joinable()) s->thread.join();
    if (s->fd >= 0) close(s->fd);
    delete s;
}

} // extern "C"
