#!/usr/bin/env python3
"""Prefill and decode speed of weir (weir-cli bench) next to llama.cpp
(llama-cpp-python) on the same model, thread count and lengths, in one run.

  .venv-ref/bin/python tests/bench/bench_vs_llamacpp.py --pp 256 --tg 64 --threads 2

Both sides: --pp random token ids prefilled as one sequence (batches of up to
512), then --tg greedy decode steps on top of that context; llama.cpp with its
default CPU settings (f16 KV cache, flash attention auto). Prints one JSON object
with both results and the weir/llama.cpp ratios.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_weir(args):
    cmd = [args.weir_cli, "bench", "-m", args.model, "--pp", str(args.pp), "--tg", str(args.tg),
           "--threads", str(args.threads)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_llamacpp(args):
    # Child process so its peak RSS is its own.
    code = r'''
import json, resource, sys, time
import numpy as np
import llama_cpp as L
model_path, pp, tg, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
L.llama_backend_init()
t0 = time.perf_counter()
model = L.llama_model_load_from_file(model_path.encode(), L.llama_model_default_params())
cp = L.llama_context_default_params()
cp.n_ctx = pp + tg + 16
cp.n_threads = threads
cp.n_threads_batch = threads
ctx = L.llama_init_from_model(model, cp)
load_ms = (time.perf_counter() - t0) * 1000
n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
rng = np.random.default_rng(0)
toks = [int(t) for t in rng.integers(3, n_vocab, size=pp)]
nb = min(512, cp.n_batch)
batch = L.llama_batch_init(max(nb, 1), 0, 1)
def decode(ids, start):
    batch.n_tokens = len(ids)
    for i, t in enumerate(ids):
        batch.token[i] = t; batch.pos[i] = start + i; batch.n_seq_id[i] = 1; batch.seq_id[i][0] = 0
        batch.logits[i] = 1 if i == len(ids) - 1 else 0
    assert L.llama_decode(ctx, batch) == 0
    return np.ctypeslib.as_array(L.llama_get_logits_ith(ctx, len(ids) - 1), shape=(n_vocab,))
t0 = time.perf_counter()
for s in range(0, pp, nb):
    logits = decode(toks[s:s + nb], s)
pp_s = time.perf_counter() - t0
t0 = time.perf_counter()
nxt = int(np.argmax(logits))
for i in range(tg):
    logits = decode([nxt], pp + i)
    nxt = int(np.argmax(logits))
tg_s = time.perf_counter() - t0
print(json.dumps({"load_ms": load_ms, "prefill_tokens_per_s": pp / pp_s,
                  "decode_tokens_per_s": tg / tg_s if tg else 0.0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                  "llama_cpp_python": L.__version__, "flash_attn_type": cp.flash_attn_type,
                  "type_k": cp.type_k, "n_batch": cp.n_batch, "n_ubatch": cp.n_ubatch}))
'''
    out = subprocess.run([sys.executable, "-c", code, args.model, str(args.pp), str(args.tg), str(args.threads)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf"))
    ap.add_argument("--weir-cli", default=os.path.join(ROOT, "build", "bin", "weir-cli"))
    ap.add_argument("--pp", type=int, default=256)
    ap.add_argument("--tg", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    weir = run_weir(args)
    llama = run_llamacpp(args)

    def ratio(key):
        return round(weir[key] / llama[key], 3) if llama.get(key) else None

    print(json.dumps({
        "model": os.path.basename(args.model), "pp": args.pp, "tg": args.tg, "threads": args.threads,
        "weir": weir, "llama_cpp": llama,
        "ratio_weir_over_llama_cpp": {k: ratio(k) for k in ("prefill_tokens_per_s", "decode_tokens_per_s", "peak_rss_mb", "load_ms")},
    }, indent=2))


if __name__ == "__main__":
    main()
