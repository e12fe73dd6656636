#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause-Patent
# AddressSanitizer + UndefinedBehaviorSanitizer, and the fuzzers, on the CPU backend: a
# second build directory (clang, -Db_sanitize=address,undefined, -Dcuda=disabled,
# -Dfuzz=true; UBSan stops at its first report), in which run the api suite, a golden
# subset, the filter suite's CPU cases (an ffmpeg whose vmaf_cuda objects are
# instrumented: tools/asan-ffmpeg.sh), the fuzz suite (seed corpus and regression inputs,
# each once) and timed libFuzzer runs (tools/fuzz.sh). Any sanitizer report, leak,
# failure or timeout fails it.
# tools/test.sh runs it after the main suites (docs/testing.md "Sanitizers and fuzzing": what runs,
# what it costs).
#
#   tools/sanitize.sh [STEP...]   steps: build api golden filter replay fuzz (default: all,
#                                 in order)
#
# Environment: ASAN_BUILDDIR (default build-asan); FUZZ_SECONDS (per harness, default 60)
# and FUZZ_JOBS (harnesses at once, default 2) for the fuzz step; for the filter step
# FFMPEG_DIR (the normal FFmpeg build it starts from, default build-ffmpeg/9.0, which
# `ninja -C ${BUILDDIR:-build} ffmpeg-9.0.bindir` brings up to date when FFMPEG_DIR is
# not set) and FILTER_CASES=all (every CPU case with the sanitizer build's library too,
# not only the subset below).
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${ASAN_BUILDDIR:-build-asan}
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build api golden filter replay fuzz)
for s in "${steps[@]}"; do
  case "$s" in build|api|golden|filter|replay|fuzz) ;; *) echo "sanitize: unknown step '$s' (build api golden filter replay fuzz)" >&2; exit 2 ;; esac
done

# clang with libFuzzer and the sanitizer runtimes; llvm for llvm-symbolizer (stacks with
# file:line). Debian packages, as tools/setup-debian.sh installs the rest.
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
missing=()
for p in clang libclang-rt-dev llvm; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "sanitize: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1:print_summary=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:print_summary=1}

# The api suite (all but the install test, suite `install`, whose C program links the
# library without the sanitizer runtimes) and the fuzz suite: by suite, so that a test
# added or renamed is not left out.
# The golden subset (a few cases per feature; docs/testing.md "Sanitizers and fuzzing"):
# EXECUTABLE|Catch2 test pattern|section (one case). Odd sizes, 8 to 16 bits, every feature
# and model family once through the C API, the CLI.
golden_runs=(
  "model_test|*|"
  "golden_test|every golden case*|testsrc2_321x241_8bit"
  "golden_test|every golden case*|sparks_480x270_5f_10bit"
  "golden_test|every golden case*|src01_576x324_3f_12bit"
  "golden_test|every golden case*|src01_576x324_3f_16bit"
  "golden_test|n_subsample*|"
  "golden_test|other models*|src01_576x324_3f_8bit vmaf_v0.6.1neg"
  "golden_test|other models*|sparks_480x270_5f_10bit vmaf_4k_v0.6.1"
  "golden_test|libvmaf JSON logs*|hall_cif_352x288_1f_8bit vmaf_b_v0.6.3"
  "libvmaf_log_test|*|hall_cif_352x288_1f_8bit.companion.json"
  "libvmaf_log_test|*|sparks_480x270_5f_10bit.companion.json"
  "libvmaf_log_test|*|src01_576x324_3f_16bit.companion.json"
  "libvmaf_log_test|*|hall_cif_352x288_1f_8bit.vmaf_v1.0.16_3d0h.json"
  "libvmaf_log_test|*|src01_576x324_3f_10bit.vmaf_v1.0.16_hfr_3d0h_2160.json"
  "libvmaf_log_test|*|sparks_480x270_5f_10bit.vmaf_v1.0.16_3d0h_2160.error.txt"
  "libvmaf_log_test|*|hall_cif_352x288_1f_8bit.vmaf_float_v0.6.1.json"
  "psnr_ciede_test|psnr and ciede through the C API vs libvmaf*|sparks_480x270_5f_10bit"
  "psnr_ciede_test|psnr at 4:2:2 and 4:4:4*|"
  "psnr_ciede_test|ciede at 4:4:4 and odd 4:2:0*|"
  "psnr_ciede_test|psnr and ciede errors*|"
  "psnr_ciede_test|psnr and ciede with keep_history=0*|"
  "ssim_cambi_api_test|float_ssim at small and odd sizes*|"
  "ssim_cambi_api_test|float_ms_ssim below its smallest size*|"
  "ssim_cambi_api_test|cambi: sizes and options libvmaf refuses*|"
  "v1016_models_test|v1.0.16 models through the C API*|sparks_480x270_5f_10bit vmaf_v1.0.16_hfr_5d0h"
  "v1016_models_test|speed_chroma refuses*|"
  "v1016_models_test|chroma_correction_parameter*|"
  "cli_test|CLI errors name the problem|"
  "cli_test|CLI --json logs*|testsrc2_321x241_8bit"
  "cli_test|CLI options of libvmaf's vmaf*|"
  "cli_test|CLI reads the chroma planes*|"
)
golden_targets=(tools/vmaf-cuda)
for run in "${golden_runs[@]}"; do
  t=tests/${run%%|*}
  [[ " ${golden_targets[*]} " == *" $t "* ]] || golden_targets+=("$t")
