#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause-Patent
# Suite `filter`: patches/apply.sh on FFmpeg trees.
#   apply_test.sh REPO_ROOT FFMPEG_SRC    (FFMPEG_SRC: a tree patches/build-ffmpeg.sh made)
# - the files the wiring, integration and scheduler patches touch, taken from that tree
#   and un-patched, come out of apply.sh identical to the tree build-ffmpeg.sh built,
#   filter source included;
# - a second run on the patched copy changes nothing;
# - an unsupported version, a folder that is no FFmpeg tree and a tree without a version
#   are refused with a message naming the problem.
set -uo pipefail
repo=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() { # name, condition result
    if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
}
release=$(head -n 1 "$src/RELEASE")
mm=$(echo "$release" | sed -E 's/^([0-9]+)\.([0-9]+).*/\1.\2/')
patch_file="$repo/patches/ffmpeg-$mm.patch"
sched_file="$repo/patches/ffmpeg-$mm-sched.patch"
integration_file="$repo/patches/ffmpeg-$mm-integration.patch"
sched_files="fftools/ffmpeg_filter.c fftools/ffmpeg_sched.c fftools/ffmpeg_sched.h"

mk_tree() { # dir: copy of the wired files of $src, un-patched
    mkdir -p "$1/libavfilter" "$1/fftools"
    cp "$src/configure" "$src/RELEASE" "$1/"
    cp "$src/libavfilter/Makefile" "$src/libavfilter/allfilters.c" "$src/libavfilter/avfilter.c" \
       "$1/libavfilter/"
    for f in $sched_files; do cp "$src/$f" "$1/$f"; done
    # (apply.sh set the filter's Makefile line to its objects; the patch has the short one)
    want=$(grep '^+OBJS-$(CONFIG_VMAF_CUDA_FILTER) ' "$patch_file" | cut -c2-)
    awk -v want="$want" 'index($0, "OBJS-$(CONFIG_VMAF_CUDA_FILTER) ") == 1 { print want; next }
                         { print }' "$1/libavfilter/Makefile" > "$1/mk" && mv "$1/mk" "$1/libavfilter/Makefile"
    patch -d "$1" -p1 -R --silent --no-backup-if-mismatch < "$patch_file"
    patch -d "$1" -p1 -R --silent --no-backup-if-mismatch < "$sched_file"
    patch -d "$1" -p1 -R --silent --no-backup-if-mismatch < "$integration_file"
}
t="$work/tree"
mk_tree "$t"
! grep -q ff_vf_vmaf_cuda "$t/libavfilter/allfilters.c"; check "un-patched copy has no vmaf_cuda entry" $?
out=$(bash "$repo/patches/apply.sh" "$t" 2>&1); rc=$?
echo "$out" | sed 's/^/     /'
check "apply.sh on FFmpeg $release succeeds" $rc
filter_files=$(cd "$repo/filter" && ls *.c *.h | grep -v '^compat\.h$' | sed 's|^|libavfilter/|')
for f in configure libavfilter/Makefile libavfilter/allfilters.c $filter_files \
         libavfilter/vf_vmaf_cuda_compat.h libavfilter/avfilter.c $sched_files; do
    cmp -s "$t/$f" "$src/$f"; check "$f equals build-ffmpeg.sh's tree" $?
done
grep -q sch_filter_want_inputs "$t/fftools/ffmpeg_sched.c"; check "the scheduler patch is in" $?
grep -q vmaf_cuda_output_closed "$t/fftools/ffmpeg_filter.c"; check "the integration patch is in" $?
before=$(cat "$t/configure" "$t/libavfilter/"* "$t/fftools/"* | sha256sum)
out=$(bash "$repo/patches/apply.sh" "$t" 2>&1); rc=$?
after=$(cat "$t/configure" "$t/libavfilter/"* "$t/fftools/"* | sha256sum)
[ $rc = 0 ] && [ "$before" = "$after" ] && echo "$out" | grep -q "already has"; check "a second run changes nothing" $?

n="$work/nosched"
mk_tree "$n"
pristine=$(cat "$n/fftools/ffmpeg_sched.c" "$n/fftools/ffmpeg_sched.h" | sha256sum)
out=$(bash "$repo/patches/apply.sh" --no-sched "$n" 2>&1); rc=$?
[ $rc = 0 ] && [ "$(cat "$n/fftools/ffmpeg_sched.c" "$n/fftools/ffmpeg_sched.h" | sha256sum)" = "$pristine" ] &&
    ! grep -q sch_filter_want_inputs "$n/fftools/ffmpeg_filter.c" &&
    grep -q vmaf_cuda_output_closed "$n/fftools/ffmpeg_filter.c" &&
    cmp -s "$n/libavfilter/allfilters.c" "$src/libavfilter/allfilters.c"
check "--no-sched wires the filter with the integration patch and leaves the scheduler as it is" $?

m="$work/modified"
mk_tree "$m"
sed -i 's/^static int choose_input(/static int choose_input_local(/' "$m/fftools/ffmpeg_filter.c"
before=$(cat "$m/configure" "$m/libavfilter/"* "$m/fftools/"* | sha256sum)
out=$(bash "$repo/patches/apply.sh" "$m" 2>&1); rc=$?
echo "     $out"
[ $rc != 0 ] && echo "$out" | grep -q "ffmpeg-$mm-sched.patch does not apply.*nothing was changed; --no-sched skips it" &&
    [ "$(cat "$m/configure" "$m/libavfilter/"* "$m/fftools/"* | sha256sum)" = "$before" ]
check "a modified fftools: refused before anything is patched" $?
out=$(bash "$repo/patches/apply.sh" --no-sched "$m" 2>&1); rc=$?
[ $rc = 0 ] && cmp -s "$m/libavfilter/vf_vmaf_cuda.c" "$src/libavfilter/vf_vmaf_cuda.c"
check "then --no-sched wires the filter" $?

u="$work/old"
mk_tree "$u"
echo "6.1.2" > "$u/RELEASE"
out=$(bash "$repo/patches/apply.sh" "$u" 2>&1); rc=$?
echo "     $out"
[ $rc != 0 ] && echo "$out" | grep -q "FFmpeg 6.1.2 is not supported (supported: 9.0, 8.1, 7.1)"; check "FFmpeg 6.1 refused" $?
! grep -q ff_vf_vmaf_cuda "$u/libavfilter/allfilters.c"; check "refused tree left untouched" $?

mkdir -p "$work/empty"
out=$(bash "$repo/patches/apply.sh" "$work/empty" 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q "is not an FFmpeg source tree"; check "a folder that is no FFmpeg tree refused" $?
rm "$u/RELEASE"
out=$(bash "$repo/patches/apply.sh" "$u" 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q "cannot tell the FFmpeg version"; check "a tree without RELEASE or VERSION refused" $?
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
