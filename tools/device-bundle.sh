#!/usr/bin/env bash
# Gathers what the gpu suite needs on a GPU machine that has no build tools or Debian
# packages into .carry/ (ignored by git): the test and tool binaries, the static
# ffmpeg, and ../shared's golden files and clips, packed as .carry.tar.xz. Unpack it and
# run tools/device-gpu-suite.sh there.
# BENCH_CLIPS=DIR adds DIR/bbb_{ref,dis}_{1080p,4k}_hevc.mp4 for tests/filter/bench.py.
# ARCH_CHECK_BUILD=DIR ARCH_CHECK_FFMPEG=FILE add a build for another GPU (e.g. meson
# -Dgpu_arch=80 -Dgpu_ptx=false) and its ffmpeg as .carry/sm80/ for tools/device-arch-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${BUILDDIR:-build}
ver=${FFMPEG_VERSION:-9.0}
rm -rf .carry
mkdir -p .carry/bin .carry/shared/golden .carry/shared/media
cp "$builddir"/tests/check_test "$builddir"/tests/golden_gpu_test "$builddir"/tests/cli_test \
   "$builddir"/tools/vmaf-cuda "$builddir"/tools/vmaf-cuda-bench "build-ffmpeg/$ver/bin/ffmpeg" .carry/bin/
strip .carry/bin/* 2>/dev/null || true
shared=$(meson introspect "$builddir" --buildoptions | python3 -c \
  'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="golden_dir"][0])')
case "$shared" in /*) ;; *) shared="$PWD/$shared" ;; esac
cp -r "$shared"/. .carry/shared/golden/
cp "$shared"/../media/*.yuv "$shared"/../media/*.mp4 .carry/shared/media/
# Benchmark clips (1080p/4K) made beforehand where an encoder exists (an H200 has no NVENC).
if [ -n "${BENCH_CLIPS:-}" ]; then mkdir -p .carry/bench && cp "$BENCH_CLIPS"/*.mp4 .carry/bench/; fi
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
cp "$builddir"/tests/v1016_gpu_test "$builddir"/tests/libvmaf_log_gpu_test \
   "$builddir"/tests/ssim_cambi_api_gpu_test "$builddir"/tests/psnr_ciede_gpu_test \
   "$builddir"/tests/v1016_models_gpu_test .carry/bin/ 2>/dev/null || true
strip .carry/bin/* 2>/dev/null || true
if [ -n "${ARCH_CHECK_BUILD:-}" ]; then
  mkdir -p .carry/sm80
  cp "$ARCH_CHECK_BUILD/tools/vmaf-cuda" "$ARCH_CHECK_FFMPEG" .carry/sm80/
  strip .carry/sm80/* 2>/dev/null || true
fi
du -sh .carry
# The device tool carries at most 64 MiB: pack it (the binaries hold seven archs each).
# There: tar -xJf .carry.tar.xz && bash tools/device-gpu-suite.sh (carry .carry.tar.xz).
tar -cJf .carry.tar.xz .carry
du -sh .carry.tar.xz
