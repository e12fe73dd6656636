#!/usr/bin/env bash
# The gpu suite on a GPU machine, from the bundle of tools/device-bundle.sh (in .carry/):
# kernels vs reference, golden cases through the CUDA backend (C API and CLI), the
# filter on NVDEC frames, then the benchmarks. Logs go to $OUT (or ./gpu-logs).
# A BENCH_ONLY=1 bundle (no test binaries) runs the benchmarks only. SKIP_BENCH=1: no
# benchmarks; E2E=0: not tests/filter/bench.py; LADDER=0: not tests/filter/bench_ladder.py
# (run when .carry/bin/ffmpeg-anchor and .carry/ladder/ are there; its --companion mode when
# .carry/bench/ has the 4K pair; COMPANION=0 skips that). STEPS=REGEX runs only the steps
# whose names match (see step() below), e.g. STEPS='check|golden_cuda' SKIP_BENCH=1.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-logs}
mkdir -p "$out"
B=$PWD/.carry/bin
S=$PWD/.carry/shared
export VMAF_CUDA_GOLDEN_DIR=$S/golden VMAF_CUDA_DECODED_DIR=${VMAF_CUDA_DECODED_DIR:-/tmp/vmaf_decoded}
mkdir -p "$VMAF_CUDA_DECODED_DIR"
nvidia-smi -L
declare -A rc
step() { # name timeout command...
  local name=$1 t=$2; shift 2
  # STEPS='check|golden_cuda|...': only the steps named (a bash regex of whole names).
  if [ -n "${STEPS:-}" ] && ! [[ $name =~ ^(${STEPS})$ ]]; then return 0; fi
  echo "=== $name"
  timeout "$t" "$@" > "$out/$name.log" 2>&1
  rc[$name]=$?
  tail -n 4 "$out/$name.log"
}
if [ -x "$B/check_test" ]; then
for f in bbb_ref_854x480_120f bbb_dis_854x480_120f; do
  "$B/ffmpeg" -nostdin -v error -y -i "$S/media/$f.mp4" -pix_fmt yuv420p -f rawvideo "$VMAF_CUDA_DECODED_DIR/$f.yuv"
done
for f in bbb_ref_854x480_120f_hevc10 bbb_dis_854x480_120f_hevc10; do
  "$B/ffmpeg" -nostdin -v error -y -i "$S/media/$f.mp4" -pix_fmt yuv420p10le -f rawvideo "$VMAF_CUDA_DECODED_DIR/$f.yuv"
done
# CHECK_TAGS='[vif],[adm]': only those check_test cases (tools/device-gpu-suite-parallel.sh
# splits them over processes); CHECK_TIMEOUT: seconds (default 240).
step check "${CHECK_TIMEOUT:-240}" "$B/check_test" ${CHECK_TAGS:+"$CHECK_TAGS"}
step golden_cuda 240 env VMAF_CUDA_TEST_BACKEND=cuda "$B/golden_gpu_test"
# VIF in the 6-row tiles that GPUs with 64 KiB of shared memory a block (Turing) run.
step golden_cuda_smem64k 240 env VMAF_CUDA_TEST_BACKEND=cuda VMAF_CUDA_VIF_SMEM_LIMIT=65536 "$B/golden_gpu_test"
step cli_cuda 240 env VMAF_CUDA_TEST_BACKEND=cuda VMAF_CUDA_CLI="$B/vmaf-cuda" "$B/cli_test" "CLI --json logs equal the golden values on every case"
[ -x "$B/v1016_gpu_test" ] && step v1016_cuda 300 "$B/v1016_gpu_test" "[api]"
# float_ssim, float_ms_ssim and cambi records (companion and v1.0.16 logs, cambi_options.tsv,
# size errors); again with 16 frames in flight (more term-map and c-value slots per lane).
[ -x "$B/psnr_ciede_gpu_test" ] && step psnr_ciede_cuda 600 env VMAF_CUDA_TEST_BACKEND=cuda "$B/psnr_ciede_gpu_test"
# Live QA on NVDEC / hwupload_cuda frames (windows, NDJSON, SEI, flat host and device memory).
step live_gpu 900 python3 tests/filter/live_test.py --gpu --ffmpeg "$B/ffmpeg" --shared "$S" --frames "${LIVE_FRAMES:-100000}"
if [ -x "$B/ssim_cambi_api_gpu_test" ]; then
  step ssim_cambi_cuda 600 env VMAF_CUDA_TEST_BACKEND=cuda "$B/ssim_cambi_api_gpu_test"
  step ssim_cambi_cuda_if16 600 env VMAF_CUDA_TEST_BACKEND=cuda VMAF_CUDA_TEST_IN_FLIGHT=16 \
    "$B/ssim_cambi_api_gpu_test" "[companion]"
