#!/usr/bin/env bash
# On a GPU machine: a build whose kernels cannot run on this GPU (e.g. -Dgpu_arch=80
# -Dgpu_ptx=false on an sm_90 H200) must say so. From the bundle's .carry/sm80/
# (tools/device-bundle.sh with ARCH_CHECK_BUILD=...):
# - vmaf-cuda --version lists the archs built in;
# - --backend cuda fails (exit 1) naming the device, its compute capability and the archs;
# - --backend auto warns once with the same facts and scores on the CPU, bit-exact;
# - the filter: CUDA frames fail with the same error; software frames with backend=auto
#   warn once and score on the CPU; the banner lists the archs.
set -uo pipefail
cd "$(dirname "$0")/.."
B=.carry/sm80
S=.carry/shared
out=${OUT:-gpu-logs}
mkdir -p "$out"
passed=0 failed=0
check() { # name, status, evidence
    if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "PASS $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
    printf '%s\n' "$3" | sed 's/^/    /'
}
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "GPU: $name, compute capability $cc"
case_args=(-r "$S/media/src01_hrc00_576x324_3f_8bit.yuv" -d "$S/media/src01_hrc01_576x324_3f_8bit.yuv"
           -w 576 -h 324 -p 420 -b 8)
golden=$(tail -n 1 "$S/golden/src01_576x324_3f_8bit.csv" | sed -E 's/.* mean=([^ ]+).*/\1/')

v=$("$B/vmaf-cuda" --version 2>&1)
echo "$v" | grep -q "CUDA kernels: sm_80$"; check "vmaf-cuda --version lists sm_80 only" $? "$v"
if command -v cuobjdump >/dev/null; then
    # one sm_80 image per kernels/*.cu (4), no PTX; the CUDA runtime brings one sm_75 image
    elf=$(cuobjdump --list-elf --list-ptx "$B/vmaf-cuda" 2>&1 | grep -o -E 'sm_[0-9]+|compute_[0-9]+' | sort | uniq -c)
    [ "$(echo "$elf" | awk '$2 == "sm_80" {print $1}')" = 4 ] &&
        ! echo "$elf" | grep -q -E 'compute_|sm_(8[6-9]|9[0-9]|1[0-9][0-9])$'
    check "the sm80 binary holds sm_80 machine code for our 4 kernel files, no PTX, nothing newer" $? "$elf"
fi

e=$("$B/vmaf-cuda" "${case_args[@]}" --backend cuda 2>&1); rc=$?
want="CUDA device 0 ($name, compute capability $cc) cannot run this build's kernels, built for sm_80"
[ $rc = 1 ] && echo "$e" | grep -q -F "$want"; check "--backend cuda: exit 1, names device, capability, archs" $? "exit $rc: $e"

e=$("$B/vmaf-cuda" "${case_args[@]}" --backend auto 2>&1); rc=$?
n=$(echo "$e" | grep -c "warning: backend=auto: $want")
[ $rc = 0 ] && [ "$n" = 1 ] && echo "$e" | grep -q "backend cpu" &&
    echo "$e" | grep -q "VMAF score: $(printf '%.6f' "$golden")"
check "--backend auto: one warning, CPU backend, golden score" $? "exit $rc: $e"

ff="$B/ffmpeg"
hw=(-hwaccel cuda -hwaccel_output_format cuda)
d="$S/media/bbb_dis_854x480_120f.mp4" r="$S/media/bbb_ref_854x480_120f.mp4"
e=$("$ff" -hide_banner -nostdin "${hw[@]}" -i "$d" "${hw[@]}" -i "$r" -an -frames:v 5 \
     -lavfi "[0:v][1:v]vmaf_cuda" -f null - 2>&1); rc=$?
[ $rc != 0 ] && echo "$e" | grep -q -F "backend=cuda: $want"
check "filter, NVDEC frames: an error naming device, capability, archs" $? "exit $rc: $(echo "$e" | grep -i -E 'vmaf|error' | tail -n 4)"

e=$("$ff" -hide_banner -nostdin -i "$d" -i "$r" -an -frames:v 10 \
     -lavfi "[0:v][1:v]vmaf_cuda=backend=auto" -f null - 2>&1); rc=$?
n=$(echo "$e" | grep -c -F "backend=auto: $want")
[ $rc = 0 ] && [ "$n" = 1 ] && echo "$e" | grep -q "cpu backend, software frames" &&
    echo "$e" | grep -q "CUDA kernels: sm_80" && echo "$e" | grep -q "VMAF score: "
check "filter, software frames, backend=auto: one warning, CPU backend, banner lists sm_80" $? \
    "exit $rc: $(echo "$e" | grep -i -E 'vmaf' | tail -n 4)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
