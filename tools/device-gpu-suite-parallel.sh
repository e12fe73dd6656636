#!/usr/bin/env bash
# The whole gpu suite and compute-sanitizer (memcheck, racecheck) in one device call of a
# few minutes: the steps of tools/device-gpu-suite.sh run in parallel groups on one GPU
# (STEPS=...), check_test split by tags over three processes, SANITIZE=1; no benchmarks.
# Run it from the repository root on the device machine, after unpacking the bundle of
# tools/device-bundle.sh (tar -xJf .carry.tar.xz). Logs: $OUT/<group>/ (default
# ./gpu-logs); a summary at the end; exit status 0 only when every group passed.
# LIMIT=seconds per group (default 480). Timings under this load are not benchmarks.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-logs}
limit=${LIMIT:-480}
mkdir -p "$out"
t0=$(date +%s)
group() { # name, then VAR=value settings for tools/device-gpu-suite.sh
  local n=$1; shift
  mkdir -p "$out/$n" "/tmp/vmaf_decoded_$n"
  ( env OUT="$out/$n" VMAF_CUDA_DECODED_DIR="/tmp/vmaf_decoded_$n" SKIP_BENCH=1 CHECK_TIMEOUT="$limit" "$@" \
      timeout "$limit" bash tools/device-gpu-suite.sh > "$out/$n/suite.log" 2>&1
    echo "$n exit $? after $(( $(date +%s) - t0 )) s" >> "$out/groups.txt" ) &
}
group check_a STEPS='check' CHECK_TAGS='[vif],[adm],[motion]'
group check_b STEPS='check' CHECK_TAGS='[ssim],[ms_ssim],[psnr],[ciede]'
group check_c STEPS='check' CHECK_TAGS='[cambi],[speed],[ordered_sum],[signature]'
group golden STEPS='golden_cuda|golden_cuda_smem64k'
group cli STEPS='cli_cuda|v1016_cuda|ladder_cuda|cli_ladder_cuda'
group models STEPS='v1016_models_cuda|psnr_ciede_cuda'
group filter STEPS='filter_gpu|demo_gpu|batch_gpu'
group ladder STEPS='ladder_gpu'
group live STEPS='live_gpu'
group logs STEPS='logs_cuda'
group logs_nv12 STEPS='logs_cuda_nv12'
group ssim_cambi STEPS='ssim_cambi_cuda|ssim_cambi_cuda_if16'
group san_v061 SANITIZE=1 STEPS='sanitize_(memcheck|racecheck)_(8|10)bit'
group san_memcheck_companion SANITIZE=1 STEPS='sanitize_memcheck_(8|10)bit_companion'
group san_racecheck_companion SANITIZE=1 STEPS='sanitize_racecheck_(8|10)bit_companion'
group san_ladder SANITIZE=1 STEPS='sanitize_(memcheck|racecheck)_(ladder|smem64k|signature)'
[ -d .carry/sm80 ] && group arch STEPS='arch_check'
wait
echo "=== groups ($(( $(date +%s) - t0 )) s)"
sort "$out/groups.txt"
echo "=== steps"
for d in "$out"/*/; do
  for f in "$d"*.log; do
    case $(basename "$f") in suite.log|cuda_device.log) continue ;; esac
    echo "$(basename "$d")/$(basename "$f" .log): $(grep -h -E "test cases|passed|failed|FAILED|ERROR SUMMARY|RACECHECK SUMMARY" "$f" | tail -n 2 | tr '\n' ' ' | cut -c1-200)"
  done
done
# What failed, named here (a call may bring back only a few of the log files).
echo "=== failures"
grep -h -E "^(FAIL|FAILED)\b|^[^ ]+:[0-9]+: FAILED:" "$out"/*/*.log 2>/dev/null | sort -u | head -n 40
! grep -qv " exit 0 " "$out/groups.txt"