fi
# speed_chroma / speed_temporal records and the v1.0.16 models (SDR, HFR) end to end,
# size refusals, chroma correction.
[ -x "$B/v1016_models_gpu_test" ] && step v1016_models_cuda 600 env VMAF_CUDA_TEST_BACKEND=cuda \
  "$B/v1016_models_gpu_test"
# Ladders through the C API on the CUDA backend (each rendition equals a session of its own),
# and the CLI with several -d.
if [ -x "$B/ladder_gpu_test" ]; then
  step ladder_cuda 300 env VMAF_CUDA_TEST_BACKEND=cuda "$B/ladder_gpu_test"
  step cli_ladder_cuda 300 env VMAF_CUDA_CLI="$B/vmaf-cuda" VMAF_CUDA_TEST_BACKEND=cuda "$B/cli_test" "[ladder]"
fi
# libvmaf's own logs (companion metrics, every model) through the CUDA backend, chroma
# planar and interleaved (NV12/P010 style).
if [ -x "$B/libvmaf_log_gpu_test" ]; then
  step logs_cuda 600 env VMAF_CUDA_TEST_BACKEND=cuda "$B/libvmaf_log_gpu_test"
  step logs_cuda_nv12 600 env VMAF_CUDA_TEST_BACKEND=cuda VMAF_CUDA_TEST_CHROMA=nv12 "$B/libvmaf_log_gpu_test"
  grep -h "differ" "$out/logs_cuda.log" | sort -u | tail -n 8
fi
step filter_gpu 400 python3 tests/filter/filter_test.py --gpu --ffmpeg "$B/ffmpeg" --shared "$S" \
  --workdir "$PWD/.carry/clips"
# Encoder ladders on NVDEC frames (scale_cuda renditions): each rendition against a
# separate two-input run; device memory flat over a long run (100,000 frames: 20,000 ran
# in about 3 s on an H200, too few samples of nvidia-smi to judge).
step ladder_gpu 600 python3 tests/filter/ladder_test.py --gpu --ffmpeg "$B/ffmpeg" --shared "$S" \
  --workdir "$PWD/.carry/clips" --frames "${LADDER_FRAMES:-100000}"
# vmaf-cuda-batch on NVDEC frames, every GPU of the host (clips made by device-bundle.sh).
[ -d .carry/batch-clips ] && step batch_gpu 300 python3 tests/batch/batch_test.py --gpu \
  --tool tools/vmaf-cuda-batch --ffmpeg "$B/ffmpeg" --clips "$PWD/.carry/batch-clips"
if [ -f .carry/sample/dist.mp4 ]; then
  # tools/demo.sh's GPU command on its sample: NVDEC frames straight into vmaf_cuda.
  step demo_gpu 120 "$B/ffmpeg" -nostdin -hide_banner -nostats \
    -hwaccel cuda -hwaccel_output_format cuda -i .carry/sample/dist.mp4 \
    -hwaccel cuda -hwaccel_output_format cuda -i .carry/sample/ref.mp4 \
    -lavfi "[0:v][1:v]vmaf_cuda=log_fmt=json:log_path=$out/demo_vmaf.json" -f null -
  grep -E "Parsed_vmaf_cuda|VMAF score" "$out/demo_gpu.log"
fi
# What the kernels hold: machine code per arch and PTX (cuobjdump of the CLI's fatbinary).
if command -v cuobjdump >/dev/null; then
  echo "=== cuobjdump $B/vmaf-cuda"
  cuobjdump --list-elf --list-ptx "$B/vmaf-cuda" | grep -o -E 'sm_[0-9]+|compute_[0-9]+' | sort | uniq -c
fi
# An explicit --cuda-device that does not exist: a clear error.
echo "=== cuda_device"
e=$("$B/vmaf-cuda" -r "$S/media/src01_hrc00_576x324_3f_8bit.yuv" -d "$S/media/src01_hrc01_576x324_3f_8bit.yuv" \
    -w 576 -h 324 -p 420 -b 8 --backend cuda --cuda-device 7 2>&1)
