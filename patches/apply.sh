#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause-Patent
#
# Adds the vmaf_cuda filter to an FFmpeg source tree of your own.
#
#   patches/apply.sh [--files-only] [--no-sched] FFMPEG_SRC
#
# Reads the tree's version (its RELEASE or VERSION file), applies the wiring patch of
# that version (patches/ffmpeg-X.Y.patch: configure's --enable-libvmafcuda, the
# libavfilter/Makefile line, the allfilters.c entry; and patches/ffmpeg-X.Y-integration.patch:
# fftools tells the filter which frames each output took and when it is done, for
# -frames:v and the exit status) and the scheduler patch
# (patches/ffmpeg-X.Y-sched.patch: fftools lets every input a filter graph waits on
# run, so the two decoders of a vmaf_cuda graph decode side by side instead of taking
# turns), and copies the filter source (filter/) into libavfilter/. Running it again on
# a patched tree only refreshes the filter source. Supported: FFmpeg 9.0, 8.1 and 7.1;
# any other version is refused.
#
# --files-only   only copy the filter source (files that changed), no version check
#                and no patch (patches/build-ffmpeg.sh uses this after patching)
# --no-sched     leave fftools as it is (the filter works the same; a graph with two
#                4K HEVC decoders then runs at about 0.9 of their decode-only rate)
#
# Then build FFmpeg with your own flags plus these, vmaf_cuda being installed where
# pkg-config finds it (meson install; PKG_CONFIG_PATH=PREFIX/lib/<arch>/pkgconfig):
#
#   ./configure --enable-libvmafcuda --pkg-config-flags=--static [your flags]
#
# (--static: libvmaf_cuda is a static library and brings the C++ and CUDA runtimes as
# private libraries). For CUDA frames (NVDEC, scale_cuda) add --enable-ffnvcodec
# --enable-cuda --enable-nvdec (FFmpeg's own CUDA options).
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)
supported="9.0 8.1 7.1"

die() { echo "apply.sh: error: $*" >&2; exit 1; }
log() { echo "apply.sh: $*" >&2; }

files_only=0
sched=1
src=""
while [ $# -gt 0 ]; do
    case "$1" in
    --files-only) files_only=1; shift ;;
    --no-sched) sched=0; shift ;;
    -h|--help) sed -n '4,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$src" ] || die "one FFMPEG_SRC only"; src="$1"; shift ;;
    esac
done
[ -n "$src" ] || die "usage: patches/apply.sh [--files-only] [--no-sched] FFMPEG_SRC"
[ -d "$src" ] || die "'$src' is not a folder"
[ -f "$src/libavfilter/allfilters.c" ] && [ -f "$src/configure" ] ||
    die "'$src' is not an FFmpeg source tree (no configure or libavfilter/allfilters.c)"

