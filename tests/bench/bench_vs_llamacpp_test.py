#!/usr/bin/env python3
"""The logic of bench_vs_llamacpp.py without llama.cpp or a model: a fake
llama_cpp module (on PYTHONPATH, for the script's llama.cpp child processes)
that can die with SIGSEGV when its weight repacking is on and a batch holds
more than FAKE_LLAMA_CRASH_ABOVE tokens, and a fake weir-cli printing fixed
JSON. Checks that the defaults are kept when they run, that a crash of the
defaults (in the probe, or in a later measured run) switches repacking off
and says so, one block per --threads count, the 16-conversation comparison,
and the one-count layout at the top level. Exit 77 (skip) without numpy.
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "bench_vs_llamacpp.py")

FAKE_LLAMA = textwrap.dedent('''
    import ctypes, os, signal
    __version__ = "fake"
    N_VOCAB = 50

    class _ModelParams:
        def __init__(self):
            self.use_extra_bufts = True  # llama.cpp's default: repack

    class _ContextParams:
        def __init__(self):
            self.n_ctx, self.n_seq_max, self.n_threads, self.n_threads_batch = 0, 1, 4, 4
            self.n_batch, self.n_ubatch, self.flash_attn_type, self.type_k = 2048, 512, -1, 1

    class _Batch:
        def __init__(self, n):
            self.n_tokens = 0
            self.token, self.pos, self.n_seq_id, self.logits = [0] * n, [0] * n, [0] * n, [0] * n
            self.seq_id = [[0] for _ in range(n)]

    _state = {}
    _logits = (ctypes.c_float * N_VOCAB)()

    def llama_backend_init(): pass
    def llama_model_default_params(): return _ModelParams()
    def llama_model_load_from_file(path, params):
        _state["repack"] = params.use_extra_bufts
        return object()
    def llama_context_default_params(): return _ContextParams()
    def llama_init_from_model(model, params): return object()
    def llama_model_get_vocab(model): return object()
    def llama_vocab_n_tokens(vocab): return N_VOCAB
    def llama_batch_init(n, embd, seqs): return _Batch(n)
    def llama_decode(ctx, batch):
        above = os.environ.get("FAKE_LLAMA_CRASH_ABOVE")
        if _state["repack"] and above is not None and batch.n_tokens > int(above):
            os.kill(os.getpid(), signal.SIGSEGV)
        return 0
    def llama_get_logits_ith(ctx, i): return ctypes.cast(_logits, ctypes.POINTER(ctypes.c_float))
''')

FAKE_WEIR = textwrap.dedent('''
    import json, sys
    a = sys.argv[1:]
    t = int(a[a.index("--threads") + 1])
    if a[0] == "bench":
        print(json.dumps({"threads": t, "prefill_tokens_per_s": 100.0 * t, "decode_tokens_per_s": 10.0 * t,
                          "peak_rss_mb": 300.0, "load_ms": 50.0, "pool_round_trips_per_decode_step": 145.0}))
    else:
        print(json.dumps({"threads": t, "single_decode_tps": 10.0 * t, "aggregate_decode_tps": 30.0 * t,
                          "aggregate_over_single": 3.0, "steady_pool_round_trips_per_step": 145.0}, indent=2))
''')


def run(tmp, crash_above, extra_args):
    env = dict(os.environ, PYTHONPATH=tmp)
    env.pop("FAKE_LLAMA_CRASH_ABOVE", None)
    if crash_above is not None:
        env["FAKE_LLAMA_CRASH_ABOVE"] = str(crash_above)
    cmd = [sys.executable, SCRIPT, "--model", os.path.join(tmp, "model.gguf"), "--weir-cli", os.path.join(tmp, "weir-cli"),
           "--tg", "3", "--concurrency-prompt", "8"] + extra_args
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    try:
        import numpy  # noqa: F401  (the llama.cpp child needs it)
    except ImportError:
        print("SKIP: numpy is not installed for", sys.executable)
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "llama_cpp.py"), "w") as f:
            f.write(FAKE_LLAMA)
        weir = os.path.join(tmp, "weir-cli")
        with open(weir, "w") as f:
            f.write(f"#!{sys.executable}\n" + FAKE_WEIR)
        os.chmod(weir, 0o755)

        # The defaults run: they are kept, one block per thread count, 16 conversations.
        r = run(tmp, None, ["--pp", "16", "--threads", "2", "4", "--concurrency", "16"])
        check(r["llamacpp_repack"] == "default", f"repack {r['llamacpp_repack']!r}")
        check(r["llamacpp_repack_probe"]["outcome"] == "ran", "probe outcome")
        check([b["threads"] for b in r["by_threads"]] == [2, 4], "one block per thread count")
        for b in r["by_threads"]:
            s = b["single_sequence"][0]
            check(s["llama_cpp"]["use_extra_bufts"] is True and s["llama_cpp"]["repack"] == "default",
                  "llama.cpp ran with its defaults")
            check(s["llama_cpp"]["threads"] == b["threads"], "llama.cpp ran with the block's threads")
            check(s["weir"]["threads"] == b["threads"], "weir ran with the block's threads")
            check(b["concurrent"]["sequences"] == 16, "16 conversations")
            check(b["concurrent"]["llama_cpp"]["aggregate_decode_tokens_per_s"] > 0, "llama.cpp's batch ran")
            check(b["concurrent"]["ratio_weir_over_llama_cpp_aggregate"] is not None, "aggregate ratio")
        # The one-count layout at the top level mirrors the first block.
        check(r["threads"] == 2 and r["single_sequence"] == r["by_threads"][0]["single_sequence"], "top-level layout")
        check(r["concurrent"] == r["by_threads"][0]["concurrent"], "top-level concurrent")
        check(r["llama_cpp_extra_buffer_types"]["used"] is True, "old field kept")
        check(r["decode_scaling"][0]["weir_over_first_count"] == [1.0, 2.0], "scaling over the first count")

        # The defaults crash in the probe (any batch of more than one token): repacking off, said.
        r = run(tmp, 1, ["--pp", "16", "--threads", "2", "--concurrency", "4"])
        check(r["llamacpp_repack"] == "off (default crashed: SIGSEGV)", f"repack {r['llamacpp_repack']!r}")
        check(r["llamacpp_repack_probe"]["outcome"] == "SIGSEGV", "probe outcome")
        s = r["single_sequence"][0]
        check(s["llama_cpp"]["use_extra_bufts"] is False and s["llama_cpp"]["repack"] == "off", "ran with repacking off")
        check(r["llama_cpp_extra_buffer_types"]["used"] is False, "old field says off")

        # The defaults pass the probe (64-token batches) but crash on a 100-token prompt: that run and
        # the rest with repacking off.
        r = run(tmp, 80, ["--pp", "100", "--threads", "2", "--concurrency", "0"])
        check(r["llamacpp_repack_probe"]["outcome"] == "ran", "probe passed")
        check(r["llamacpp_repack"] == "off (default crashed: SIGSEGV)", f"repack {r['llamacpp_repack']!r}")
        check(r["single_sequence"][0]["llama_cpp"]["repack"] == "off", "the crashed run repeated with repacking off")
        check("concurrent" not in r, "--concurrency 0 skips it")

        # --dry-run runs nothing (a crashing fake would fail it) and lists the commands.
        env = dict(os.environ, PYTHONPATH=tmp, FAKE_LLAMA_CRASH_ABOVE="0")
        out = subprocess.run([sys.executable, SCRIPT, "--dry-run", "--weir-cli", weir, "--threads", "2", "16",
                              "--concurrency", "16"], env=env, capture_output=True, text=True, check=True).stdout
        plan = json.loads(out)
        check(plan["dry_run"] is True, "dry run")
        weir_runs = [c for c in plan["commands"] if c[0] == weir]
        check(len(weir_runs) == 6, f"weir runs: bench + 2 bench-concurrency per count, got {len(weir_runs)}")
        check(any(c[-2:] == ["16", "default"] for c in plan["commands"]), "llama.cpp's 16-sequence batch planned")
    print("bench_vs_llamacpp_test: all checks passed")


if __name__ == "__main__":
    main()
