#!/usr/bin/env python3
"""Weir next to llama.cpp (llama-cpp-python) on the same model, threads and
lengths, in one run; prints one JSON object with both sides and the ratios.

  packaging/setup-reference.sh        # .venv-ref with llama-cpp-python (once)
  .venv-ref/bin/python tests/bench/bench_vs_llamacpp.py --pp 256 4096 --tg 64 --threads 2

For each --pp: random token ids prefilled as one sequence (batches of up to
512), then --tg greedy decode steps on that context (weir-cli bench, which also
measures the machine's read bandwidth and reports decode as a fraction of it).
Then --concurrency sequences at once: llama.cpp decodes them as one batch per
step; Weir runs `weir-cli bench-concurrency` (scheduler, paged pools) without
speculative drafts, as llama.cpp, and once more with them (its default). Both
report single-stream and aggregate decode tokens/s.

--cpu-time R adds, per --pp, prefill speed in tokens per CPU second of each
side (the best of R runs of pp tokens minus the best of R runs of one token,
both without decode steps): unlike wall time it hardly moves when other jobs
share the machine. Use it with --threads 1, where no thread spins waiting.

llama.cpp runs with its default CPU settings (f16 KV cache, flash attention
auto) except one: on CPUs with AMX its default AMX weight repacking (the
"extra buffer types") crashes with a segmentation fault on prompts longer than
one token (llama-cpp-python 0.3.36, GGML_NATIVE build), so there it is loaded
with use_extra_bufts = False; --extra-bufts on|off overrides, and the JSON says
which was used and why.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FEATURES = ("avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "avx_vnni",
            "amx_tile", "amx_int8", "amx_bf16")


def cpu_info():
    model, vendor, flags = platform.processor(), "", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name":
                    model = value.strip()
                elif key == "vendor_id":
                    vendor = value.strip()
                elif key == "flags":
                    flags = set(value.split())
    except OSError:
        pass
    return {"model": model, "vendor": vendor, "logical_cpus": os.cpu_count(),
            "features": [f for f in FEATURES if f in flags]}


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    text = out.strip()
    # weir-cli bench prints one line; bench-concurrency one indented object.
    start = text.find("{")
    return json.loads(text[start:])


def child_cpu_seconds(cmd):
    """User + system CPU seconds of a child process run to completion."""
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: llama.cpp logs a lot
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{cmd[0]} exited with {proc.returncode}: {err.read().decode(errors='replace')[-2000:]}")
    return usage.ru_utime + usage.ru_stime


def prefill_cpu(args, pp, extra):
    """Tokens per CPU second of prefill for each side (see --cpu-time)."""
    def weir(n):
        return [args.weir_cli, "bench", "-m", args.model, "--pp", str(n), "--tg", "0", "--threads", str(args.threads),
                "--no-bandwidth"]

    def llama(n):
        return [sys.executable, "-c", LLAMA_CODE, args.model, str(n), "0", str(args.threads), "1", "on" if extra else "off"]

    out = {}
    for side, cmd in (("weir", weir), ("llama_cpp", llama)):
        full = min(child_cpu_seconds(cmd(pp)) for _ in range(args.cpu_time))
        base = min(child_cpu_seconds(cmd(1)) for _ in range(args.cpu_time))
        out[side] = {"cpu_s": round(full - base, 4),
                     "tokens_per_cpu_s": round((pp - 1) / (full - base), 2) if full > base else None}
    out["ratio_weir_over_llama_cpp"] = ratio(out["weir"]["tokens_per_cpu_s"], out["llama_cpp"]["tokens_per_cpu_s"])
    return out


def weir_single(args, pp):
    return run_json([args.weir_cli, "bench", "-m", args.model, "--pp", str(pp), "--tg", str(args.tg),
                     "--threads", str(args.threads)])


def weir_concurrent(args, speculative):
    return run_json([args.weir_cli, "bench-concurrency", "-m", args.model, "--concurrency", str(args.concurrency),
                     "--prompt-tokens", str(args.concurrency_prompt), "--gen-tokens", str(args.tg), "--no-prefix",
                     "--load-requests", "0", "--threads", str(args.threads),
                     "--speculative", "on" if speculative else "off"])


# The llama.cpp side runs in a child process so its peak RSS is its own.
LLAMA_CODE = r'''
import json, resource, sys, time
import numpy as np
import llama_cpp as L
model_path, pp, tg, threads, seqs, extra = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "on"
L.llama_backend_init()
t0 = time.perf_counter()
mp = L.llama_model_default_params()
if hasattr(mp, "use_extra_bufts"):
    mp.use_extra_bufts = extra
model = L.llama_model_load_from_file(model_path.encode(), mp)
cp = L.llama_context_default_params()
cp.n_ctx = seqs * (pp + tg + 16)
cp.n_seq_max = seqs
cp.n_threads = threads
cp.n_threads_batch = threads
ctx = L.llama_init_from_model(model, cp)
load_ms = (time.perf_counter() - t0) * 1000
n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
rng = np.random.default_rng(0)
nb = min(512, cp.n_batch)
batch = L.llama_batch_init(max(nb, seqs), 0, 1)
def decode(items):
    """items: (token, seq, pos, wants_logits)"""
    batch.n_tokens = len(items)
    for i, (t, s, p, w) in enumerate(items):
        batch.token[i] = t; batch.pos[i] = p; batch.n_seq_id[i] = 1; batch.seq_id[i][0] = s; batch.logits[i] = 1 if w else 0
    assert L.llama_decode(ctx, batch) == 0
def logits(i):
    return np.ctypeslib.as_array(L.llama_get_logits_ith(ctx, i), shape=(n_vocab,))
prompts = [[int(t) for t in rng.integers(3, n_vocab, size=pp)] for _ in range(seqs)]
t0 = time.perf_counter()
nxt = []
for s in range(seqs):
    for c in range(0, pp, nb):
        chunk = prompts[s][c:c + nb]
        decode([(t, s, c + i, c + i == pp - 1) for i, t in enumerate(chunk)])
    nxt.append(int(np.argmax(logits(-1))))
pp_s = time.perf_counter() - t0
t0 = time.perf_counter()
for step in range(tg):
    decode([(nxt[s], s, pp + step, True) for s in range(seqs)])
    nxt = [int(np.argmax(logits(s))) for s in range(seqs)]
tg_s = time.perf_counter() - t0
print(json.dumps({"load_ms": load_ms, "sequences": seqs, "prefill_tokens_per_s": seqs * pp / pp_s,
                  "decode_tokens_per_s": seqs * tg / tg_s if tg else 0.0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                  "llama_cpp_python": L.__version__, "use_extra_bufts": extra,
                  "flash_attn_type": cp.flash_attn_type, "type_k": cp.type_k, "n_batch": cp.n_batch,
                  "n_ubatch": cp.n_ubatch}))
'''


def llama(args, pp, seqs, extra):
    return run_json([sys.executable, "-c", LLAMA_CODE, args.model, str(pp), str(args.tg), str(args.threads),
                     str(seqs), "on" if extra else "off"])


def ratio(a, b):
    return round(a / b, 3) if a and b else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf"))
    ap.add_argument("--weir-cli", default=os.path.join(ROOT, "build", "bin", "weir-cli"))
    ap.add_argument("--pp", type=int, nargs="+", default=[256])
    ap.add_argument("--tg", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=4, help="sequences at once (0: skip that comparison)")
    ap.add_argument("--concurrency-prompt", type=int, default=64, help="prompt tokens of each concurrent sequence")
    ap.add_argument("--extra-bufts", choices=["auto", "on", "off"], default="auto")
    ap.add_argument("--cpu-time", type=int, default=0, metavar="R",
                    help="also measure prefill per CPU second, best of R runs per side (0: skip)")
    args = ap.parse_args()

    cpu = cpu_info()
    if args.extra_bufts == "auto":
        extra = "amx_tile" not in cpu["features"]
        why = ("default (no AMX)" if extra else
               "off: llama.cpp's AMX weight repacking crashes on prompts longer than one token on this CPU")
    else:
        extra, why = args.extra_bufts == "on", "set by --extra-bufts"

    result = {"model": os.path.basename(args.model), "threads": args.threads, "tg": args.tg, "cpu": cpu,
              "llama_cpp_extra_buffer_types": {"used": extra, "why": why}, "single_sequence": [],
              "machine": platform.machine()}
    for pp in args.pp:
        w, l = weir_single(args, pp), llama(args, pp, 1, extra)
        result["single_sequence"].append({
            "pp": pp, "weir": w, "llama_cpp": l,
            "ratio_weir_over_llama_cpp": {k: ratio(w.get(k), l.get(k)) for k in
                                          ("prefill_tokens_per_s", "decode_tokens_per_s", "peak_rss_mb", "load_ms")}})
        if args.cpu_time > 0:
            result["single_sequence"][-1]["prefill_cpu"] = prefill_cpu(args, pp, extra)
    if args.concurrency > 0:
        # Batching compared with batching: llama.cpp does not speculate, so
        # Weir's single and aggregate figures here are without prompt-lookup
        # drafts; with them (its default) a lone conversation is faster still.
        w = weir_concurrent(args, False)
        ws = weir_concurrent(args, True)
        l1 = llama(args, args.concurrency_prompt, 1, extra)
        ln = llama(args, args.concurrency_prompt, args.concurrency, extra)
        result["concurrent"] = {
            "sequences": args.concurrency, "prompt_tokens": args.concurrency_prompt,
            "weir": {"single_decode_tokens_per_s": w["single_decode_tps"],
                     "aggregate_decode_tokens_per_s": w["aggregate_decode_tps"],
                     "aggregate_over_single": w["aggregate_over_single"], "speculative": False},
            "weir_speculative_on": {"single_decode_tokens_per_s": ws["single_decode_tps"],
                                    "aggregate_decode_tokens_per_s": ws["aggregate_decode_tps"]},
            "llama_cpp": {"single_decode_tokens_per_s": l1["decode_tokens_per_s"],
                          "aggregate_decode_tokens_per_s": ln["decode_tokens_per_s"],
                          "aggregate_over_single": ratio(ln["decode_tokens_per_s"], l1["decode_tokens_per_s"])},
            "ratio_weir_over_llama_cpp_aggregate": ratio(w["aggregate_decode_tps"], ln["decode_tokens_per_s"])}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
