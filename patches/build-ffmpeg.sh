#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause-Patent
#
# Builds a minimal static ffmpeg + ffprobe with the vmaf_cuda filter.
#
#   patches/build-ffmpeg.sh [options] VERSION        VERSION: 9.0 | 8.1 | 7.1
#
# Steps: installs the build tools with apt-get (when missing), fetches FFmpeg's and
# nv-codec-headers' upstream tarballs from Debian's source archive through a private
# deb-src list (`apt-get source --download-only`), unpacks FFmpeg, applies
# patches/ffmpeg-VERSION.patch, patches/ffmpeg-VERSION-integration.patch (fftools reports to
# the filter which frames each output took and when it is done with the graph) and
# patches/ffmpeg-VERSION-sched.patch (the scheduler
# change: the decoders of a multi-input graph decode side by side), copies filter/ into libavfilter/ (vf_vmaf_cuda.c,
# vmaf_cuda_filter.h, vmaf_cuda_ladder.c, vmaf_cuda_stream.c, vmaf_cuda_pairing.[ch], vmaf_cuda_picture.[ch],
# vmaf_cuda_live_ff.[ch], compat.h as vf_vmaf_cuda_compat.h),
# configures and builds.
# The binaries link libvmaf_cuda statically (found with pkg-config) and depend on glibc
# only; libcuda and libnvcuvid are opened at run time (nv-codec-headers' dynlink), so the
# binary starts on machines without a GPU.
#
# Reuse: a build whose inputs (patch, filter sources, this script, configure flags,
# vmaf_cuda.pc, vmaf_cuda.h, libvmaf_cuda.a) are unchanged is not touched; a change of
# the filter or the library recompiles one file and relinks. The tree of each version is
# kept in BUILD_DIR/VERSION/src.
#
# Options:
#   --pkg-config-path P   where vmaf_cuda.pc is (':'-separated; default: $PKG_CONFIG_PATH)
#   --meson-build-dir D   same as --pkg-config-path D/meson-uninstalled
#   --build-dir D         where everything goes (default: <repo>/build-ffmpeg)
#   --jobs N              parallel make jobs (default: number of CPUs)
#   --no-install-deps     never run apt-get install (fail if a tool is missing)
#   --force               rebuild even when the stamp says it is up to date
#   --print-bin-dir       only print the folder the binaries go to, and exit
#   --stamp FILE          on success, write the binary folder into FILE (for meson's
#                         custom_target, which needs an output file)
#
# Results: BUILD_DIR/VERSION/bin/ffmpeg and .../bin/ffprobe; BUILD_DIR/VERSION/build.log.
# Environment: FFMPEG_DEB_VERSION=7:9.0.2-4 pins the Debian source version;
# DEBIAN_MIRROR: the Debian archive to fetch from (default: the one in the system's apt
# sources).
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)

usage() { sed -n '4,35p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "build-ffmpeg: error: $*" >&2; exit 1; }
log() { echo "build-ffmpeg: $*" >&2; }

version="" build_dir="" jobs="" install_deps=1 force=0 print_bin_dir=0 stamp_out=""
pc_path="${PKG_CONFIG_PATH:-}"
while [ $# -gt 0 ]; do
    case "$1" in
    --pkg-config-path) pc_path="$2"; shift 2 ;;
    --pkg-config-path=*) pc_path="${1#*=}"; shift ;;
    --meson-build-dir) pc_path="$(cd "$2" && pwd)/meson-uninstalled"; shift 2 ;;
    --meson-build-dir=*) pc_path="$(cd "${1#*=}" && pwd)/meson-uninstalled"; shift ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --build-dir=*) build_dir="${1#*=}"; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    --jobs=*) jobs="${1#*=}"; shift ;;
    -j*) jobs="${1#-j}"; shift ;;
    --no-install-deps) install_deps=0; shift ;;
    --force) force=1; shift ;;
    --print-bin-dir) print_bin_dir=1; shift ;;
    --stamp) stamp_out="$2"; shift 2 ;;
    --stamp=*) stamp_out="${1#*=}"; shift ;;
    -h|--help) usage 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$version" ] || die "one VERSION only"; version="$1"; shift ;;
    esac
