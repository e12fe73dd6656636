#!/usr/bin/env bash
# The main job on a fresh Debian machine: installs what is needed, builds vmaf_cuda and a
# patched static ffmpeg with the vmaf_cuda filter, makes a built-in sample (a synthetic
# reference and an H.264 re-encode of it), and scores it with vmaf_cuda: NVDEC frames
# on the GPU when a CUDA device is present, else software frames on the CPU backend.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-debian.sh
. tools/env.sh
builddir=${BUILDDIR:-build}
[ -f "$builddir/build.ninja" ] || meson setup "$builddir" --buildtype=release
# Only what the main job needs: the library (the filter links it) and the one FFmpeg;
# tools/test.sh builds the rest (tests, CLI, the other FFmpeg versions).
ninja -C "$builddir" libvmaf_cuda.a
FFMPEG_VERSION=${FFMPEG_VERSION:-9.0}
bash patches/build-ffmpeg.sh --meson-build-dir "$builddir" "$FFMPEG_VERSION"
ff="build-ffmpeg/$FFMPEG_VERSION/bin/ffmpeg"

sample="$builddir/sample"
mkdir -p "$sample"
if [ ! -f "$sample/dist.mp4" ]; then
  # Debian's ffmpeg (with libx264) makes the sample: 5 s of testsrc2 at 640x360.
  ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=640x360:rate=25:duration=5 \
    -c:v libx264 -preset veryfast -crf 10 -pix_fmt yuv420p "$sample/ref.mp4"
  ffmpeg -nostdin -v error -y -i "$sample/ref.mp4" \
    -c:v libx264 -preset veryfast -crf 36 -pix_fmt yuv420p "$sample/dist.mp4"
fi

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "demo: CUDA device found: NVDEC decodes, vmaf_cuda scores on the GPU"
  hw=(-hwaccel cuda -hwaccel_output_format cuda)
  backend=auto
else
  echo "demo: no CUDA device: software decoding, vmaf_cuda on its CPU backend"
  hw=()
  backend=cpu
fi
log="$sample/ffmpeg.log"
if ! "$ff" -nostdin -hide_banner -nostats -loglevel info "${hw[@]}" -i "$sample/dist.mp4" \
     "${hw[@]}" -i "$sample/ref.mp4" \
     -lavfi "[0:v][1:v]vmaf_cuda=backend=$backend:log_fmt=json:log_path=$sample/vmaf.json" \
     -f null - > "$log" 2>&1; then
  tail -n 20 "$log"
  echo "demo: ffmpeg failed (log: $log)" >&2
  exit 1
fi
grep -E "Parsed_vmaf_cuda|VMAF score" "$log"
echo "demo: per-frame log in $sample/vmaf.json"
