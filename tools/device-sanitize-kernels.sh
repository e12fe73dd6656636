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
  for tag in psnr ciede speed cambi ssim ms_ssim cambi_pool ordered_sum signature; do
    # The pool's own test up to 1M values (its larger arrays take long under the tools);
    # racecheck of OrderedSum one array per size up to 4097 values, of CAMBI's c-values
    # the combinations up to 216 x 17 (racecheck takes seconds per launch of the
    # shared-memory kernels).
    lim="VMAF_CHECK_MAX_VALUES=1000003" filter="[$tag]~[.bench]"
    [ "$tool" = racecheck ] && [ "$tag" = ordered_sum ] && lim="VMAF_CHECK_MAX_VALUES=4097 VMAF_CHECK_MAX_SUMS=1"
    if [ "$tool" = racecheck ] && [ "$tag" = cambi ]; then
      lim="$lim VMAF_CHECK_MAX_PIXELS=${SANITIZE_CAMBI_PIXELS:-3672}" filter="cambi: device c-values*"
    fi
    env $lim timeout "$t" compute-sanitizer --tool "$tool" --error-exitcode 9 "$B/check_test" "$filter" \
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