done
[ -n "$version" ] || usage 1
case "$version" in
    9.0|8.1) patch_version="$version" ;;
    7.1) patch_version="$version" ;;
    *) die "unsupported FFmpeg version '$version' (supported: 9.0, 8.1, 7.1)" ;;
esac
patch_file="$script_dir/ffmpeg-$patch_version.patch"
[ -f "$patch_file" ] || die "missing $patch_file"

build_dir="${build_dir:-$repo_root/build-ffmpeg}"
mkdir -p "$build_dir"
build_dir=$(cd "$build_dir" && pwd)
ver_dir="$build_dir/$version"
bin_dir="$ver_dir/bin"
if [ "$print_bin_dir" = 1 ]; then echo "$bin_dir"; exit 0; fi
jobs="${jobs:-$(nproc 2>/dev/null || echo 2)}"
# one build per version at a time (meson may start this script from several targets)
exec 9> "$build_dir/.lock-$version"
flock 9 || die "cannot lock $build_dir/.lock-$version"

# The Debian archive the system's apt uses (deb822 .sources files or one-line lists),
# leaving out the security archive; on another distribution (Ubuntu: its archive has no
# sid or trixie) Debian's own.
system_mirror() {
    if ! grep -q -E '^ID=("?)debian\1$' /etc/os-release 2>/dev/null; then
        echo "http://deb.debian.org/debian"
        return
    fi
    {
        grep -h -E '^[[:space:]]*URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
            sed -E 's/^[[:space:]]*URIs:[[:space:]]*//' | tr ' ' '\n'
        grep -h -E '^[[:space:]]*deb(-src)?[[:space:]]' /etc/apt/sources.list \
            /etc/apt/sources.list.d/*.list 2>/dev/null |
            sed -E 's/^[[:space:]]*deb(-src)?[[:space:]]+(\[[^]]*\][[:space:]]+)?//' | awk '{print $1}'
    } | grep -E '^(https?|file)://' | grep -v -i security | head -n 1
}

# ---------------------------------------------------------------- build tools
# libsrt-openssl-dev and libssl-dev: SRT, TLS (https, rtmps), linked statically
need_pkgs=(build-essential nasm pkg-config clang xz-utils patch debian-archive-keyring
           libsrt-openssl-dev libssl-dev)
missing=()
for p in "${need_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    [ "$install_deps" = 1 ] || die "missing packages: ${missing[*]} (run without --no-install-deps, as root)"
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

# ---------------------------------------------------------------- the library
# SRT and OpenSSL from their static archives (Debian's .pc files name the shared ones):
# the binaries keep depending on glibc only
static_pc="$build_dir/static-pc"
mkdir -p "$static_pc"
ssl_ver=$(PKG_CONFIG_PATH= pkg-config --modversion openssl 2>/dev/null || echo 3.0.0)
srt_ver=$(PKG_CONFIG_PATH= pkg-config --modversion srt 2>/dev/null || echo 1.5.0)
for m in openssl libssl libcrypto; do
    printf 'Name: %s\nDescription: OpenSSL, static\nVersion: %s\nLibs: -l:libssl.a -l:libcrypto.a -ldl -pthread\nCflags:\n' \
        "$m" "$ssl_ver" > "$static_pc/$m.pc"
done
printf 'Name: srt\nDescription: SRT (OpenSSL flavour), static\nVersion: %s\nRequires: openssl\nLibs: -l:libsrt.a -l:libstdc++.a -lm\nCflags: -I/usr/include/srt\n' \
    "$srt_ver" > "$static_pc/srt.pc"
export PKG_CONFIG_PATH="$static_pc${pc_path:+:$pc_path}"
pkg-config --exists vmaf_cuda ||
    die "pkg-config finds no vmaf_cuda.pc (PKG_CONFIG_PATH='$pc_path'); pass --meson-build-dir or --pkg-config-path"
pc_file=""
IFS=: read -r -a pc_dirs <<< "$pc_path"
for d in "${pc_dirs[@]}"; do
    for f in "$d/vmaf_cuda-uninstalled.pc" "$d/vmaf_cuda.pc"; do
        if [ -z "$pc_file" ] && [ -f "$f" ]; then pc_file="$f"; fi
    done
done
lib_inputs=()
[ -n "$pc_file" ] && lib_inputs+=("$pc_file")
for flag in $(pkg-config --static --libs-only-L vmaf_cuda) $(pkg-config --cflags-only-I vmaf_cuda); do
    d="${flag#-?}"
    [ -f "$d/libvmaf_cuda.a" ] && lib_inputs+=("$d/libvmaf_cuda.a")
    [ -f "$d/vmaf_cuda.h" ] && lib_inputs+=("$d/vmaf_cuda.h")
done
lib_hash=$( { pkg-config --static --libs --cflags vmaf_cuda
              for f in "${lib_inputs[@]}"; do sha256sum < "$f"; done; } | sha256sum | cut -c1-64)

# ---------------------------------------------------------------- configure flags
configure_flags=(
    --disable-everything --disable-autodetect --disable-doc --disable-debug
    --disable-shared --enable-static --pkg-config-flags=--static
    --extra-ldflags=-static-libgcc
    --disable-ffplay --enable-ffmpeg --enable-ffprobe
    --disable-avdevice
    --enable-ffnvcodec --enable-cuda --enable-cuda-llvm --enable-cuvid --enable-nvdec
    --enable-libvmafcuda
    --enable-protocol=file,pipe
    # network inputs of a live QA probe: UDP/RTP (multicast too), SRT (libsrt), TCP, RTMP,
    # HTTP(S) and HLS; TLS through OpenSSL (libsrt-openssl's too); both linked statically
    --enable-network --enable-libsrt --enable-openssl
    --enable-protocol=udp,rtp,srtp,tcp,libsrt,rtmp,rtmps,tls,http,https,httpproxy,hls,crypto,data
    --enable-demuxer=mov,matroska,yuv4mpegpipe,rawvideo,ivf
    # live QA inputs (MPEG-TS, elementary streams) and mezzanine references (ProRes,
    # MPEG-2 on NVDEC too)
    --enable-demuxer=mpegts,h264,hevc,mpegvideo
    --enable-demuxer=flv,live_flv,hls,rtp,rtsp,sdp
    --enable-parser=h264,hevc,av1,vp9,mpegvideo
    --enable-decoder=h264,hevc,av1,vp9,h264_cuvid,hevc_cuvid,av1_cuvid,vp9_cuvid,rawvideo
    --enable-decoder=prores,mpeg2video,mpeg2_cuvid
    --enable-hwaccel=h264_nvdec,hevc_nvdec,av1_nvdec,vp9_nvdec,mpeg2_nvdec
    --enable-filter=scale,format,hwupload_cuda,hwdownload,scale_cuda,null,split,trim,setpts,settb,metadata,vflip,vmaf_cuda
    # showinfo: the tests read the SEI side data of sei=1 from its output
    --enable-filter=showinfo
    --enable-muxer=null,rawvideo,yuv4mpegpipe
    --enable-encoder=wrapped_avframe,rawvideo
    # NVENC and mp4/mkv output, to make test and benchmark clips on a GPU machine
    --enable-nvenc --enable-encoder=h264_nvenc,hevc_nvenc --enable-muxer=mp4,matroska
    # audio, only so that inputs with sound work without -an (ffmpeg maps one audio
    # stream by default, and -f null encodes it as pcm_s16le)
    --enable-decoder=aac,ac3,eac3,mp3,opus,vorbis,flac
    --enable-parser=aac,ac3,mpegaudio,opus,vorbis,flac
    --enable-encoder=pcm_s16le
    --enable-filter=aresample
)

# the filter source goes in through patches/apply.sh (which lists the files)
filter_files=("$repo_root"/filter/* "$script_dir/apply.sh")
for f in "${filter_files[@]}"; do [ -f "$f" ] || die "missing $f"; done

hash_of() { cat "$@" | sha256sum | cut -c1-64; }
sched_file="$script_dir/ffmpeg-$patch_version-sched.patch"
[ -f "$sched_file" ] || die "missing $sched_file"
integration_file="$script_dir/ffmpeg-$patch_version-integration.patch"
tree_hash=$(hash_of "$patch_file" "$integration_file" "$sched_file")
# configure records the library's flags: a change of them reconfigures
conf_hash=$( { echo "$tree_hash"; printf '%s\n' "${configure_flags[@]}"; cat "$static_pc"/*.pc;
               pkg-config --static --libs --cflags vmaf_cuda; } | sha256sum | cut -c1-64)
full_hash=$( { echo "$conf_hash"; echo "$lib_hash"; hash_of "${filter_files[@]}" "${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-64)

if [ "$force" = 0 ] && [ -x "$bin_dir/ffmpeg" ] && [ -x "$bin_dir/ffprobe" ] &&
   [ "$(cat "$ver_dir/stamp.done" 2>/dev/null)" = "$full_hash" ]; then
    log "FFmpeg $version is up to date: $bin_dir/ffmpeg"
    [ -z "$stamp_out" ] || echo "$bin_dir" > "$stamp_out"
    exit 0
fi

# ---------------------------------------------------------------- sources
apt_dir="$build_dir/apt"
dl_dir="$build_dir/downloads"
apt_opts=()
apt_ready=0
setup_apt() {
    [ "$apt_ready" = 1 ] && return 0
    local mirror="${DEBIAN_MIRROR:-$(system_mirror)}"
    [ -n "$mirror" ] || die "no Debian archive in the apt sources; set DEBIAN_MIRROR"
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/parts" "$dl_dir"
    local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
    {
        echo "deb-src [signed-by=$keyring] $mirror sid main"
        echo "deb-src [signed-by=$keyring] $mirror trixie main"
    } > "$apt_dir/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/parts"
              -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
              -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
    log "updating the private deb-src lists (sid, trixie)"
    apt-get "${apt_opts[@]}" update -q >&2 || die "apt-get update (deb-src) failed"
    apt_ready=1
}

# newest Debian version of source package $1 whose upstream version starts with $2
pick_version() {
    apt-cache "${apt_opts[@]}" showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' | sort -u |
    while read -r v; do
        up="${v#*:}"; up="${up%-*}"
        case "$up" in "$2"*) echo "$v" ;; esac
    done | sort -V | tail -n 1
}

# downloads the .orig tarball of $1=$2 into $dl_dir; prints its path
fetch_orig() {
    local pkg="$1" ver="$2" up
    up="${ver#*:}"; up="${up%-*}"
    local tarball
    tarball=$(ls "$dl_dir/${pkg}_${up}.orig.tar."* 2>/dev/null | grep -v '\.asc$' | head -n 1 || true)
    if [ -z "$tarball" ]; then
        setup_apt
        log "fetching $pkg $ver"
        # the .dsc or .debian.tar may answer 404 while the .orig tarball is there:
        # apt-get then fails, so success is judged by the file
        (cd "$dl_dir" && apt-get "${apt_opts[@]}" source --download-only -q "$pkg=$ver" >&2) ||
            log "apt-get source reported errors for $pkg=$ver (checking the .orig tarball)"
        tarball=$(ls "$dl_dir/${pkg}_${up}.orig.tar."* 2>/dev/null | grep -v '\.asc$' | head -n 1 || true)
        [ -n "$tarball" ] || die "could not fetch the source of $pkg $ver"
    fi
    echo "$tarball"
}

nvch_prefix="$build_dir/nv-codec-headers"
if [ ! -f "$nvch_prefix/lib/pkgconfig/ffnvcodec.pc" ]; then
    setup_apt
    nv_ver="${NV_CODEC_HEADERS_DEB_VERSION:-$(pick_version nv-codec-headers 12.)}"
    [ -n "$nv_ver" ] || die "no nv-codec-headers 12.x source in Debian sid/trixie"
    nv_tar=$(fetch_orig nv-codec-headers "$nv_ver")
    rm -rf "$build_dir/nv-codec-headers-src"
    mkdir -p "$build_dir/nv-codec-headers-src"
    tar -xf "$nv_tar" -C "$build_dir/nv-codec-headers-src" --strip-components=1
    make -C "$build_dir/nv-codec-headers-src" PREFIX="$nvch_prefix" install >&2
fi
export PKG_CONFIG_PATH="$PKG_CONFIG_PATH:$nvch_prefix/lib/pkgconfig"

src_dir="$ver_dir/src"
if [ ! -f "$src_dir/configure" ] || [ "$(cat "$ver_dir/stamp.tree" 2>/dev/null)" != "$tree_hash" ]; then
    if [ -n "${FFMPEG_DEB_VERSION:-}" ]; then
        ff_ver="$FFMPEG_DEB_VERSION"
    else
        setup_apt
        ff_ver=$(pick_version ffmpeg "$version.")
    fi
    [ -n "$ff_ver" ] || die "no ffmpeg $version.x source in Debian sid/trixie"
    ff_tar=$(fetch_orig ffmpeg "$ff_ver")
    log "unpacking $(basename "$ff_tar") and applying $(basename "$patch_file"), $(basename "$integration_file") and $(basename "$sched_file")"
    rm -rf "$ver_dir"
    mkdir -p "$src_dir"
    tar -xf "$ff_tar" -C "$src_dir" --strip-components=1
    bash "$script_dir/apply.sh" "$src_dir" || die "the wiring or scheduler patch does not apply"
    echo "$ff_ver" > "$ver_dir/debian-version"
    echo "$tree_hash" > "$ver_dir/stamp.tree"
fi

# the filter source, copying only what changed (make rebuilds only what depends on it)
bash "$script_dir/apply.sh" --files-only "$src_dir"

# ---------------------------------------------------------------- build
build_log="$ver_dir/build.log"
start=$(date +%s)
if [ "$(cat "$ver_dir/stamp.configure" 2>/dev/null)" != "$conf_hash" ] || [ ! -f "$src_dir/ffbuild/config.mak" ]; then
    log "configuring FFmpeg $(cat "$ver_dir/debian-version") (log: $build_log)"
    rm -f "$ver_dir/stamp.configure"
    (cd "$src_dir" && ./configure "${configure_flags[@]}") > "$build_log" 2>&1 ||
        { tail -n 30 "$build_log" >&2; tail -n 40 "$src_dir/ffbuild/config.log" >&2 || true;
          die "configure failed (see $build_log and $src_dir/ffbuild/config.log)"; }
    echo "$conf_hash" > "$ver_dir/stamp.configure"
    # the library is linked, not compiled against: a new libvmaf_cuda.a must relink
    rm -f "$src_dir/ffmpeg_g" "$src_dir/ffprobe_g"
elif [ "$(cat "$ver_dir/stamp.lib" 2>/dev/null)" != "$lib_hash" ]; then
    rm -f "$src_dir/ffmpeg_g" "$src_dir/ffprobe_g"
fi
echo "$lib_hash" > "$ver_dir/stamp.lib"
grep -q '^CONFIG_VMAF_CUDA_FILTER=yes' "$src_dir/ffbuild/config.mak" ||
    die "configure did not enable the vmaf_cuda filter (see $src_dir/ffbuild/config.log)"
log "building (make -j$jobs, log: $build_log)"
make -C "$src_dir" -j"$jobs" ffmpeg ffprobe >> "$build_log" 2>&1 ||
    { grep -E 'error|Error' "$build_log" | tail -n 30 >&2; die "make failed (see $build_log)"; }
mkdir -p "$bin_dir"
cp "$src_dir/ffmpeg" "$src_dir/ffprobe" "$bin_dir/"

# ---------------------------------------------------------------- checks
"$bin_dir/ffmpeg" -hide_banner -filters 2>/dev/null | grep -q ' vmaf_cuda ' ||
    die "the built ffmpeg does not list the vmaf_cuda filter"
if command -v ldd > /dev/null; then
    bad=$(ldd "$bin_dir/ffmpeg" 2>&1 | grep '=>' | awk '{print $1}' |
          grep -v -E '^(libc|libm|libdl|libpthread|librt|libresolv|libmvec)\.so' || true)
    [ -z "$bad" ] || die "ffmpeg links shared libraries other than glibc: $bad"
fi
echo "$full_hash" > "$ver_dir/stamp.done"
[ -z "$stamp_out" ] || echo "$bin_dir" > "$stamp_out"
log "done in $(( $(date +%s) - start )) s: $bin_dir/ffmpeg, $bin_dir/ffprobe"
