#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause-Patent
# The ffmpeg binaries of tools/sanitize.sh's filter step, in which only our code is
# instrumented with AddressSanitizer + UndefinedBehaviorSanitizer: the filter's objects
# (filter/*.c, as patches/apply.sh copies them into libavfilter/) and the three FFmpeg
# files our patches change (fftools/ffmpeg_filter.c, fftools/ffmpeg_sched.c,
# libavfilter/avfilter.c) are compiled by clang with the sanitizers; every other FFmpeg
# object is the normal build's, uninstrumented, and the link (clang) adds the sanitizer
# runtimes. Building all of FFmpeg with ASan took 27.5 min on 2 cores; this takes about
# a minute.
#
#   tools/asan-ffmpeg.sh BUILDDIR [FFMPEG_DIR]
#
# FFMPEG_DIR: the normal build of patches/build-ffmpeg.sh (default build-ffmpeg/9.0); its
# src/ is copied to BUILDDIR/ffmpeg-VERSION/src, not changed. Two binaries, not stripped
# (the sanitizers' stacks name functions and lines), the same filter objects in both:
#
#   BUILDDIR/ffmpeg-VERSION/bin/ffmpeg            with BUILDDIR's libvmaf_cuda (the
#       sanitizer build: the library checks what the filter hands it), whose CPU backend
#       runs about 4x slower than the normal one
#   BUILDDIR/ffmpeg-VERSION/bin/ffmpeg-plainlib   with the normal build's libvmaf_cuda
#       (the one FFMPEG_DIR links; uninstrumented, but its memcpy and allocations still go
#       through the ASan runtime): as fast as the normal ffmpeg
#
# The copied tree links BUILDDIR's library (its ffbuild/config.mak), as
# tests/filter/liveness_test.py, which builds its harness against the tree's archives,
# expects. Reused while its inputs (the normal tree's build, the filter source,
# libvmaf_cuda.a, this script) are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "asan-ffmpeg: error: $*" >&2; exit 1; }
log() { echo "asan-ffmpeg: $*" >&2; }

[ $# -ge 1 ] || die "usage: tools/asan-ffmpeg.sh BUILDDIR [FFMPEG_DIR]"
builddir=$(cd "$1" && pwd)
from=${2:-build-ffmpeg/9.0}
[ -f "$from/src/ffbuild/config.mak" ] && [ -x "$from/src/ffmpeg_g" ] && [ -f "$from/stamp.done" ] ||
  die "no built FFmpeg tree in $from (build it first: ninja -C build && patches/build-ffmpeg.sh --meson-build-dir build 9.0; tools/test.sh does)"
from=$(cd "$from" && pwd)
version=$(basename "$from")
lib="$builddir/libvmaf_cuda.a"
pc_dir="$builddir/meson-uninstalled"
[ -f "$lib" ] && [ -f "$pc_dir/vmaf_cuda-uninstalled.pc" ] || die "no libvmaf_cuda.a in $builddir (ninja -C $builddir)"

out="$builddir/ffmpeg-$version"
dst="$out/src"
bin="$out/bin/ffmpeg"
bin_plain="$out/bin/ffmpeg-plainlib"

san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
# filter/*.c as patches/apply.sh names their objects; the FFmpeg files our patches change
objs=()
for f in filter/*.c; do objs+=("libavfilter/$(basename "${f%.c}").o"); done
objs+=(fftools/ffmpeg_filter.o fftools/ffmpeg_sched.o libavfilter/avfilter.o)

stamp=$( { cat "$from/stamp.done"; sha256sum < "$from/src/ffmpeg_g"; cat filter/* patches/apply.sh "$0" | sha256sum
           sha256sum < "$lib"; } | sha256sum | cut -c1-64)
if [ -x "$bin" ] && [ -x "$bin_plain" ] && [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ]; then
  log "up to date: $bin"
  exit 0
fi
start=$(date +%s)
rm -rf "$out"
mkdir -p "$out/bin"
# timestamps kept: make rebuilds only what is removed below
cp -a "$from/src" "$dst"
bash patches/apply.sh --files-only "$dst"

# The library: the sanitizer build's link flags instead of the normal build's (config.mak
# keeps its timestamp, so nothing else rebuilds)
libs=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --static --libs vmaf_cuda)
cflags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags vmaf_cuda)
mak="$dst/ffbuild/config.mak"
grep -q '^EXTRALIBS-avfilter=.*-lvmaf_cuda' "$mak" || die "no -lvmaf_cuda in $mak's EXTRALIBS-avfilter"
plain_libs=$(sed -n 's/^EXTRALIBS-avfilter=//p' "$mak")
cp -p "$mak" "$mak.orig"
awk -v libs="$libs" '/^EXTRALIBS-avfilter=/ { sub(/ -L[^ ]* -lvmaf_cuda.*/, ""); $0 = $0 " " libs } { print }' \
  "$mak.orig" > "$mak"
