// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file adm_math.h
/// Per-sample integer arithmetic of libvmaf v3.2.0 integer ADM
/// (libvmaf/src/feature/integer_adm.c, scalar C path), shared verbatim by the CPU
/// reference (reference/adm.cpp) and the CUDA kernel (kernels/adm.cu) so both compute
/// the same integers. Every function is pure and branch-for-branch equivalent to what
/// gcc produces for libvmaf on x86-64: where libvmaf overflows a signed type (undefined in
/// C, two's-complement wrap in practice) these helpers wrap explicitly.
///
/// Value conventions: every band sample is held in an int32_t. At scale 0 libvmaf stores
/// bands in int16_t, so scale-0 results pass through `to_i16` exactly where libvmaf
/// stores into an int16_t; at scales 1..3 libvmaf stores int32_t (`to_i32`).
///
/// The only floating point here is the "angle" test of the decoupling step, done in IEEE
/// double with operands rounded through float exactly as libvmaf does. The CUDA build
/// must use `--fmad=false` (no contraction) so device and host round alike.

#include <cstdint>

#if defined(__CUDACC__)
#define VMAF_ADM_HD __host__ __device__ __forceinline__
#else
#define VMAF_ADM_HD inline
#endif

namespace vmaf_cuda::ref::adm_math {

// ---------------------------------------------------------------- wrapping helpers

/// Low 16 bits of `v` as a signed value (what storing into an int16_t gives).
VMAF_ADM_HD std::int32_t to_i16(std::int64_t v) {
    return static_cast<std::int16_t>(static_cast<std::uint16_t>(static_cast<std::uint64_t>(v)));
}
/// Low 32 bits of `v` as a signed value (what storing into an int32_t gives).
VMAF_ADM_HD std::int32_t to_i32(std::int64_t v) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
}
/// C abs() on int32 as compiled: INT32_MIN maps to itself.
VMAF_ADM_HD std::int32_t abs_i32(std::int32_t v) {
    return v < 0 ? static_cast<std::int32_t>(0u - static_cast<std::uint32_t>(v)) : v;
}
VMAF_ADM_HD std::int32_t add_i32(std::int32_t a, std::int32_t b) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}
VMAF_ADM_HD std::int32_t sub_i32(std::int32_t a, std::int32_t b) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) - static_cast<std::uint32_t>(b));
}
VMAF_ADM_HD std::int64_t add_i64(std::int64_t a, std::int64_t b) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

// ---------------------------------------------------------------- borders

/// DWT source index for virtual index `i` of a dimension of `n` samples (n >= 3):
/// mirror without repeating the edge at the start (-1 -> 1), with repeating it at the
/// end (n -> n-1, n+1 -> n-2). Output sample k of the DWT reads virtual indices
/// 2k-1 .. 2k+2. (libvmaf's index builder reads index -1 when ceil(n/2) == 2, i.e. out
/// of bounds; this function uses the mirrored 1 there, which is what its k=0 entry
/// holds for every larger size.)
VMAF_ADM_HD int dwt_mirror(int i, int n) { return i < 0 ? -i : (i >= n ? 2 * n - i - 1 : i); }

/// Contrast-masking 3x3 neighbour index: -1 -> 1 (mirror) and n -> n-1 (repeat edge).
VMAF_ADM_HD int cm_mirror(int i, int n) { return i < 0 ? -i : (i >= n ? n - 1 : i); }

// ---------------------------------------------------------------- DWT (db2)

/// db2 analysis filters in Q15: low pass {15826, 27411, 7345, -4240} (sum 46342) and
/// high pass {-4240, -7345, 27411, -15826}, applied to the 4 taps s0..s3 in int64.
VMAF_ADM_HD std::int64_t dwt_lo(std::int64_t s0, std::int64_t s1, std::int64_t s2,
                                std::int64_t s3) {
    return 15826 * s0 + 27411 * s1 + 7345 * s2 - 4240 * s3;
}
VMAF_ADM_HD std::int64_t dwt_hi(std::int64_t s0, std::int64_t s1, std::int64_t s2,
                                std::int64_t s3) {
    return -4240 * s0 - 7345 * s1 + 27411 * s2 - 15826 * s3;
}

