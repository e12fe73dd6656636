// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file ciede.h
/// CIEDE2000 (`ciede` feature, output `ciede2000`): colour difference of every pixel,
/// pooled as 45 - 20 * log10(mean dE00). Reads all three planes.
///
/// Arithmetic followed: libvmaf v3.2.0 `libvmaf/src/feature/ciede.c` (`scale_chroma_planes`,
/// `scale_chroma_planes_hbd`, `get_lab_color`, `rgb_to_xyz_map`, `xyz_to_lab_map`,
/// `ciede2000` and its helpers `get_h_prime`, `get_delta_h_prime`,
/// `get_upcase_h_bar_prime`, `get_upcase_t`, `get_r_sub_t`, `extract`). No SIMD path.
///
/// Stages (for the GPU port):
/// 1. ciede_map(): per luma pixel (x, y), the chroma sample libvmaf pairs with it (see
///    below), then ciede_de00() of the two (Y, Cb, Cr) triples: a float per pixel.
///    Pixel-independent, but it calls libm: pow (2.4, 1/3, 7), atan2, sin, cos, exp,
///    powf and sqrt, mixing float and double exactly as ciede.c does (C promotion
///    rules; pow(x, 2) written as libvmaf writes it, which compilers turn into x * x).
///    glibc's results are not those of CUDA's device libm: the device needs
///    implementations that return glibc's values bit for bit.
/// 2. ciede_sum(): libvmaf adds the floats into ONE double accumulator in row-major order
///    (y outer, x inner, starting at 0.0): `de00_sum += de00`. Order-dependent.
/// 3. ciede_finish(): 45 - 20 * log10(sum / (double)(w * h)) (w * h as unsigned).
///
/// Chroma upsampling (libvmaf's `scale_chroma_planes`, 4:2:0): luma (x, y) takes chroma
/// sample (x / 2, y / 2) of libvmaf's picture, whose chroma planes are (w >> 1) x (h >> 1)
/// (the top-left part of the caller's ceil-sized planes, yuv.h), laid out with a stride
/// of S = (w >> 1) rounded up to 32 samples, U then V contiguous, padding zero
/// (`vmaf_picture_alloc`). For odd w or h, x / 2 or y / 2 reach one past libvmaf's plane:
/// libvmaf then reads linear sample (y / 2) * S + x / 2 of that layout (the padding, the
/// next row, the V plane after U, or past the end of V). ciede_map() reproduces that
/// layout. Where libvmaf reads past the end of its picture (odd heights: the V samples of
/// the last luma row; odd widths with (w >> 1) a multiple of 32: the last column of the
/// last two rows) it reads heap memory holding whatever the allocator left there;
/// ciede_map() reads those samples as 0. With that memory zeroed, libvmaf gives the same
/// doubles for every odd size (tests/golden/libvmaf_diff.cpp); on the golden 321x241 case
/// (odd height) libvmaf's ciede2000 is 0.01..0.02 lower than ours.
/// 4:4:4 reads the planes directly. 4:2:2 is refused: libvmaf's code indexes 4:2:2 chroma
/// at (x, y / 2), reading outside the picture for most pixels (not reproducible).
/// 4:0:0 is refused (libvmaf: -EINVAL at init).

#include <cstddef>
#include <vector>

#include "yuv.h"

namespace vmaf_cuda::ref {

/// \throws std::invalid_argument unless bpc is 8, 10, 12 or 16 and chroma is 420 or 444
/// (the message says why), or for an empty picture.
void ciede_check_format(unsigned width, unsigned height, unsigned bpc, unsigned chroma);

/// dE00 (CIEDE2000 colour difference, >= 0, about 0..120) of one pixel pair, libvmaf's `get_lab_color` (BT.709 limited range, in double,
/// L*a*b* rounded to float) and `ciede2000` (kL = 0.65, kC = 1, kH = 4, mixed float /
/// double) of the sample values (integers in [0, 2^bpc), passed as float as libvmaf does).
float ciede_de00(unsigned bpc, float r_y, float r_u, float r_v, float d_y, float d_u,
                 float d_v);

/// Per-pixel dE00 of a frame pair: `de00` gets w * h floats, row-major (w, h = luma size).
/// \throws std::invalid_argument for a format ciede_check_format() refuses, or planes that
/// differ between ref and dis or are smaller than libvmaf's.
void ciede_map(const YuvView& ref, const YuvView& dis, std::vector<float>& de00);

/// libvmaf's sum: `double s = 0; for each value in order: s += value;`
double ciede_sum(const std::vector<float>& de00);
/// The same sum over `n` floats at `de00` (e.g. the host copy of the CUDA kernel's map).
double ciede_sum(const float* de00, std::size_t n);

/// `45. - 20. * log10(de00_sum / (double)(w * h))` (unsigned product): higher is closer;
/// +inf when every dE00 is 0 (identical pictures; libvmaf's log prints null).
double ciede_finish(double de00_sum, unsigned width, unsigned height);

/// ciede_finish(ciede_sum(ciede_map(ref, dis))): the frame's `ciede2000`.
double ciede_score(const YuvView& ref, const YuvView& dis);

} // namespace vmaf_cuda::ref
