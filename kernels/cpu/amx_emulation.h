#pragma once
// Test-only: the AMX tile instructions quant_legacy_amx.cpp uses, done in
// plain C++ on a per-thread tile file, so the tile layout, packing and
// post-processing are checked on CPUs without AMX (tests compile the kernel
// a second time with WEIR_AMX_EMULATE; the library never does). Semantics
// as Intel's SDM gives them for palette 1: tdpbusd dst += sum over k of
// unsigned A[m][k] * signed B[k / 4][4 n + k % 4].
#include <cstdint>
#include <cstring>

namespace weir::kernels::amx_emulation {

struct Tiles {
    uint16_t colsb[8];
    uint8_t rows[8];
    alignas(64) uint8_t data[8][16][64];
};

inline Tiles& tiles() {
    thread_local Tiles t;
    return t;
}

inline void loadConfig(const void* cfg) {
    const auto* c = static_cast<const uint8_t*>(cfg);
    Tiles& t = tiles();
    for (int i = 0; i < 8; ++i) {
        std::memcpy(&t.colsb[i], c + 16 + 2 * i, 2);
        t.rows[i] = c[48 + i];
    }
    std::memset(t.data, 0, sizeof t.data);
}

inline void load(int tile, const void* base, long stride) {
    Tiles& t = tiles();
    for (int r = 0; r < t.rows[tile]; ++r)
        std::memcpy(t.data[tile][r], static_cast<const uint8_t*>(base) + r * stride, t.colsb[tile]);
}

inline void store(int tile, void* base, long stride) {
    Tiles& t = tiles();
    for (int r = 0; r < t.rows[tile]; ++r)
        std::memcpy(static_cast<uint8_t*>(base) + r * stride, t.data[tile][r], t.colsb[tile]);
}

inline void zero(int tile) { std::memset(tiles().data[tile], 0, sizeof tiles().data[tile]); }

inline void dpbusd(int dst, int a, int b) {
    Tiles& t = tiles();
    for (int m = 0; m < t.rows[dst]; ++m)
        for (int n = 0; n < t.colsb[dst] / 4; ++n) {
            int32_t acc;
            std::memcpy(&acc, &t.data[dst][m][4 * n], 4);
            for (int k = 0; k < t.colsb[a]; ++k)
                acc += int32_t(t.data[a][m][k]) * int32_t(int8_t(t.data[b][k / 4][4 * n + k % 4]));
            std::memcpy(&t.data[dst][m][4 * n], &acc, 4);
        }
}

} // namespace weir::kernels::amx_emulation

#undef _tile_loadconfig
#undef _tile_loadd
#undef _tile_stored
#undef _tile_dpbusd
#undef _tile_release
#undef _tile_zero
#define _tile_loadconfig(cfg) ::weir::kernels::amx_emulation::loadConfig(cfg)
#define _tile_loadd(tile, base, stride) ::weir::kernels::amx_emulation::load(tile, base, long(stride))
#define _tile_stored(tile, base, stride) ::weir::kernels::amx_emulation::store(tile, base, long(stride))
#define _tile_dpbusd(dst, a, b) ::weir::kernels::amx_emulation::dpbusd(dst, a, b)
#define _tile_release() ((void)0)
#define _tile_zero(tile) ::weir::kernels::amx_emulation::zero(tile)
