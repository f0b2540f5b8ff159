#!/usr/bin/env python3
"""Dumps a GGUF file's metadata and tensor table with the python `gguf` package
(an implementation independent of ours) to a small JSON file that
tests/engine/gguf/gguf_model_test.cpp compares our reader against.

Usage: .venv/bin/python tests/reference/gguf_table_reference.py [MODEL.gguf] [OUT.json]

Arrays are not dumped whole (the tokenizer arrays hold 262144 items): we keep
their element type, length and a few sampled items (first, second, middle, last).
Strings are stored as text when they are valid UTF-8, else as {"hex": ...}.
"""
import json
import os
import sys

import gguf
from gguf import GGUFReader, GGUFValueType

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_MODEL = os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf")
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "gguf", "gemma-3-270m-q4_k_m.table.json")

# Our names for the GGUF value types (engine/gguf valueTypeName).
TYPE_NAMES = {
    GGUFValueType.UINT8: "u8", GGUFValueType.INT8: "i8", GGUFValueType.UINT16: "u16",
    GGUFValueType.INT16: "i16", GGUFValueType.UINT32: "u32", GGUFValueType.INT32: "i32",
    GGUFValueType.FLOAT32: "f32", GGUFValueType.BOOL: "bool", GGUFValueType.STRING: "string",
    GGUFValueType.ARRAY: "array", GGUFValueType.UINT64: "u64", GGUFValueType.INT64: "i64",
    GGUFValueType.FLOAT64: "f64",
}


def string_json(raw: bytes):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": raw.hex()}


def scalar_json(vtype, part):
    if vtype == GGUFValueType.STRING:
        return string_json(part.tobytes())
    value = part.tolist()[0]
    if vtype == GGUFValueType.BOOL:
        return bool(value)
    if vtype in (GGUFValueType.FLOAT32, GGUFValueType.FLOAT64):
        return float(value)  # an f32 widened to double is exact; JSON keeps the double exactly
    return int(value)


def field_json(field):
    main = field.types[0]
    entry = {"key": field.name, "type": TYPE_NAMES[main]}
    if main != GGUFValueType.ARRAY:
        entry["value"] = scalar_json(main, field.parts[field.data[0]])
        return entry
    if len(field.types) > 2:
        raise SystemExit(f"{field.name}: nested arrays are not dumped by this script")
    sub = field.types[-1]
    count = len(field.data)
    entry["element_type"] = TYPE_NAMES[sub]
    entry["count"] = count
    samples = {}
    for i in sorted({0, 1, count // 2, count - 1}):
        if 0 <= i < count:
            samples[str(i)] = scalar_json(sub, field.parts[field.data[i]])
    entry["samples"] = samples
    return entry


def main():
    model = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_MODEL
    out = sys.argv[2] if len(sys.argv) > 2 else DEFAULT_OUT
    reader = GGUFReader(model)

    header = {}
    metadata = []
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):  # the reader's pseudo-fields for the header
            header[name[5:]] = int(field.parts[field.data[0]].tolist()[0])
            continue
        metadata.append(field_json(field))

    tensors = []
    for t in reader.tensors:
        tensors.append({
            "name": t.name,
            "type": int(t.tensor_type),
            "type_name": t.tensor_type.name,
            "shape": [int(n) for n in t.shape],  # innermost first, as stored
            "offset": int(t.data_offset) - int(reader.data_offset),  # relative to the data section
            "bytes": int(t.n_bytes),
        })

    doc = {
        "generator": "tests/reference/gguf_table_reference.py (python gguf package)",
        "model": os.path.basename(model),
        "file_size": os.path.getsize(model),
        "version": header["version"],
        "tensor_count": header["tensor_count"],
        "kv_count": header["kv_count"],
        "alignment": int(reader.alignment),
        "data_offset": int(reader.data_offset),
        "metadata": metadata,
        "tensors": tensors,
    }
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {out}: {len(metadata)} keys, {len(tensors)} tensors")


if __name__ == "__main__":
    main()