done

targets=(tests/api_test tests/video_reader_test tests/ladder_test tests/ordered_sum_test
         tests/vif_log2_test tests/frame_trace_test tests/live_test tests/log_file_test tests/pairing_test tests/align_test
         tools/registry-docs "${golden_targets[@]}")
for h in model video_reader options writers; do
  targets+=(tests/fuzz/fuzz_$h tests/fuzz/fuzz_${h}_replay)
done

declare -a summary
rc=0
step() {  # step NAME COMMAND...: runs and times one step
  local name=$1 start r=0
  shift
  start=$(date +%s)
  echo "sanitize: $name"
  "$@" || r=$?
  local t=$(( $(date +%s) - start ))
  if [ "$r" = 0 ]; then summary+=("sanitize $name: ok (${t} s)"); else summary+=("sanitize $name: FAILED (${t} s)"); rc=1; fi
  return 0
}

do_build() {
  if [ ! -f "$builddir/build.ninja" ]; then
    CC=clang CXX=clang++ meson setup "$builddir" -Dcuda=disabled -Dfuzz=true \
      -Db_sanitize=address,undefined -Db_lundef=false -Ddebug=false -Doptimization=1 \
      -Dc_args="-gline-tables-only -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
      -Dcpp_args="-gline-tables-only -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  fi
  ninja -C "$builddir" "${targets[@]}"
}

meson_tests() {  # meson_tests [--test-args ARGS] NAME...
  meson test -C "$builddir" --no-rebuild --print-errorlogs --num-processes 2 "$@"
}

# ordered_sum_test needs about a minute under ASan (30 s is its timeout): 10x the timeouts
do_api() { meson_tests --timeout-multiplier 10 --suite api --no-suite install; }

