#!/usr/bin/env python3
"""llama.cpp's f16 GELU table (ggml_table_gelu_f16, filled by ggml_cpu_init):
gelu-tanh of every f16 bit pattern, rounded to f16. Our gegluF16Table must
look up the same values; tests/kernels/cpu/ops_test.cpp compares every finite
entry with this file.

  .venv-ref/bin/python tests/reference/make_gelu_table_reference.py tests/data/reference/gelu_f16_table.u16
"""
import ctypes
import os
import sys

import numpy as np
import llama_cpp

lib = ctypes.CDLL(os.path.join(os.path.dirname(llama_cpp.__file__), "lib", "libggml-cpu.so"))
lib.ggml_cpu_init()
table = np.ctypeslib.as_array((ctypes.c_uint16 * 65536).in_dll(lib, "ggml_table_gelu_f16")).copy()
table.astype("<u2").tofile(sys.argv[1])
print(f"wrote {sys.argv[1]} ({table.size} entries) from llama-cpp-python {llama_cpp.__version__}")