/// Scale 0 vertical pass on raw samples s0..s3 (rows 2k-1..2k+2) of a `bpc`-bit plane,
/// giving the int16 tmp value. The low pass subtracts 46342 * 2^(bpc-1) to centre the
/// range on zero; both round by 2^(bpc-1) and shift by bpc. libvmaf sums in int32, which
/// can wrap mid-way at 16 bits; the final sum always fits in int32 (|sum| < 1.8e9 for
/// samples < 2^16), so a wrapping uint32 sum gives the same value.
VMAF_ADM_HD std::int32_t dwt0_vert_lo(std::int32_t s0, std::int32_t s1, std::int32_t s2,
                                      std::int32_t s3, int bpc) {
    const std::uint32_t half = 1u << (bpc - 1);
    const std::uint32_t acc = 15826u * static_cast<std::uint32_t>(s0) +
                              27411u * static_cast<std::uint32_t>(s1) +
                              7345u * static_cast<std::uint32_t>(s2) -
                              4240u * static_cast<std::uint32_t>(s3) - 46342u * half + half;
    return to_i16(static_cast<std::int32_t>(acc) >> bpc);
}
VMAF_ADM_HD std::int32_t dwt0_vert_hi(std::int32_t s0, std::int32_t s1, std::int32_t s2,
                                      std::int32_t s3, int bpc) {
    const std::uint32_t half = 1u << (bpc - 1);
    const std::uint32_t acc = 27411u * static_cast<std::uint32_t>(s2) + half -
                              4240u * static_cast<std::uint32_t>(s0) -
                              7345u * static_cast<std::uint32_t>(s1) -
                              15826u * static_cast<std::uint32_t>(s3);
    return to_i16(static_cast<std::int32_t>(acc) >> bpc);
}
/// Scale 0 horizontal pass on four int16 tmp values (|sum| <= 54822 * 32768 + 32768,
/// fits in int32): a (lo), v (hi) from the vertical low pass, h (lo), d (hi) from the
/// vertical high pass.
VMAF_ADM_HD std::int32_t dwt0_horz_lo(std::int32_t s0, std::int32_t s1, std::int32_t s2,
                                      std::int32_t s3) {
    return to_i16((15826 * s0 + 27411 * s1 + 7345 * s2 - 4240 * s3 + 32768) >> 16);
}
VMAF_ADM_HD std::int32_t dwt0_horz_hi(std::int32_t s0, std::int32_t s1, std::int32_t s2,
                                      std::int32_t s3) {
    return to_i16((-4240 * s0 - 7345 * s1 + 27411 * s2 - 15826 * s3 + 32768) >> 16);
}

/// Scales 1..3 rounding of a 4-tap int64 sum, truncated to int32.
/// Vertical pass: scale 1 neither rounds nor shifts; scales 2, 3 use (+32768) >> 16.
/// Horizontal pass: scales 1 and 3 use (+16384) >> 15; scale 2 uses (+32768) >> 16.
VMAF_ADM_HD std::int32_t dwt123_vert(std::int64_t acc, int scale) {
    return scale == 1 ? to_i32(acc) : to_i32((acc + 32768) >> 16);
}
VMAF_ADM_HD std::int32_t dwt123_horz(std::int64_t acc, int scale) {
    return scale == 2 ? to_i32((acc + 32768) >> 16) : to_i32((acc + 16384) >> 15);
}

// ---------------------------------------------------------------- decoupling

/// libvmaf's reciprocal table entry div_lookup[32768 + m], m in [-32768, 32768], m != 0:
/// trunc(2^30 / |m|) with the sign of m.
VMAF_ADM_HD std::int32_t div_lookup(std::int32_t m) {
    const std::uint32_t am = m < 0 ? 0u - static_cast<std::uint32_t>(m) : static_cast<std::uint32_t>(m);
    const std::int32_t q = static_cast<std::int32_t>(1073741824u / am);
    return m < 0 ? -q : q;
}

/// True when the angle between (oh,ov) and (th,tv) is below one degree, evaluated as
/// libvmaf does: int64 dot/norms (wrapping), each rounded to float, divided by 4096 in
/// double, compared in double with `cos1_sq` (float cos(1 deg)^2) multiplied first by the
/// reference norm, then by the distorted norm.
VMAF_ADM_HD bool angle_flag(std::int32_t oh, std::int32_t ov, std::int32_t th,
                            std::int32_t tv, float cos1_sq) {
    const std::int64_t dot = add_i64(std::int64_t{oh} * th, std::int64_t{ov} * tv);
    const std::int64_t o2 = add_i64(std::int64_t{oh} * oh, std::int64_t{ov} * ov);
    const std::int64_t t2 = add_i64(std::int64_t{th} * th, std::int64_t{tv} * tv);
    const double d = static_cast<double>(static_cast<float>(dot)) / 4096.0;
    const double on = static_cast<double>(static_cast<float>(o2)) / 4096.0;
    const double tn = static_cast<double>(static_cast<float>(t2)) / 4096.0;
    if (!(d >= 0.0)) return false;
    const double lhs = d * d;
    const double rhs = (static_cast<double>(cos1_sq) * on) * tn;
    return lhs >= rhs;
}

