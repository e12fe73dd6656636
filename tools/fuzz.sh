#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause-Patent
# Timed libFuzzer runs of the harnesses of tests/fuzz/ (docs/testing.md "Sanitizers and fuzzing"),
# in the ASan + UBSan build directory that tools/sanitize.sh sets up (-Dfuzz=true):
#
#   tools/fuzz.sh [HARNESS...]     model, video_reader, options, writers (default: all four)
#
# Each harness fuzzes for FUZZ_SECONDS (default 60) from its seed corpus and regression
# inputs, FUZZ_JOBS of them at once (default 2). A crash, a sanitizer report, a leak, an
# input slower than 10 s or more than 2048 MB of memory fails the run; the input is kept
# in BUILDDIR/fuzz/artifacts/ and the log in BUILDDIR/fuzz/HARNESS.log. Inputs that reach
# new code go to BUILDDIR/fuzz/corpus/HARNESS/ (reused by the next run, not committed).
# Findings the harnesses step around until their owners fix them (tests/fuzz/known-failures.txt)
# are skipped here (VMAF_CUDA_FUZZ_SKIP_KNOWN) and replayed by the `fuzz` suite.
# Environment: ASAN_BUILDDIR (default build-asan), FUZZ_SECONDS, FUZZ_JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${ASAN_BUILDDIR:-build-asan}
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-2}
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(model video_reader options writers)
for h in "${harnesses[@]}"; do
  [ -x "$builddir/tests/fuzz/fuzz_$h" ] || {
    echo "fuzz: no $builddir/tests/fuzz/fuzz_$h: run tools/sanitize.sh build first" >&2; exit 2; }
done
work="$builddir/fuzz"
mkdir -p "$work/artifacts"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export VMAF_CUDA_FUZZ_SKIP_KNOWN=1

run_one() {
  local h=$1 dict=() seeds=(tests/fuzz/corpus/"$1")
  mkdir -p "$work/corpus/$h"
  [ -f "tests/fuzz/$h.dict" ] && dict=(-dict="tests/fuzz/$h.dict")
  [ -d "tests/fuzz/regression/$h" ] && seeds+=("tests/fuzz/regression/$h")
  "$builddir/tests/fuzz/fuzz_$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/$h-" "${dict[@]}" \
    "$work/corpus/$h" "${seeds[@]}" > "$work/$h.log" 2>&1
  echo $? > "$work/$h.rc"
}

rc=0
report() {
  local h=$1 r=$2 log="$work/$1.log" runs rate
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  if [ "$r" = 0 ]; then
    echo "fuzz $h: ok, ${runs:-?} inputs in $(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log") s (${rate:-?}/s)"
  else
    rc=1
    echo "fuzz $h: FAILED (exit $r) after ${runs:-?} inputs; log: $log"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz harness:)|^    #[0-9]+ ' "$log" | head -n 40 || true
    echo "  the input: $(ls -t "$work/artifacts/$h-"* 2>/dev/null | head -n 1)"
    echo "  replay it: $builddir/tests/fuzz/fuzz_${h}_replay FILE; once fixed, commit it as"
    echo "  tests/fuzz/regression/$h/<what-it-found> (the fuzz suite replays it)"
  fi
}
for h in "${harnesses[@]}"; do
  while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  rm -f "$work/$h.rc"
  (set +e; run_one "$h") &
done
wait
for h in "${harnesses[@]}"; do report "$h" "$(cat "$work/$h.rc" 2>/dev/null || echo 'no status')"; done
exit $rc
