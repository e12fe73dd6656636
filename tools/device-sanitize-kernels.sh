#!/usr/bin/env bash
# On a GPU machine, from the bundle (.carry/): compute-sanitizer memcheck and racecheck over
# the check tests of the companion and SpEED kernels, one process per tag, in parallel
# (the reference side of each test is CPU-bound). Logs to $OUT (or ./gpu-logs).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-logs}
mkdir -p "$out"
B=$PWD/.carry/bin
t=${SANITIZE_TIMEOUT:-400}
pids=()
for tool in memcheck racecheck; do
  for tag in psnr ciede speed cambi ssim ms_ssim cambi_pool ordered_sum; do
    # The pool's own test up to 1M values (its larger arrays take long under the tools).
    VMAF_CHECK_MAX_VALUES=1000003 timeout "$t" compute-sanitizer --tool "$tool" --error-exitcode 9 "$B/check_test" "[$tag]" \
      > "$out/san_${tool}_${tag}.log" 2>&1 &
    pids+=("$!:${tool}_${tag}")
  done
done
fail=0
for p in "${pids[@]}"; do
  wait "${p%%:*}"; rc=$?
  name=${p#*:}
  sum=$(grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|All tests passed|test cases:" "$out/san_$name.log" | tr '\n' ' ')
  echo "$name: exit $rc $sum"
  [ "$rc" = 0 ] || fail=1
done
exit $fail
