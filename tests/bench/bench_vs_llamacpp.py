#!/usr/bin/env python3
"""Weir next to llama.cpp (llama-cpp-python) on the same model, threads and
lengths, in one run; prints one JSON object with both sides and the ratios.

  packaging/setup-reference.sh        # .venv-ref with llama-cpp-python (once)
  .venv-ref/bin/python tests/bench/bench_vs_llamacpp.py --pp 256 4096 --tg 64 --threads 2 4 8 16 --concurrency 16

For each --threads count (one result block each, in "by_threads"):
- for each --pp: random token ids prefilled as one sequence (batches of up to
  512), then --tg greedy decode steps on that context (weir-cli bench, which
  also measures the machine's read bandwidth and reports decode as a fraction
  of it, and counts the thread pool's round trips per decode step);
- --concurrency sequences at once: llama.cpp decodes them as one batch per
  step (what llama-batched-bench measures); Weir runs `weir-cli
  bench-concurrency` (scheduler, paged pools) without speculative drafts, as
  llama.cpp, and once more with them (its default). Both report single-stream
  and aggregate decode tokens/s.
"decode_scaling" then puts each side's decode speed at every thread count
over its speed at the first count.

--cpu-time R adds, per --pp, prefill speed in tokens per CPU second of each
side (the best of R runs of pp tokens minus the best of R runs of one token,
both without decode steps): unlike wall time it hardly moves when other jobs
share the machine. Use it with --threads 1, where no thread spins waiting.

llama.cpp runs with its own defaults (f16 KV cache, flash attention auto,
weight repacking into its "extra buffer types", e.g. AMX tiles). Only if that
default crashes is repacking switched off (use_extra_bufts = False): before
measuring, a short run with the defaults (a prompt of 64 tokens and 2
decode steps, 2 sequences) goes in a child process; if the child dies (a
signal, or an error exit), every llama.cpp run uses repacking off. A measured
run with the defaults that crashes later is also repeated with repacking off.
The JSON says which: "llamacpp_repack" is "default" or "off (default
crashed: SIGSEGV)" (or "off (set by --llama-repack)"). llama-cpp-python
0.3.36 built with GGML_NATIVE crashed on a 2-vCPU Intel VM with AMX on prompts
longer than one token; on a 16-core Xeon with AMX it ran.

JSON layout: "by_threads" holds one block per thread count ({"threads",
"single_sequence", "concurrent"}). The top-level "threads", "single_sequence"
and "concurrent" repeat the first block, as this script printed them when it
took one thread count, so readers of that layout keep working;
"llama_cpp_extra_buffer_types" ({"used", "why"}) is kept beside
"llamacpp_repack" for the same reason.

--dry-run prints the commands it would run, and runs none.
"""
import argparse
import json
import os
import platform
import signal
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
            "physical_cores": physical_cores(), "numa_nodes": numa_nodes(),
            "features": [f for f in FEATURES if f in flags]}


def numa_nodes():
    """NUMA nodes of the CPUs this process may run on (as weir-cli counts them); 1 where unknown."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return 1
    nodes = set()
    for cpu in cpus:
        try:
            names = os.listdir(f"/sys/devices/system/cpu/cpu{cpu}")
        except OSError:
            continue
        nodes.update(n for n in names if n.startswith("node") and n[4:].isdigit())
    return max(1, len(nodes))


def physical_cores():
    """Cores this process may run on, SMT siblings once (as weir-cli counts them)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()
    cores = set()
    for cpu in cpus:
        key = None
        for name in ("core_cpus_list", "thread_siblings_list"):
            try:
                with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/{name}") as f:
                    key = f.read().strip()
                    break
            except OSError:
                continue
        if not key:
            return len(cpus)
        cores.add(key)
    return max(1, len(cores))


class ChildFailed(RuntimeError):
    def __init__(self, cmd, returncode, stderr):
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"{os.path.basename(cmd[0])} {describe_exit(returncode)}: {stderr[-2000:]}")

    @property
    def crashed(self):
        return self.returncode < 0


def describe_exit(returncode):
    """'SIGSEGV' for a child killed by a signal, else 'exit N'."""
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit {returncode}"


class Runner:
    """Runs the children (or, with --dry-run, records what it would run)."""

    def __init__(self, dry_run):
        self.dry_run = dry_run
        self.planned = []

    def json(self, cmd):
        if self.dry_run:
            self.planned.append(cmd)
            return {}
        with tempfile.TemporaryFile() as err:  # a file, not a pipe: llama.cpp logs a lot
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
            if proc.returncode != 0:
                err.seek(0)
                raise ChildFailed(cmd, proc.returncode, err.read().decode(errors="replace"))
        text = proc.stdout.strip()
        # weir-cli bench prints one line; bench-concurrency one indented object.
        return json.loads(text[text.find("{"):])

    def cpu_seconds(self, cmd):
        """User + system CPU seconds of a child process run to completion."""
        if self.dry_run:
            self.planned.append(cmd)
            return 0.0
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            returncode = os.waitstatus_to_exitcode(status)
            if returncode != 0:
                err.seek(0)
                raise ChildFailed(cmd, returncode, err.read().decode(errors="replace"))
        return usage.ru_utime + usage.ru_stime