r=$?
echo "$e" | tee "$out/cuda_device.log" | tail -n 2
[ $r = 1 ] && echo "$e" | grep -q "cuda_device=7: no such CUDA device"
rc[cuda_device]=$?
[ -d .carry/sm80 ] && step arch_check 180 bash tools/device-arch-check.sh
# compute-sanitizer (SANITIZE=1): memcheck and racecheck over every kernel, through the
# CLI on the CUDA backend (8-bit and 10-bit cases).
if [ "${SANITIZE:-0}" = 1 ]; then
  for tool in memcheck racecheck; do
    for c in "src01_hrc00_576x324_3f_8bit src01_hrc01_576x324_3f_8bit 576 324 8" \
             "sparks_ref_480x270_5f_10bit sparks_dis_480x270_5f_10bit 480 270 10"; do
      set -- $c
      step "sanitize_${tool}_$5bit" 300 compute-sanitizer --tool "$tool" --error-exitcode 9 \
        "$B/vmaf-cuda" -r "$S/media/$1.yuv" -d "$S/media/$2.yuv" -w "$3" -h "$4" -p 420 -b "$5" --backend cuda
      # Every companion feature and a v1.0.16 model (cambi, speed_chroma, adm/motion options).
      step "sanitize_${tool}_$5bit_companion" 400 compute-sanitizer --tool "$tool" --error-exitcode 9 \
        "$B/vmaf-cuda" -r "$S/media/$1.yuv" -d "$S/media/$2.yuv" -w "$3" -h "$4" -p 420 -b "$5" --backend cuda \
        --feature psnr=enable_mse=true:enable_apsnr=true --feature float_ssim=enable_lcs=true \
        --feature float_ms_ssim=enable_lcs=true --feature ciede --feature cambi \
        -m version=vmaf_v1.0.16_3d0h:name=v1016 -m version=vmaf_v1.0.16_hfr_3d0h:name=hfr
    done
    # VIF's 6-row tiles (VMAF_CUDA_VIF_SMEM_LIMIT: as on a GPU with 64 KiB a block).
    step "sanitize_${tool}_smem64k" 300 env VMAF_CUDA_VIF_SMEM_LIMIT=65536 compute-sanitizer --tool "$tool" \
      --error-exitcode 9 "$B/vmaf-cuda" -r "$S/media/src01_hrc00_576x324_3f_8bit.yuv" \
      -d "$S/media/src01_hrc01_576x324_3f_8bit.yuv" -w 576 -h 324 -p 420 -b 8 --backend cuda
    # A ladder (two renditions, one reference) through the CLI: the ladder kernels.
    step "sanitize_${tool}_ladder" 300 compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$B/vmaf-cuda" -r "$S/media/src01_hrc00_576x324_3f_8bit.yuv" -d "$S/media/src01_hrc01_576x324_3f_8bit.yuv" \
      -d "$S/media/src01_hrc00_576x324_3f_8bit.yuv" -w 576 -h 324 -p 420 -b 8 --backend cuda \
      -o "$out/sanitize_${tool}_ladder_%d.json" --json
    # The alignment's signature kernel (cell sums), its check test's planes up to 4K.
    step "sanitize_${tool}_signature" 300 compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$B/check_test" "[signature]"
  done
fi
fi # tests
[ "${SKIP_BENCH:-0}" = 1 ] || {
  step bench 300 "$B/vmaf-cuda-bench" --seconds 1.5
  cat "$out/bench.log"
  if [ "${E2E:-1}" = 1 ]; then
  step e2e 300 python3 tests/filter/bench.py --ffmpeg "$B/ffmpeg" --shared "$S" --workdir "$PWD/.carry/bench" --cases "${E2E_CASES:-bbb,1080p,4k}"
  cat "$out/e2e.log"
  # Issue 9 and 10 goals: the companion features, and a v1.0.16 model, at 4K HEVC.
  step e2e_companion 300 python3 tests/filter/bench.py --ffmpeg "$B/ffmpeg" --shared "$S" --workdir "$PWD/.carry/bench" \
    --cases 4k --vmaf-opts "feature='name=psnr|name=float_ssim|name=float_ms_ssim|name=cambi'"
  cat "$out/e2e_companion.log"
  step e2e_v1016 300 python3 tests/filter/bench.py --ffmpeg "$B/ffmpeg" --shared "$S" --workdir "$PWD/.carry/bench" \
    --cases 4k --vmaf-opts "model=version=vmaf_v1.0.16_3d0h"
  cat "$out/e2e_v1016.log"
  fi
  # A ladder (4K reference, six renditions upscaled by scale_cuda) against six libvmaf_cuda
  # instances of the anchor's ffmpeg; then issue 9's companion features against CPU libvmaf.
  if [ "${LADDER:-1}" = 1 ] && [ -x "$B/ffmpeg-anchor" ] && [ -d .carry/ladder ]; then
    step ladder "${LADDER_TIMEOUT:-540}" python3 tests/filter/bench_ladder.py --ffmpeg "$B/ffmpeg" \
      --anchor "$B/ffmpeg-anchor" --clips .carry/ladder --timeout 240
    cat "$out/ladder.log"
  fi
  if [ "${COMPANION:-1}" = 1 ] && [ -x "$B/ffmpeg-anchor" ] && [ -f .carry/bench/bbb_ref_4k_hevc.mp4 ]; then
    step ladder_companion "${COMPANION_TIMEOUT:-540}" python3 tests/filter/bench_ladder.py --companion \
      --ffmpeg "$B/ffmpeg" --anchor "$B/ffmpeg-anchor" --pair-dir .carry/bench --timeout 240 \
      --threads "$(nproc)"
    cat "$out/ladder_companion.log"
  fi
}
echo "=== summary"
fail=0
for k in "${!rc[@]}"; do echo "$k: exit ${rc[$k]}"; [ "${rc[$k]}" = 0 ] || fail=1; done
exit $fail