# The filter source: every file of filter/ goes into libavfilter/ under its own name,
# compat.h as vf_vmaf_cuda_compat.h; its objects are the vmaf_cuda line of the Makefile.
filter_objects() {
    local f objs=""
    for f in "$repo_root"/filter/*.c; do objs="$objs $(basename "${f%.c}").o"; done
    echo "${objs# } framesync.o"
}

copy_filter_files() {
    local from to
    for from in "$repo_root"/filter/*.[ch]; do
        to="$src/libavfilter/$(basename "$from")"
        [ "$(basename "$from")" = compat.h ] && to="$src/libavfilter/vf_vmaf_cuda_compat.h"
        # copy only what changed, so make rebuilds only what depends on it
        cmp -s "$from" "$to" || cp "$from" "$to"
    done
    # the Makefile line lists exactly the filter's objects (a tree wired by an older
    # version gets the files added since and loses the ones removed)
    local mk="$src/libavfilter/Makefile" want
    want="OBJS-\$(CONFIG_VMAF_CUDA_FILTER)              += $(filter_objects)"
    if grep -q '^OBJS-$(CONFIG_VMAF_CUDA_FILTER) ' "$mk" && ! grep -qxF "$want" "$mk"; then
        awk -v want="$want" 'index($0, "OBJS-$(CONFIG_VMAF_CUDA_FILTER) ") == 1 { print want; next }
                             { print }' "$mk" > "$mk.vmaf_cuda" && mv "$mk.vmaf_cuda" "$mk" ||
            die "cannot set the vmaf_cuda line of $mk"
    fi
}

if [ "$files_only" = 1 ]; then
    copy_filter_files
    exit 0
fi

release=""
for f in RELEASE VERSION; do
    if [ -z "$release" ] && [ -f "$src/$f" ]; then release=$(head -n 1 "$src/$f" | tr -d '[:space:]'); fi
done
[ -n "$release" ] || die "cannot tell the FFmpeg version of '$src' (no RELEASE or VERSION file)"
# "9.0.2" -> 9.0, "7.1" -> 7.1, "n8.1.1" -> 8.1, "8.1.git" -> 8.1
major_minor=$(echo "$release" | sed -E 's/^n//; s/^([0-9]+)\.([0-9]+).*/\1.\2/; s/^([0-9]+)$/\1.0/')
patch_file="$script_dir/ffmpeg-$major_minor.patch"
case " $supported " in
*" $major_minor "*) ;;
*) die "FFmpeg $release is not supported (supported: ${supported// /, }); use a release of one of these" ;;
esac
[ -f "$patch_file" ] || die "missing $patch_file"
# fftools' part of the wiring (not optional): vmaf_cuda learns which frames each output
# took (-frames:v) and when ffmpeg is done with the graph (its exit status)
integration_file="$script_dir/ffmpeg-$major_minor-integration.patch"
[ -f "$integration_file" ] || die "missing $integration_file"
integration_needed=0
if ! grep -q 'vmaf_cuda_output_closed' "$src/fftools/ffmpeg_filter.c" 2>/dev/null; then
    patch -d "$src" -p1 --forward --dry-run --silent < "$integration_file" > /dev/null ||
        die "$(basename "$integration_file") does not apply to '$src' (FFmpeg $release; a modified fftools?); nothing was changed"
    integration_needed=1
fi
sched_file="$script_dir/ffmpeg-$major_minor-sched.patch"
sched_needed=0
has_sched=0
grep -q 'sch_filter_want_inputs' "$src/fftools/ffmpeg_sched.c" 2>/dev/null && has_sched=1
if [ "$sched" = 1 ]; then
    [ -f "$sched_file" ] || die "missing $sched_file"
    if [ "$has_sched" = 1 ]; then
        log "fftools already has the scheduler change"
    else
        # checked before anything is patched, so a refusal leaves the tree as it was
        patch -d "$src" -p1 --forward --dry-run --silent < "$sched_file" > /dev/null ||
            die "$(basename "$sched_file") does not apply to '$src' (FFmpeg $release; a modified fftools?); nothing was changed; --no-sched skips it"
        sched_needed=1
    fi
elif [ "$has_sched" = 1 ]; then
    log "--no-sched: fftools already has the scheduler change and keeps it (take fftools from a pristine tree to drop it)"
fi

if grep -q 'ff_vf_vmaf_cuda' "$src/libavfilter/allfilters.c"; then
    log "FFmpeg $release already has the vmaf_cuda wiring; refreshing the filter source"
else
    patch -d "$src" -p1 --forward --dry-run --silent < "$patch_file" > /dev/null ||
        die "$(basename "$patch_file") does not apply to '$src' (FFmpeg $release; a modified tree?)"
    patch -d "$src" -p1 --forward --no-backup-if-mismatch --silent < "$patch_file" ||
        die "$(basename "$patch_file") failed to apply to '$src'"
    log "applied $(basename "$patch_file") to FFmpeg $release"
fi
if [ "$integration_needed" = 1 ]; then
    patch -d "$src" -p1 --forward --no-backup-if-mismatch --silent < "$integration_file" ||
        die "$(basename "$integration_file") failed to apply to '$src'"
    log "applied $(basename "$integration_file") to FFmpeg $release"
fi
if [ "$sched_needed" = 1 ]; then
    patch -d "$src" -p1 --forward --no-backup-if-mismatch --silent < "$sched_file" ||
        die "$(basename "$sched_file") failed to apply to '$src'"
    log "applied $(basename "$sched_file") to FFmpeg $release"
fi
copy_filter_files
log "done: configure FFmpeg with --enable-libvmafcuda --pkg-config-flags=--static (see --help)"
