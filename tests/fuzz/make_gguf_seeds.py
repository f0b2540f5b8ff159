#!/usr/bin/env python3
"""Writes the seed corpus for gguf_reader_fuzz: a few tiny GGUF files made with
the python `gguf` package's writer (independent of ours), and some broken
variants of them. The files are committed (tests/fuzz/corpus/gguf_reader/);
rerun this only to change them:

    .venv/bin/python tests/fuzz/make_gguf_seeds.py

valid_small is also read by tests/engine/gguf/gguf_reader_test.cpp, which
checks the values written below.
"""
import os
import struct
import tempfile

import numpy as np
from gguf import GGUFWriter, GGMLQuantizationType, GGUFValueType

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "gguf_reader")


def build(path, arch="tiny", alignment=None, nested=True, tensors=True):
    w = GGUFWriter(path, arch)
    if alignment:
        w.add_custom_alignment(alignment)
    w.add_uint32("tiny.block_count", 2)
    w.add_int32("tiny.offset", -7)
    w.add_float32("tiny.eps", 0.5)
    w.add_float64("tiny.f64", -2.25)
    w.add_bool("tiny.flag", True)
    w.add_uint8("tiny.u8", 200)
    w.add_int8("tiny.i8", -100)
    w.add_uint16("tiny.u16", 60000)
    w.add_int16("tiny.i16", -30000)
    w.add_uint64("tiny.u64", 1 << 40)
    w.add_int64("tiny.i64", -(1 << 40))
    w.add_array("tiny.tokens", ["<pad>", "a", "\u2581b"])
    w.add_array("tiny.scores", [0.0, -1.5, 2.0])
    if nested:
        w.add_array("tiny.nested", [[1, 2], [3]])
    if tensors:
        w.add_tensor("t.f32", np.arange(8, dtype=np.float32))
        # Quantized tensors are given as bytes, one row of blocks per numpy row.
        q8 = np.zeros((2, 34), dtype=np.uint8)
        q8[:, 1] = 0x3c  # f16 scale 1.0
        w.add_tensor("t.q8_0", q8, raw_dtype=GGMLQuantizationType.Q8_0)
        q4k = np.full((1, 144), 0x11, dtype=np.uint8)
        w.add_tensor("t.q4_k", q4k, raw_dtype=GGMLQuantizationType.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with open(path, "rb") as f:
        return f.read()


def main():
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        small = build(os.path.join(tmp, "a.gguf"))
        aligned = build(os.path.join(tmp, "b.gguf"), alignment=64)
        meta_only = build(os.path.join(tmp, "c.gguf"), nested=False, tensors=False)
    seeds = {
        "valid_small": small,
        "valid_align64": aligned,
        "valid_metadata_only": meta_only,
        # version 2 has the same layout as 3 for our purposes
        "valid_v2": small[:4] + struct.pack("<I", 2) + small[8:],
        "bad_version1": small[:4] + struct.pack("<I", 1) + small[8:],
        "bad_magic": b"GGML" + small[4:],
        "truncated_header": small[:20],
        "truncated_metadata": small[: len(small) // 3],
        "truncated_data": small[:-40],
        "huge_kv_count": small[:16] + struct.pack("<Q", 1 << 62) + small[24:],
        "huge_tensor_count": small[:8] + struct.pack("<Q", 1 << 62) + small[16:],
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(seeds)} seeds to {OUT}, {sum(len(d) for d in seeds.values())} bytes")


if __name__ == "__main__":
    main()
