#!/usr/bin/env bash
# Makes the clips of tests/filter/bench_ladder.py: a 3840x2160 HEVC 8-bit 4:2:0 reference
# and six x265 renditions of it (2160p, 1440p, 1080p, 720p, 540p, 360p; CRF 24..30, preset
# fast, a key frame every 2 s), all with the reference's frame count and timestamps.
#   tools/make-ladder-clips.sh OUTDIR [SOURCE]
# SOURCE (default ../shared/media/bbb_ref_854x480_120f.mp4 beside the clone): a 3840x2160
# HEVC yuv420p file is taken as the reference as it is (video stream copied: e.g. the
# bbb_ref_4k_hevc.mp4 that tests/filter/bench.py makes with NVENC); anything else is scaled
# to 3840x2160 (lanczos) and encoded with x265 at CRF 12. FFMPEG (default ffmpeg) needs
# libx265: Debian's does; the GPU machine's has no encoder, so make them beforehand and
# carry them (tools/device-bundle.sh LADDER_CLIPS=OUTDIR).
# Files: ladder_ref_2160p.mp4 and ladder_{2160p,1440p,1080p,720p,540p,360p}.mp4.
set -euo pipefail
out=${1:?usage: make-ladder-clips.sh OUTDIR [SOURCE]}
src=${2:-$(dirname "$0")/../../shared/media/bbb_ref_854x480_120f.mp4}
ff=${FFMPEG:-ffmpeg}
preset=${PRESET:-fast}
mkdir -p "$out"
ref=$out/ladder_ref_2160p.mp4
probe=$(ffprobe -v error -select_streams v:0 -show_entries stream=codec_name,width,height,pix_fmt \
        -of csv=p=0 "$src")
x265() { # input output filter crf
  "$ff" -hide_banner -nostdin -loglevel error -y -i "$1" -map 0:v:0 -an -vf "$3" -fps_mode passthrough \
    -c:v libx265 -preset "$preset" -crf "$4" -pix_fmt yuv420p -tag:v hvc1 \
    -x265-params "log-level=error:keyint=48:min-keyint=48" "$2.part.mp4"
  mv "$2.part.mp4" "$2"
}
if [ "$probe" = "hevc,3840,2160,yuv420p" ]; then
  "$ff" -hide_banner -nostdin -loglevel error -y -i "$src" -map 0:v:0 -an -c copy "$ref"
else
  x265 "$src" "$ref" "scale=3840:2160:flags=lanczos" 12
fi
# height crf (width = 16/9 height)
for r in "2160 24" "1440 25" "1080 26" "720 27" "540 28" "360 30"; do
  set -- $r
  x265 "$ref" "$out/ladder_${1}p.mp4" "scale=$(($1 * 16 / 9)):$1:flags=lanczos" "$2"
done
for f in "$ref" "$out"/ladder_{2160p,1440p,1080p,720p,540p,360p}.mp4; do
  n=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets,width,height \
      -of csv=p=0 "$f")
  printf '%-26s %9d bytes  %s\n' "$(basename "$f")" "$(stat -c %s "$f")" "$n"
done
du -ch "$ref" "$out"/ladder_{2160p,1440p,1080p,720p,540p,360p}.mp4 | tail -n 1