# The llama.cpp side runs in a child process so its peak RSS is its own and
# a crash of its repacked kernels ends the child, not this script.
# argv: model pp tg threads seqs repack (default: llama.cpp's own choice | off)
LLAMA_CODE = r'''
import json, resource, sys, time
import numpy as np
import llama_cpp as L
model_path, pp, tg, threads, seqs, repack = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
L.llama_backend_init()
t0 = time.perf_counter()
mp = L.llama_model_default_params()
if repack == "off" and hasattr(mp, "use_extra_bufts"):
    mp.use_extra_bufts = False
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
print(json.dumps({"load_ms": load_ms, "sequences": seqs, "threads": threads, "prefill_tokens_per_s": seqs * pp / pp_s,
                  "decode_tokens_per_s": seqs * tg / tg_s if tg else 0.0,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                  "llama_cpp_python": L.__version__, "repack": repack,
                  "use_extra_bufts": getattr(mp, "use_extra_bufts", None),
                  "flash_attn_type": cp.flash_attn_type, "type_k": cp.type_k, "n_batch": cp.n_batch,
                  "n_ubatch": cp.n_ubatch}))
'''


class Llama:
    """llama.cpp's runs, with repacking as decided by probe() (or the flag)."""

    def __init__(self, runner, args, mode):
        self.runner, self.args = runner, args
        self.repack = "off" if mode == "off" else "default"
        self.status = "off (set by --llama-repack)" if mode == "off" else "default"
        self.probe_result = None

    def cmd(self, pp, tg, threads, seqs, repack=None):
        return [sys.executable, "-c", LLAMA_CODE, self.args.model, str(pp), str(tg), str(threads), str(seqs),
                repack or self.repack]

    def probe(self, threads):
        """Runs the defaults once on a short job; a crash turns repacking off."""
        try:
            self.runner.json(self.cmd(64, 2, threads, 2, "default"))
            self.probe_result = {"threads": threads, "outcome": "ran"}
        except ChildFailed as e:
            self.fall_back(e)
            self.probe_result = {"threads": threads, "outcome": describe_exit(e.returncode),
                                 "stderr_tail": e.stderr[-600:]}

    def fall_back(self, e):
        self.repack = "off"
        self.status = f"off (default crashed: {describe_exit(e.returncode)})"

    def run(self, pp, tg, threads, seqs):
        try:
            return self.runner.json(self.cmd(pp, tg, threads, seqs))
        except ChildFailed as e:
            if self.repack != "default":
                raise
            # The defaults passed the probe but crashed here: the rest with repacking off.
            self.fall_back(e)
            return self.runner.json(self.cmd(pp, tg, threads, seqs))

    def cpu_seconds(self, pp, threads):
        return self.runner.cpu_seconds(self.cmd(pp, 0, threads, 1))


def weir_single(runner, args, pp, threads):
    return runner.json([args.weir_cli, "bench", "-m", args.model, "--pp", str(pp), "--tg", str(args.tg),
                        "--threads", str(threads)])


def weir_concurrent(runner, args, threads, speculative):
    return runner.json([args.weir_cli, "bench-concurrency", "-m", args.model, "--concurrency", str(args.concurrency),
                        "--prompt-tokens", str(args.concurrency_prompt), "--gen-tokens", str(args.tg), "--no-prefix",
                        "--load-requests", "0", "--threads", str(threads),
                        "--speculative", "on" if speculative else "off"])


def prefill_cpu(runner, args, llama, pp, threads):
    """Tokens per CPU second of prefill for each side (see --cpu-time)."""
    def weir(n):
        return [args.weir_cli, "bench", "-m", args.model, "--pp", str(n), "--tg", "0", "--threads", str(threads),
                "--no-bandwidth"]

    out = {}
    for side, seconds in (("weir", lambda n: runner.cpu_seconds(weir(n))),
                          ("llama_cpp", lambda n: llama.cpu_seconds(n, threads))):
        full = min(seconds(pp) for _ in range(args.cpu_time))
        base = min(seconds(1) for _ in range(args.cpu_time))
        out[side] = {"cpu_s": round(full - base, 4),
                     "tokens_per_cpu_s": round((pp - 1) / (full - base), 2) if full > base else None}
    out["ratio_weir_over_llama_cpp"] = ratio(out["weir"]["tokens_per_cpu_s"], out["llama_cpp"]["tokens_per_cpu_s"])
    return out


def ratio(a, b):
    return round(a / b, 3) if a and b else None


