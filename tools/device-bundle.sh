#!/usr/bin/env bash
# Gathers what the gpu suite needs on a GPU machine that has no build tools or Debian
# packages into .carry/ (ignored by git): the test and tool binaries, the static
# ffmpeg, and ../shared's golden files and clips, packed as .carry.tar.xz. Unpack it and
# run tools/device-gpu-suite.sh there.
# BENCH_CLIPS=DIR adds DIR/bbb_{ref,dis}_{1080p,4k}_hevc.mp4 for tests/filter/bench.py.
# ARCH_CHECK_BUILD=DIR ARCH_CHECK_FFMPEG=FILE add a build for another GPU (e.g. meson
# -Dgpu_arch=80 -Dgpu_ptx=false) and its ffmpeg as .carry/sm80/ for tools/device-arch-check.sh.
# ANCHOR_FFMPEG=FILE adds the libvmaf anchor's ffmpeg (libvmaf, libvmaf_cuda, scale_cuda:
# shared/tools/build-libvmaf-anchor.sh) as .carry/bin/ffmpeg-anchor, LADDER_CLIPS=DIR the
# clips of tools/make-ladder-clips.sh as .carry/ladder/, for tests/filter/bench_ladder.py.
# BENCH_ONLY=1 packs only what the benchmarks need (our ffmpeg, vmaf-cuda-bench, the anchor,
# the clips, shared/media's mp4 files); tools/device-gpu-suite.sh then skips the tests.
# FFMPEG_BIN=FILE: our ffmpeg (default build-ffmpeg/$FFMPEG_VERSION/bin/ffmpeg).
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${BUILDDIR:-build}
ver=${FFMPEG_VERSION:-9.0}
ffbin=${FFMPEG_BIN:-build-ffmpeg/$ver/bin/ffmpeg}
bench_only=${BENCH_ONLY:-0}
rm -rf .carry
mkdir -p .carry/bin .carry/shared/golden .carry/shared/media
shared=$(meson introspect "$builddir" --buildoptions | python3 -c \
  'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="golden_dir"][0])')
case "$shared" in /*) ;; *) shared="$PWD/$shared" ;; esac
cp "$builddir"/tools/vmaf-cuda-bench "$ffbin" .carry/bin/
cp "$shared"/../media/*.mp4 .carry/shared/media/
# Benchmark clips (1080p/4K) made beforehand where an encoder exists (an H200 has no NVENC).
if [ -n "${BENCH_CLIPS:-}" ]; then mkdir -p .carry/bench && cp "$BENCH_CLIPS"/*.mp4 .carry/bench/; fi
if [ -n "${ANCHOR_FFMPEG:-}" ]; then cp "$ANCHOR_FFMPEG" .carry/bin/ffmpeg-anchor; fi
if [ -n "${LADDER_CLIPS:-}" ]; then
  mkdir -p .carry/ladder
  cp "$LADDER_CLIPS"/ladder_ref_2160p.mp4 "$LADDER_CLIPS"/ladder_{2160p,1440p,1080p,720p,540p,360p}.mp4 .carry/ladder/
fi
strip .carry/bin/* 2>/dev/null || true
# The tests and what they read (not with BENCH_ONLY=1).
if [ "$bench_only" != 1 ]; then
cp "$builddir"/tests/check_test "$builddir"/tests/golden_gpu_test "$builddir"/tests/cli_test \
   "$builddir"/tools/vmaf-cuda .carry/bin/
strip .carry/bin/* 2>/dev/null || true
cp -r "$shared"/. .carry/shared/golden/
cp "$shared"/../media/*.yuv .carry/shared/media/
# The demo's sample (tools/demo.sh makes it with Debian's ffmpeg), for its NVDEC run.
if [ -f "$builddir/sample/dist.mp4" ]; then mkdir -p .carry/sample && cp "$builddir"/sample/*.mp4 .carry/sample/; fi
# The filter suite's pairing clips (x264), made here: the GPU machine has no encoder.
mkdir -p .carry/clips
python3 -c '
import sys; sys.path.insert(0, "tests/filter")
import parity_cases as p
class R:
    tmp = staticmethod(lambda n: ".carry/clips/" + n)
c = p.Clips(R(), "ffmpeg")
for n in p.CLIP_NAMES: c.get(n)
import ladder_test as l
c = l.LadderClips(R(), "ffmpeg")
for n in l.CLIP_NAMES: c.get(n)
'
# vmaf-cuda-batch's clips (x264), for tests/batch/batch_test.py --gpu.
python3 tests/batch/batch_test.py --make-clips --clips .carry/batch-clips
cp "$builddir"/tests/v1016_gpu_test "$builddir"/tests/libvmaf_log_gpu_test \
   "$builddir"/tests/ssim_cambi_api_gpu_test "$builddir"/tests/psnr_ciede_gpu_test \
   "$builddir"/tests/v1016_models_gpu_test "$builddir"/tests/ladder_gpu_test .carry/bin/ 2>/dev/null || true
strip .carry/bin/* 2>/dev/null || true
if [ -n "${ARCH_CHECK_BUILD:-}" ]; then
  mkdir -p .carry/sm80
  cp "$ARCH_CHECK_BUILD/tools/vmaf-cuda" "$ARCH_CHECK_FFMPEG" .carry/sm80/
  strip .carry/sm80/* 2>/dev/null || true
fi
fi # BENCH_ONLY
du -sh .carry
# The device tool carries at most 64 MiB: pack it (the binaries hold seven archs each).
# There: tar -xJf .carry.tar.xz && bash tools/device-gpu-suite.sh (carry .carry.tar.xz).
tar -cJf .carry.tar.xz .carry
du -sh .carry.tar.xz