do_golden() {
  local r=0 run exe rest pattern section log n=0 t0
  local logs="$builddir/sanitize-logs"
  mkdir -p "$logs"
  for run in "${golden_runs[@]}"; do
    exe=${run%%|*}; rest=${run#*|}; pattern=${rest%%|*}; section=${rest#*|}
    local args=("$pattern")
    [ -z "$section" ] || args+=(-c "$section")
    log="$logs/golden-$((++n)).log"
    t0=$(date +%s)
    # the environment of these tests' meson definitions (tests/meson.build)
    # XML reporter: the log shows that the section ran (a misspelt one would pass empty)
    if VMAF_CUDA_TEST_BACKEND=cpu VMAF_CUDA_CLI="$PWD/$builddir/tools/vmaf-cuda" \
       timeout 600 "$builddir/tests/$exe" "${args[@]}" -r xml > "$log" 2>&1 &&
       grep -qE '<OverallResultsCases successes="[1-9][0-9]*" failures="0"' "$log" &&
       { [ -z "$section" ] || grep -qF "<Section name=\"$section\"" "$log"; }; then
      echo "  ok   $(( $(date +%s) - t0 )) s  $exe \"$pattern\" ${section:+-c \"$section\"}"
    else
      echo "  FAIL $(( $(date +%s) - t0 )) s  $exe \"$pattern\" ${section:+-c \"$section\"} (log: $log)"
      grep -vE '^\s*<(Expression|Original|Expanded|/|Section|OverallResult|TestCase|Group|Catch)' "$log" | tail -n 40
      grep -A6 'success="false"' "$log" | head -n 40 || true
      r=1
    fi
  done
  return $r
}

# The filter suite's CPU cases on FFmpeg 9.0 whose vmaf_cuda objects (and the fftools and
# libavfilter files our patches change) are instrumented, the rest of FFmpeg not
# (tools/asan-ffmpeg.sh; docs/testing.md "Sanitizers and fuzzing"). Two binaries share those
# objects: ffmpeg-plainlib (the normal libvmaf_cuda, as fast as the normal ffmpeg) runs
# every CPU case; ffmpeg (the sanitizer build's libvmaf_cuda, whose CPU backend is about
# 4x slower) runs the cases below, which hand the library what only the filter makes:
# picture layouts (P010's interleaved chroma and shift, 4:4:4, 10-bit), n_subsample,
# -frames:v (truncate), a ladder with an empty rendition and ends at different times, the
# outputs that fail (full disk, /dev/full), live windows, NDJSON and SEI. FILTER_CASES=all
# runs every case on it too (about 14 min on 2 busy cores). The liveness harness links
# the tree's archives (the sanitizer build's library). Left out always: valgrind (not
# under ASan), flat memory (ASan's quarantine grows the RSS), latency (real time).
# Every process writes its sanitizer reports into one folder (log_path): tests expect
# ffmpeg to fail in places, so a report is judged by its file, not by an exit status.
filter_skip=(valgrind memory_flat latency)
asan_lib_filter=(t_aligned t_formats t_cpu_hevc10_p010 t_cpu_subsample t_frames_limit
                 t_ladder_empty t_log_lost t_full_disk)
asan_lib_ladder=(t_lengths t_subsample_live)
asan_lib_live=(t_ndjson_stdout t_sei)
do_filter() {
  # the normal FFmpeg 9.0 build it starts from: tools/test.sh's (the filter suite's);
  # up to date, this is a no-op
  if [ -z "${FFMPEG_DIR:-}" ] && [ -f "${BUILDDIR:-build}/build.ninja" ]; then
    ninja -C "${BUILDDIR:-build}" ffmpeg-9.0.bindir || return 1
  fi
  bash tools/asan-ffmpeg.sh "$builddir" "${FFMPEG_DIR:-build-ffmpeg/9.0}" || return 1
  local out="$PWD/$builddir/ffmpeg-9.0" logs="$PWD/$builddir/sanitize-logs/filter" r=0 t0
  local shared golden cli="$PWD/$builddir/tools/vmaf-cuda"
  golden=$(meson introspect "$builddir" --buildoptions |
           python3 -c "import json,sys; print([o['value'] for o in json.load(sys.stdin) if o['name']=='golden_dir'][0])")
  case "$golden" in /*) ;; *) golden="$PWD/$golden" ;; esac
  shared=$(dirname "$golden")
  rm -rf "$logs"
  mkdir -p "$logs"
  # tests/filter/liveness_test.py compiles its harness with this
  printf '#!/bin/sh\nexec clang -fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize-link-c++-runtime "$@"\n' > "$out/cc"
  chmod +x "$out/cc"
  # protect_shadow_gap=0: the normal library may bring the CUDA runtime, which maps
  # memory ASan's shadow gap would refuse (only where a GPU driver is found)
  local env=(env "ASAN_OPTIONS=$ASAN_OPTIONS:protect_shadow_gap=0:log_path=$logs/report"
             "UBSAN_OPTIONS=$UBSAN_OPTIONS:log_path=$logs/report")
  local skip=("${filter_skip[@]/#/--skip=}") all=0
  [ "${FILTER_CASES:-}" != all ] || all=1
  local sel_filter=("${asan_lib_filter[@]/#/--only=}") sel_ladder=("${asan_lib_ladder[@]/#/--only=}")
  local sel_live=("${asan_lib_live[@]/#/--only=}")
  if [ "$all" = 1 ]; then sel_filter=("${skip[@]}"); sel_ladder=("${skip[@]}"); sel_live=("${skip[@]}"); fi
  local plain="$out/bin/ffmpeg-plainlib" ff="$out/bin/ffmpeg" live_args="--cli $cli --frames 1000"
  local runs=(
    "plainlib|filter_test.py --ffmpeg $plain --shared $shared ${skip[*]}"
    "plainlib|ladder_test.py --ffmpeg $plain --shared $shared ${skip[*]}"
    "plainlib|live_test.py --ffmpeg $plain --shared $shared $live_args ${skip[*]}"
    "asan-lib|filter_test.py --ffmpeg $ff --shared $shared ${sel_filter[*]}"
    "asan-lib|ladder_test.py --ffmpeg $ff --shared $shared ${sel_ladder[*]}"
    "asan-lib|live_test.py --ffmpeg $ff --shared $shared $live_args ${sel_live[*]}"
    "asan-lib|liveness_test.py --ffmpeg $ff --cc $out/cc"
  )
  local run tag cmd n=0 log
  for run in "${runs[@]}"; do
    tag=${run%%|*}; cmd=${run#*|}
    log="$logs/$((++n))-$tag-${cmd%%.py*}.log"
    t0=$(date +%s)
    # shellcheck disable=SC2086  # the words of the run
    if "${env[@]}" timeout 1800 python3 tests/filter/$cmd > "$log" 2>&1; then
      echo "  ok   $(( $(date +%s) - t0 )) s  $tag ${cmd%% *}: $(tail -n 1 "$log")"
    else
      echo "  FAIL $(( $(date +%s) - t0 )) s  $tag ${cmd%% *} (log: $log)"
      grep -E '^(FAIL|  )' "$log" | head -n 60
      r=1
    fi
  done
  local reports
  reports=$(find "$logs" -name 'report.*' | sort)
  if [ -n "$reports" ]; then
    echo "  $(echo "$reports" | wc -l) sanitizer reports in $logs (report.PID), the first ones:"
    for f in $(echo "$reports" | head -n 5); do echo "== $f"; head -n 60 "$f"; done
    r=1
  fi
  return $r
}

do_replay() { meson_tests --suite fuzz; }
do_fuzz() { ASAN_BUILDDIR="$builddir" bash tools/fuzz.sh; }

for s in "${steps[@]}"; do
  if [ "$s" != build ] && [ ! -f "$builddir/build.ninja" ]; then
    echo "sanitize: no $builddir yet: run tools/sanitize.sh build first" >&2; exit 2
  fi
  step "$s" "do_$s"
  # without a build nothing else can run
  if [ "$s" = build ] && [ "$rc" != 0 ]; then break; fi
done
printf '%s\n' "${summary[@]}"
exit $rc
