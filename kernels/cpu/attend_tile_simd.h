#pragma once
// The kernels behind attendTile: attend_tile_kernel.h built for AVX2
// (attend_tile_avx2.cpp) and with AVX-512's registers (attend_tile_avx512.cpp).
// Only call them when attendTileIsTiled() is true, the second only when
// vnniActive() (the switch of every AVX-512 kernel) is too.
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/attend_tile.h"

namespace weir::kernels::attend_avx2 {
// Scratch floats of the kernel (attendTileScratchFloats covers it).
size_t scratchFloats(int64_t dk, int64_t dv);
// lanes16: score dot products in the AVX-512 build's order (dot4x16; dk % 64
// == 0), else in the AVX2 build's (dot4x8; dk % 32 == 0). dv % 32 == 0.
void attendTile(const AttendQuery* queries, int n, int64_t dk, int64_t dv, const PagedRows& k, const PagedRows& v,
                float scale, bool lanes16, float* scratch);
// The softmax's exps (expf_libm_simd.h): out[j] = std::exp(x[j]) for j < 8,
// and whether the vector path gives std::exp's bits here (else it is not used).
void exp8(const float* x, float* out);
bool expMatchesLibm();
} // namespace weir::kernels::attend_avx2

namespace weir::kernels::attend_avx512 {
size_t scratchFloats(int64_t dk, int64_t dv);
void attendTile(const AttendQuery* queries, int n, int64_t dk, int64_t dv, const PagedRows& k, const PagedRows& v,
                float scale, bool lanes16, float* scratch);
void exp8(const float* x, float* out);
bool expMatchesLibm();
} // namespace weir::kernels::attend_avx512
