set -u
[ -d .carry ] || tar -xJf .carry.tar.xz
B=$PWD/.carry/bin; S=$PWD/.carry/shared
for o in "n_subsample=1000" "n_subsample=1" ; do
  echo "=== e2e $o"; timeout 100 python3 tests/filter/bench.py --ffmpeg $B/ffmpeg --shared $S --workdir $PWD/.carry/bench --cases 4k --loops 3 --vmaf-opts "$o" 2>&1 | grep hevc | tail -1
done
D=$PWD/.carry/bench
echo "=== dec both into one null output, no filter"; /usr/bin/time -f "%e s" $B/ffmpeg -nostdin -hide_banner -nostats -stream_loop 2 -hwaccel cuda -hwaccel_output_format cuda -i $D/bbb_dis_4k_hevc.mp4 -stream_loop 2 -hwaccel cuda -hwaccel_output_format cuda -i $D/bbb_ref_4k_hevc.mp4 -map 0:v -map 1:v -c:v wrapped_avframe -f null - 2>&1 | tail -1
echo "=== dec ref only"; /usr/bin/time -f "%e s" $B/ffmpeg -nostdin -hide_banner -nostats -stream_loop 2 -hwaccel cuda -hwaccel_output_format cuda -i $D/bbb_ref_4k_hevc.mp4 -c:v wrapped_avframe -f null - 2>&1 | tail -1
echo "=== dec dis only"; /usr/bin/time -f "%e s" $B/ffmpeg -nostdin -hide_banner -nostats -stream_loop 2 -hwaccel cuda -hwaccel_output_format cuda -i $D/bbb_dis_4k_hevc.mp4 -c:v wrapped_avframe -f null - 2>&1 | tail -1
echo "=== dec both, extra_hw_frames 16, vmaf"; /usr/bin/time -f "%e s" $B/ffmpeg -nostdin -hide_banner -nostats -stream_loop 2 -hwaccel cuda -hwaccel_output_format cuda -extra_hw_frames 16 -i $D/bbb_dis_4k_hevc.mp4 -stream_loop 2 -hwaccel cuda -hwaccel_output_format cuda -extra_hw_frames 16 -i $D/bbb_ref_4k_hevc.mp4 -lavfi "[0:v][1:v]vmaf_cuda" -f null - 2>&1 | tail -1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