touch -r "$mak.orig" "$mak"
grep -qF -- "$libs" "$mak" || die "cannot set the library in $mak"
rm -f "$mak.orig"

(cd "$dst" && rm -f "${objs[@]}" "${objs[@]/%.o/.d}" libavfilter/libavfilter.a ffmpeg_g ffmpeg ffprobe_g ffprobe)
# Target-specific variables: clang and the sanitizers for these objects only (CPPFLAGS
# comes first on FFmpeg's command lines: the sanitizer build's headers win); the link by
# clang with the sanitizer runtimes (C++ parts too: libvmaf_cuda is C++).
cat > "$out/asan.mak" <<EOF
ASAN_OBJS := ${objs[*]}
\$(ASAN_OBJS): CC = clang
\$(ASAN_OBJS): CPPFLAGS += $cflags
\$(ASAN_OBJS): CFLAGS += ${san[*]} -O1 -gline-tables-only -fno-omit-frame-pointer -Wno-unknown-warning-option
ffmpeg_g: LD = clang
ffmpeg_g: LDFLAGS += ${san[*]} -fsanitize-link-c++-runtime
EOF
jobs=$(nproc 2>/dev/null || echo 2)
log "compiling ${#objs[@]} objects with ASan + UBSan and linking (make -j$jobs, log: $out/build.log)"
make -C "$dst" -f Makefile -f "$out/asan.mak" -j"$jobs" V=1 ffmpeg_g > "$out/build.log" 2>&1 ||
  { grep -E 'error|Error' "$out/build.log" | tail -n 30 >&2; die "make failed (see $out/build.log)"; }
# exactly these objects were compiled, by clang
compiled=$(grep -cE '^clang .* -c -o ' "$out/build.log" || true)
others=$(grep -E '^(gcc|cc) .* -c ' "$out/build.log" | head -n 3 || true)
[ -z "$others" ] || die "make recompiled FFmpeg objects with gcc (the copied tree is not up to date?):
$others"
[ "$compiled" = "${#objs[@]}" ] || die "compiled $compiled objects with clang, expected ${#objs[@]} (see $out/build.log)"
cp "$dst/ffmpeg_g" "$bin"
# the same objects linked with the normal library (a command-line variable overrides
# config.mak's)
rm -f "$dst/ffmpeg_g"
make -C "$dst" -f Makefile -f "$out/asan.mak" V=1 ffmpeg_g "EXTRALIBS-avfilter=$plain_libs" > "$out/build-plainlib.log" 2>&1 ||
  { tail -n 30 "$out/build-plainlib.log" >&2; die "make (plainlib) failed (see $out/build-plainlib.log)"; }
! grep -qE ' -c ' "$out/build-plainlib.log" || die "the plainlib link recompiled objects (see $out/build-plainlib.log)"
cp "$dst/ffmpeg_g" "$bin_plain"
for b in "$bin" "$bin_plain"; do
  ASAN_OPTIONS=detect_leaks=0 "$b" -hide_banner -filters 2>/dev/null | grep ' vmaf_cuda ' > /dev/null || die "$b does not list the vmaf_cuda filter"
  nm "$b" | grep ' __asan_init$' > /dev/null || die "$b has no AddressSanitizer runtime"
done
echo "$stamp" > "$out/stamp"
log "done in $(( $(date +%s) - start )) s: $bin, $bin_plain"
