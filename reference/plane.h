// SPDX-License-Identifier: BSD-2-Clause-Patent
#pragma once
/// \file plane.h
/// A read-only view of one luma plane, the only input ADM, VIF and motion use.

#include <cstddef>
#include <cstdint>

namespace vmaf_cuda::ref {

/// One luma plane in host memory.
/// - `data`: first sample of row 0. `bpc == 8`: uint8_t samples; `bpc` 9..16:
///   uint16_t samples holding values in [0, 2^bpc) (low bits, little-endian host order).
/// - `pitch`: bytes from one row to the next (>= width * bytes per sample).
/// - `width`, `height`: in samples, >= 1 (libvmaf accepts tiny sizes such as 18x22).
struct LumaView {
    const void* data = nullptr;
    std::ptrdiff_t pitch = 0;
    unsigned width = 0;
    unsigned height = 0;
    unsigned bpc = 8;

    const std::uint8_t* row8(unsigned y) const {
        return static_cast<const std::uint8_t*>(data) + pitch * static_cast<std::ptrdiff_t>(y);
    }
    const std::uint16_t* row16(unsigned y) const {
        return reinterpret_cast<const std::uint16_t*>(row8(y));
    }
    /// Sample (x, y) widened to int; no bounds check.
    int at(unsigned x, unsigned y) const { return bpc == 8 ? row8(y)[x] : row16(y)[x]; }
};

} // namespace vmaf_cuda::ref