/// Restored/additive split of one band sample (o: reference, t: distorted) given the
/// gain k in Q15 ([0, 32768]). `rst` is libvmaf's restored value before and after the
/// enhancement-gain clamp; the float sign test of libvmaf (rst_f) is exactly
/// sign(k) * sign(o) because k >= 0 and the float product cannot underflow.
/// `egl` is adm_enhn_gain_limit; the clamp is done in double and truncated to int.
VMAF_ADM_HD std::int32_t apply_gain_limit(std::int32_t rst, std::int64_t k, std::int32_t o,
                                          std::int32_t t, bool flag, double egl) {
    if (!flag || k <= 0 || o == 0) return rst;
    const double g = static_cast<double>(rst) * egl;
    const double tt = static_cast<double>(t);
    const double pick = (o > 0) ? (g < tt ? g : tt) : (g > tt ? g : tt);
    return static_cast<std::int32_t>(pick);
}

/// Scale 0 decoupling of one band: o, t are int16 band samples. Outputs the int16
/// restored value r and additive impairment a (= t - r).
VMAF_ADM_HD void decouple0(std::int32_t o, std::int32_t t, bool flag, double egl,
                           std::int32_t& r, std::int32_t& a) {
    std::int32_t k = 32768;
    if (o != 0) {
        std::int64_t q = (std::int64_t{div_lookup(o)} * t + 16384) >> 15;
        k = static_cast<std::int32_t>(q < 0 ? 0 : (q > 32768 ? 32768 : q));
    }
    std::int32_t rst = to_i16((k * o + 16384) >> 15);
    rst = to_i16(apply_gain_limit(rst, k, o, t, flag, egl));
    r = rst;
    a = to_i16(std::int64_t{t} - rst);
}

/// Scales 1..3 decoupling of one band (int32 samples). Divides through the reciprocal
/// table after reducing |o| >= 2^15 to its 15 leading bits (rounded), libvmaf's
/// get_best15_from32; the rounding constant 1 << (14 + shift) is an int in libvmaf and
/// becomes INT32_MIN for shift 17 (|o| = 2^31), reproduced here.
VMAF_ADM_HD void decouple123(std::int32_t o, std::int32_t t, bool flag, double egl,
                             std::int32_t& r, std::int32_t& a) {
    std::int64_t k = 32768;
    if (o != 0) {
        const std::uint32_t ao = static_cast<std::uint32_t>(abs_i32(o));
        const std::int64_t sign = o < 0 ? -1 : 1;
        int shift = 0;
        std::uint32_t m = ao;
        if (ao >= 32768u) {
#if defined(__CUDA_ARCH__)
            const int lz = __clz(static_cast<int>(ao));
#else
            const int lz = __builtin_clz(ao);
#endif
            shift = 17 - lz;
            m = static_cast<std::uint16_t>((ao + (1u << (shift - 1))) >> shift);
        }
        const std::int64_t round =
            static_cast<std::int32_t>(static_cast<std::uint32_t>(1u << (14 + shift)));
        const std::int64_t q =
            ((std::int64_t{div_lookup(static_cast<std::int32_t>(m))} * t) * sign + round) >>
            (15 + shift);
        k = q < 0 ? 0 : (q > 32768 ? 32768 : q);
    }
    std::int32_t rst = static_cast<std::int32_t>((k * o + 16384) >> 15);
    rst = apply_gain_limit(rst, k, o, t, flag, egl);
    r = rst;
    a = to_i32(std::int64_t{t} - rst);
}

// ---------------------------------------------------------------- contrast sensitivity

