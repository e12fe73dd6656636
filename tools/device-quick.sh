set -u
[ -d .carry ] || tar -xJf .carry.tar.xz
B=$PWD/.carry/bin; S=$PWD/.carry/shared
echo "=== live_gpu"; timeout 200 python3 tests/filter/live_test.py --gpu --ffmpeg $B/ffmpeg --shared $S --frames 100000 > $OUT/live_gpu.log 2>&1; echo rc=$?; grep -E '^(PASS|FAIL|SKIP)|passed' $OUT/live_gpu.log | cut -c1-400
for sz in 1920x1080 3840x2160; do for f in psnr float_ssim float_ms_ssim cambi ciede speed_chroma:speed_max_val=45:speed_nn_floor=0.1:speed_sigma_nn=0.19:speed_weight_var_mode=5; do
  echo "=== bench $sz $f"; timeout 40 $B/vmaf-cuda-bench --sizes $sz --bpc 8 --seconds 1 --no-cpu --no-prediction --feature name=$f 2>&1 | tail -1
done; done
echo "=== bench vmaf"; timeout 60 $B/vmaf-cuda-bench --sizes 1920x1080 3840x2160 --bpc 8 10 --seconds 1 --no-cpu 2>&1 | tail -5
echo "=== bench v1016"; timeout 60 $B/vmaf-cuda-bench --sizes 1920x1080 3840x2160 --bpc 8 --seconds 1 --no-cpu --model version=vmaf_v1.0.16_3d0h 2>&1 | tail -3
st() { n=$1; shift; echo "=== $n"; timeout 150 python3 tests/filter/bench.py --ffmpeg $B/ffmpeg --shared $S --workdir $PWD/.carry/bench "$@" > $OUT/$n.log 2>&1; grep -E 'h264|hevc' $OUT/$n.log | tail -3 | cut -c1-75; }
st e2e --cases bbb,1080p,4k
st e2e_companion --cases 4k --vmaf-opts "feature='name=psnr|name=float_ssim|name=float_ms_ssim|name=cambi'"
st e2e_v1016 --cases 4k --vmaf-opts "model=version=vmaf_v1.0.16_3d0h"
