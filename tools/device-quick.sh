set -u
[ -d .carry ] || tar -xJf .carry.tar.xz
B=$PWD/.carry/bin; S=$PWD/.carry/shared
python3 tools/latency.py --ffmpeg $B/ffmpeg --dis $S/media/bbb_dis_854x480_120f.mp4 --ref $S/media/bbb_ref_854x480_120f.mp4 --frames 120 --gpu
python3 tools/latency.py --ffmpeg $B/ffmpeg --dis .carry/bench/bbb_dis_4k_hevc.mp4 --ref .carry/bench/bbb_ref_4k_hevc.mp4 --frames 120 --gpu