/// Scale 0 CSF weighting of a decoupled int16 sample: i_rfactor is Q21 (h, v) or Q23 (d);
/// (shift, add) = (15, 16384) for h and v, (17, 65535) for d (libvmaf's constants).
VMAF_ADM_HD std::int32_t csf0(std::int32_t src, std::int32_t i_rfactor, int shift,
                              std::int32_t add) {
    return to_i16((std::int64_t{i_rfactor} * src + add) >> shift);
}
/// Scale 0 masking-filter value of a CSF sample: about |c|/30 (int16).
VMAF_ADM_HD std::int32_t csf0_flt(std::int32_t c) {
    return to_i16((4369 * abs_i32(c) + 2048) >> 12);
}
/// Scale 0 centre term of the masking threshold: about |c|/15 (int16).
VMAF_ADM_HD std::int32_t cm0_center(std::int32_t c) {
    return to_i16((8738 * abs_i32(c) + 2048) >> 12);
}
/// Scales 1..3 CSF weighting: i_rfactor Q32, rounded shift by 28.
VMAF_ADM_HD std::int32_t csf123(std::int32_t src, std::uint32_t i_rfactor) {
    return to_i32((std::int64_t{i_rfactor} * src + (std::int64_t{1} << 27)) >> 28);
}
/// Scales 1..3 masking-filter value: (|c| * 2^32/30 - 2^31) >> 32. libvmaf's rounding
/// constant is (int32)(1u << 31), i.e. -2^31, so a zero input gives -1.
VMAF_ADM_HD std::int32_t csf123_flt(std::int32_t c) {
    return to_i32((std::int64_t{143165577} * abs_i32(c) + std::int64_t{INT32_MIN}) >> 32);
}
/// Scales 1..3 centre term of the masking threshold (same -2^31 rounding constant).
VMAF_ADM_HD std::int32_t cm123_center(std::int32_t c) {
    return to_i32((std::int64_t{286331153} * abs_i32(c) + std::int64_t{INT32_MIN}) >> 32);
}

// ---------------------------------------------------------------- masking / cubes

/// Scale 0 contrast-masked value before thresholding: band sample times Q21/Q23 factor.
VMAF_ADM_HD std::int32_t cm0_x(std::int32_t src, std::int32_t i_rfactor) {
    return to_i32(std::int64_t{src} * i_rfactor);
}
/// Scales 1..3: band sample times Q32 factor, rounded shift by 28.
VMAF_ADM_HD std::int32_t cm123_x(std::int32_t src, std::uint32_t i_rfactor) {
    return to_i32((std::int64_t{src} * i_rfactor + (std::int64_t{1} << 27)) >> 28);
}

/// One pixel's contribution to a contrast-masking row sum:
///   y = max(|x| - (thr << sub), 0)            (int32, wrapping)
///   y2 = int32((y*y + add_sq) >> shift_sq)    (int64 product, truncated)
///   return (y2*y + add_cub) >> shift_cub      (int64, arithmetic shift)
VMAF_ADM_HD std::int64_t cm_cube(std::int32_t x, std::int32_t thr, int sub, int shift_sq,
                                 std::int64_t add_sq, int shift_cub, std::int64_t add_cub) {
    const std::int32_t t = static_cast<std::int32_t>(static_cast<std::uint32_t>(thr) << sub);
    std::int32_t y = sub_i32(abs_i32(x), t);
    if (y < 0) y = 0;
    const std::int32_t y2 = to_i32((std::int64_t{y} * y + add_sq) >> shift_sq);
    return (std::int64_t{y2} * y + add_cub) >> shift_cub;
}

/// Scale 0 denominator term: |b|^3 exactly (b an int16 band sample).
VMAF_ADM_HD std::uint64_t den0_cube(std::int32_t b) {
    const std::uint64_t u = static_cast<std::uint16_t>(abs_i32(b));
    return u * u * u;
}
/// Scales 1..3 denominator term: ((|b|^2 + add_sq) >> shift_sq) * |b|, rounded shift.
VMAF_ADM_HD std::uint64_t den123_cube(std::int32_t b, int shift_sq, std::uint64_t add_sq,
                                      int shift_cub, std::uint64_t add_cub) {
    const std::uint64_t u = static_cast<std::uint32_t>(abs_i32(b));
    return ((((u * u) + add_sq) >> shift_sq) * u + add_cub) >> shift_cub;
}

/// Row-sum finalisers: libvmaf shifts each row's partial sum before adding rows.
VMAF_ADM_HD std::int64_t row_shift_signed(std::int64_t row_sum, std::int64_t add, int shift) {
    return add_i64(row_sum, add) >> shift;
}
VMAF_ADM_HD std::uint64_t row_shift_unsigned(std::uint64_t row_sum, std::uint64_t add,
                                             int shift) {
    return (row_sum + add) >> shift;
}

} // namespace vmaf_cuda::ref::adm_math
