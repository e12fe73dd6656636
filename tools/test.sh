#!/usr/bin/env bash
# The test command: installs build dependencies, builds vmaf_cuda (and the patched
# static ffmpeg for the filter suite), then runs every meson test suite:
# golden, api, filter, gpu (gpu reports SKIP without a CUDA device).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-debian.sh
. tools/env.sh
builddir=${BUILDDIR:-build}
if [ ! -f "$builddir/build.ninja" ]; then
  meson setup "$builddir" --buildtype=release
fi
ninja -C "$builddir"
meson test -C "$builddir" --print-errorlogs --num-processes 2 "$@"
