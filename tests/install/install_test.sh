#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause-Patent
# Suite `api`: `meson install` into a staging folder gives the library, vmaf_cuda.h and a
# vmaf_cuda.pc with which a C program (as FFmpeg's configure does) compiles, links
# statically and scores two frames on the CPU backend.
#   install_test.sh BUILDDIR
set -euo pipefail
builddir=$(cd "$1" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

meson install -C "$builddir" --no-rebuild --quiet --destdir "$stage" > "$stage/install.log" 2>&1 ||
    { cat "$stage/install.log"; fail "meson install failed"; }
pc=$(find "$stage" -name vmaf_cuda.pc | head -n 1)
[ -n "$pc" ] || fail "no vmaf_cuda.pc installed"
[ -n "$(find "$stage" -name libvmaf_cuda.a)" ] || fail "no libvmaf_cuda.a installed"
[ -n "$(find "$stage" -name vmaf_cuda.h)" ] || fail "no vmaf_cuda.h installed"
echo "installed: ${pc#"$stage"}"

# the batch runner: installed executable, runs, refuses a bad manifest naming its line
batch=$(find "$stage" -name vmaf-cuda-batch -type f | head -n 1)
[ -n "$batch" ] && [ -x "$batch" ] || fail "no executable vmaf-cuda-batch installed"
"$batch" --version | grep -q '^vmaf-cuda-batch ' || fail "vmaf-cuda-batch --version"
printf '{"title": "t", "reference": "r.mp4", "renditions": [{"name": "a", "path": "a.mp4"}]}\n{oops\n' \
    > "$stage/manifest.jsonl"
rc=0
"$batch" run "$stage/manifest.jsonl" --out "$stage/batch" > "$stage/batch.log" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q 'manifest.jsonl:2: not JSON' "$stage/batch.log" ||
    { cat "$stage/batch.log"; fail "vmaf-cuda-batch did not refuse line 2 of a bad manifest (exit $rc)"; }
[ ! -e "$stage/batch" ] || fail "vmaf-cuda-batch wrote an output folder for a bad manifest"
echo "installed: ${batch#"$stage"} ($("$batch" --version))"
report=$(find "$stage" -name vmaf-cuda-report -type f | head -n 1)
[ -n "$report" ] && [ -x "$report" ] || fail "no executable vmaf-cuda-report installed"
"$report" --version | grep -q '^vmaf-cuda-report ' || fail "vmaf-cuda-report --version (numpy, matplotlib?)"
echo "installed: ${report#"$stage"} ($("$report" --version))"

# What FFmpeg's configure runs: pkg-config --static (the library is static). The staged
# copy sits under $stage: move the .pc's prefix there, nothing else.
prefix=$(sed -n 's/^prefix=//p' "$pc")
export PKG_CONFIG_PATH=$(dirname "$pc")
pkg-config --exists vmaf_cuda || fail "pkg-config does not find vmaf_cuda"
flags=$(pkg-config --define-variable=prefix="$stage$prefix" --static --cflags --libs vmaf_cuda)
case "$flags" in *"$stage$prefix"*) ;; *) fail "the .pc does not place the library under its prefix: $flags" ;; esac
echo "pkg-config --static --cflags --libs vmaf_cuda: $flags"
cat > "$stage/prog.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <vmaf_cuda.h>
int main(void) {
    enum { W = 64, H = 48 };
    static unsigned char ref[H][W], dist[H][W];
    VmafCudaSettings s;
    VmafCudaSession *vs;
    VmafCudaFrameScores fs;
    char err[256];
    double mean = -1;
    int n = 0;
    vmaf_cuda_default_settings(&s);
    s.width = W; s.height = H; s.backend = VMAF_CUDA_BACKEND_CPU;
    if (vmaf_cuda_open(&vs, &s, err, sizeof err) < 0) { printf("open: %s\n", err); return 1; }
    for (int f = 0; f < 2; ++f) {
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                ref[y][x] = (unsigned char)((x * 7 + y * 3 + f * 5) & 255);
                dist[y][x] = (unsigned char)(ref[y][x] ^ ((x + y) & 3));
            }
        VmafCudaPicture r = { ref, W, 0, VMAF_CUDA_MEMORY_HOST };
        VmafCudaPicture d = { dist, W, 0, VMAF_CUDA_MEMORY_HOST };
        if (vmaf_cuda_send(vs, &r, &d) < 0) return 2;
        while (vmaf_cuda_receive(vs, &fs) == 0) ++n;
    }
    vmaf_cuda_flush(vs);
    while (vmaf_cuda_receive(vs, &fs) == 0) ++n;
    if (vmaf_cuda_pooled(vs, "vmaf", VMAF_CUDA_POOL_MEAN, &mean) < 0) return 3;
    printf("%s: %d frames, VMAF %.6f\n", vmaf_cuda_version(), n, mean);
    vmaf_cuda_close(vs);
    return n == 2 && mean >= 0 && mean <= 100 ? 0 : 4;
}
C
# shellcheck disable=SC2086
cc -std=c11 -o "$stage/prog" "$stage/prog.c" $flags || fail "cannot compile and link against the installed copy"
"$stage/prog" || fail "the program linked against the installed copy failed"
echo "1 passed, 0 failed"
