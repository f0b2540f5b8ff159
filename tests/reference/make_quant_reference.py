#!/usr/bin/env python3
"""Reference data for the kernel tests (tests/kernels/cpu/*_test.cpp).

1. Random blocks of every tensor type we support, dequantized by the python
   `gguf` package (gguf.quants.dequantize), an implementation independent of
   ours. Scale fields are overwritten with small finite f16 values so every
   dequantized value is finite; the other bytes are uniformly random.
2. Random f32 rows quantized to Q8_0, Q8_1 and Q8_K by a numpy transcription
   of the formulas llama.cpp's x86 CPU backend uses for activations (written
   out in kernels/cpu/quantize.h).

Output: tests/data/quant/reference.bin (all arrays back to back, little-endian)
and tests/data/quant/manifest.json (name, type id, sizes and byte offsets).

Run: .venv/bin/python tests/reference/make_quant_reference.py
"""
import json
import os

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "data", "quant")
rng = np.random.default_rng(20240611)

# name -> (type, block elements, block bytes, [(offset of an f16 scale field)])
TYPES = {
    "F32": (T.F32, 1, 4, []),
    "F16": (T.F16, 1, 2, []),
    "BF16": (T.BF16, 1, 2, []),
    "Q4_0": (T.Q4_0, 32, 18, [0]),
    "Q4_1": (T.Q4_1, 32, 20, [0, 2]),
    "Q5_0": (T.Q5_0, 32, 22, [0]),
    "Q5_1": (T.Q5_1, 32, 24, [0, 2]),
    "Q8_0": (T.Q8_0, 32, 34, [0]),
    "Q4_K": (T.Q4_K, 256, 144, [0, 2]),
    "Q5_K": (T.Q5_K, 256, 176, [0, 2]),
    "Q6_K": (T.Q6_K, 256, 210, [208]),
}
ELEMENTS = 4096  # per type: 128 legacy blocks or 16 super-blocks

blob = bytearray()
manifest = {"tensors": [], "activations": {}}


def append(arr: np.ndarray) -> int:
    off = len(blob)
    blob.extend(arr.tobytes())
    return off


def small_f16(n: int) -> np.ndarray:
    """Scales of either sign spanning a few decades, some exactly zero."""
    mag = 10.0 ** rng.uniform(-4, -1, n)
    sign = rng.choice([-1.0, 1.0], n)
    v = (mag * sign).astype(np.float16)
    v[rng.random(n) < 0.03] = 0
    return v


def random_tensor(name: str) -> np.ndarray:
    qtype, be, bb, scale_offsets = TYPES[name]
    if name == "F32":
        return (rng.standard_normal(ELEMENTS) * 3).astype(np.float32).view(np.uint8)
    if name == "F16":
        v = (rng.standard_normal(ELEMENTS) * 2).astype(np.float16)
        v[:16] = np.array([6e-8, -6e-8, 1e-5, -3e-6, 65504, -65504, 0, -0.0] * 2, dtype=np.float16)  # subnormals, extremes
        return v.view(np.uint8)
    if name == "BF16":
        bits = (rng.standard_normal(ELEMENTS) * 5).astype(np.float32).view(np.uint32) >> 16
        bits[:4] = [0x0001, 0x8001, 0x7f7f, 0xff7f]  # subnormal, largest finite
        return bits.astype(np.uint16).view(np.uint8)
    nblocks = ELEMENTS // be
    raw = rng.integers(0, 256, size=(nblocks, bb), dtype=np.uint8)
    for off in scale_offsets:
        raw[:, off:off + 2] = small_f16(nblocks).view(np.uint8).reshape(nblocks, 2)
    return raw.reshape(-1)


for name, (qtype, be, bb, _) in TYPES.items():
    data = random_tensor(name)
    values = quants.dequantize(data, qtype).astype(np.float32).reshape(-1)
    assert values.size == ELEMENTS and np.isfinite(values).all(), name
    manifest["tensors"].append({
        "name": name, "type": int(qtype), "elements": ELEMENTS,
        "data_offset": append(data), "data_bytes": int(data.size),
        "values_offset": append(values),
    })

# ---- activation quantizers --------------------------------------------------
K = 512  # two Q8_K blocks, sixteen Q8_0 blocks
rows = [
    rng.standard_normal(K) * 0.7,
    rng.standard_normal(K) * 40.0,
    rng.uniform(-1e-3, 1e-3, K),
    np.concatenate([np.zeros(256), rng.standard_normal(256)]),     # an all-zero block
    np.concatenate([rng.standard_normal(256) + 3, -np.abs(rng.standard_normal(256)) - 1]),  # sign of max differs
]
# Ties: with amax = 127 (Q8_0) or max = -127 (Q8_K) the multiplier is exactly
# 1, so halves must round to even.
tie = rng.integers(-120, 120, K) + rng.choice([0.5, -0.5, 0.25, 0.0], K)
tie[::32] = 127.0       # Q8_0/Q8_1 block amax = 127 -> id = 1
tie[::256] = -127.0     # Q8_K block max = -127 -> iscale = 1
rows.append(tie)
X = np.stack(rows).astype(np.float32)


def q8_0(x: np.ndarray):
    b = x.reshape(-1, 32)
    amax = np.abs(b).max(axis=1)
    d = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        idv = np.where(amax != 0, np.float32(127) / amax, np.float32(0)).astype(np.float32)
    q = np.clip(np.rint(b * idv[:, None]), -128, 127).astype(np.int8)   # rint: ties to even
    return d, q


def pack_q8_0(x):
    d, q = q8_0(x)
    return b"".join(d[i].astype(np.float16).tobytes() + q[i].tobytes() for i in range(len(d)))


def pack_q8_1(x):
    d, q = q8_0(x)
    out = b""
    for i in range(len(d)):
        s = (d[i] * np.float32(q[i].astype(np.int32).sum())).astype(np.float32)
        out += d[i].astype(np.float16).tobytes() + s.astype(np.float16).tobytes() + q[i].tobytes()
    return out


def pack_q8_k(x):
    out = b""
    for b in x.reshape(-1, 256):
        i = int(np.argmax(np.abs(b)))  # first of equal magnitudes
        mx = b[i]
        if mx == 0:
            out += np.float32(0).tobytes() + bytes(256) + bytes(32)
            continue
        iscale = np.float32(-127) / mx
        q = np.minimum(np.rint(iscale * b), 127).astype(np.int8)
        bsums = q.astype(np.int32).reshape(16, 16).sum(axis=1).astype(np.int16)
        out += (np.float32(1) / iscale).astype(np.float32).tobytes() + q.tobytes() + bsums.tobytes()
    return out


acts = {"rows": len(rows), "k": K, "input_offset": append(X)}
for name, fn in (("Q8_0", pack_q8_0), ("Q8_1", pack_q8_1), ("Q8_K", pack_q8_k)):
    packed = b"".join(fn(r) for r in X)
    acts[name + "_offset"] = append(np.frombuffer(packed, dtype=np.uint8))
    acts[name + "_row_bytes"] = len(packed) // len(rows)
manifest["activations"] = acts

os.makedirs(OUT_DIR, exist_ok=True)
with open(os.path.join(OUT_DIR, "reference.bin"), "wb") as f:
    f.write(blob)
with open(os.path.join(OUT_DIR, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1)
    f.write("\n")
print(f"wrote {len(blob)} bytes to {OUT_DIR}")