def measure(runner, args, llama, threads):
    """One thread count's block: single sequences per --pp, then --concurrency at once."""
    block = {"threads": threads, "oversubscribed": threads > physical_cores(), "single_sequence": []}
    for pp in args.pp:
        w, l = weir_single(runner, args, pp, threads), llama.run(pp, args.tg, threads, 1)
        block["single_sequence"].append({
            "pp": pp, "weir": w, "llama_cpp": l,
            "ratio_weir_over_llama_cpp": {k: ratio(w.get(k), l.get(k)) for k in
                                          ("prefill_tokens_per_s", "decode_tokens_per_s", "peak_rss_mb", "load_ms")}})
        if args.cpu_time > 0:
            block["single_sequence"][-1]["prefill_cpu"] = prefill_cpu(runner, args, llama, pp, threads)
    if args.concurrency > 0:
        # Batching compared with batching: llama.cpp does not speculate, so
        # Weir's single and aggregate figures here are without prompt-lookup
        # drafts; with them (its default) a lone conversation is faster still.
        w = weir_concurrent(runner, args, threads, False)
        ws = weir_concurrent(runner, args, threads, True)
        l1 = llama.run(args.concurrency_prompt, args.tg, threads, 1)
        ln = llama.run(args.concurrency_prompt, args.tg, threads, args.concurrency)
        block["concurrent"] = {
            "sequences": args.concurrency, "prompt_tokens": args.concurrency_prompt,
            "weir": {"single_decode_tokens_per_s": w.get("single_decode_tps"),
                     "aggregate_decode_tokens_per_s": w.get("aggregate_decode_tps"),
                     "aggregate_over_single": w.get("aggregate_over_single"), "speculative": False,
                     "steady_pool_round_trips_per_step": w.get("steady_pool_round_trips_per_step")},
            "weir_speculative_on": {"single_decode_tokens_per_s": ws.get("single_decode_tps"),
                                    "aggregate_decode_tokens_per_s": ws.get("aggregate_decode_tps")},
            "llama_cpp": {"single_decode_tokens_per_s": l1.get("decode_tokens_per_s"),
                          "aggregate_decode_tokens_per_s": ln.get("decode_tokens_per_s"),
                          "aggregate_over_single": ratio(ln.get("decode_tokens_per_s"), l1.get("decode_tokens_per_s"))},
            "ratio_weir_over_llama_cpp_aggregate": ratio(w.get("aggregate_decode_tps"), ln.get("decode_tokens_per_s"))}
    return block


def decode_scaling(blocks):
    """Per --pp: each side's decode tokens/s at every thread count, and over the first count."""
    out = []
    for i, pp in enumerate(b["pp"] for b in blocks[0]["single_sequence"]):
        row = {"pp": pp, "threads": [b["threads"] for b in blocks]}
        for side in ("weir", "llama_cpp"):
            rates = [b["single_sequence"][i][side].get("decode_tokens_per_s") for b in blocks]
            row[side] = rates
            row[f"{side}_over_first_count"] = [ratio(r, rates[0]) for r in rates]
        out.append(row)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf"))
    ap.add_argument("--weir-cli", default=os.path.join(ROOT, "build", "bin", "weir-cli"))
    ap.add_argument("--pp", type=int, nargs="+", default=[256])
    ap.add_argument("--tg", type=int, default=64)
    ap.add_argument("--threads", type=int, nargs="+", default=[2], help="thread counts, one result block each")
    ap.add_argument("--concurrency", type=int, default=4, help="sequences at once (0: skip that comparison)")
    ap.add_argument("--concurrency-prompt", type=int, default=64, help="prompt tokens of each concurrent sequence")
    ap.add_argument("--llama-repack", choices=["auto", "off"], default="auto",
                    help="auto: llama.cpp's default weight repacking unless it crashes (see above); off: never")
    ap.add_argument("--cpu-time", type=int, default=0, metavar="R",
                    help="also measure prefill per CPU second, best of R runs per side (0: skip)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands it would run, run none")
    args = ap.parse_args(argv)
    if any(t < 1 for t in args.threads):
        ap.error("--threads wants counts of 1 or more")

    runner = Runner(args.dry_run)
    llama = Llama(runner, args, args.llama_repack)
    if args.llama_repack == "auto":
        llama.probe(args.threads[0])
    blocks = [measure(runner, args, llama, t) for t in args.threads]
    if args.dry_run:
        print(json.dumps({"dry_run": True, "commands": [
            [c if len(c) < 200 else "<llama.cpp child code>" for c in cmd] for cmd in runner.planned]}, indent=2))
        return

    result = {"model": os.path.basename(args.model), "tg": args.tg, "cpu": cpu_info(), "machine": platform.machine(),
              "llamacpp_repack": llama.status,
              "llama_cpp_extra_buffer_types": {"used": llama.repack == "default", "why": llama.status},
              "llamacpp_repack_probe": llama.probe_result,
              # The first block at the top level, as the one-count layout had it.
              "threads": blocks[0]["threads"], "single_sequence": blocks[0]["single_sequence"],
              "by_threads": blocks}
    if "concurrent" in blocks[0]:
        result["concurrent"] = blocks[0]["concurrent"]
    if len(blocks) > 1:
        result["decode_scaling"] = decode_scaling(blocks)
        if args.concurrency > 0:
            result["concurrent_scaling"] = {
                "threads": [b["threads"] for b in blocks],
                "weir_aggregate": [b["concurrent"]["weir"]["aggregate_decode_tokens_per_s"] for b in blocks],
                "llama_cpp_aggregate": [b["concurrent"]["llama_cpp"]["aggregate_decode_tokens_per_s"] for b in blocks]}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
