#!/usr/bin/env bash
# Installs what vmaf_cuda's build and tests need on Debian (bookworm or newer), as root
# (or through sudo). The CUDA toolkit is optional: when nvcc is found (PATH or
# /usr/local/cuda/bin) the CUDA backend is built too.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
# slurm-wlm and munge: the batch suite starts its own one-node cluster (its own
# slurm.conf, key and ports in a temporary folder; the system's daemons are not used).
# ffmpeg (Debian's, with libx264 and libsrt) makes the test clips and streams them in the
# network test; openssl makes its HTTPS certificate; libsrt-openssl-dev and libssl-dev
# are linked into the bundled ffmpeg (patches/build-ffmpeg.sh installs them too).
# vmaf-cuda-report (tools/vmaf_cuda_report) needs Debian's numpy and matplotlib (for
# /usr/bin/python3); its test (suite report) adds the bjontegaard package from PyPI in a
# virtualenv over them (python3-venv; scipy for that package) and opens the page in chromium.
pkgs=(build-essential pkg-config python3 meson ninja-build catch2 nlohmann-json3-dev
      libcli11-dev ffmpeg openssl libsrt-openssl-dev libssl-dev slurm-wlm munge
      python3-numpy python3-scipy python3-matplotlib python3-venv chromium)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
