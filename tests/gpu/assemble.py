#!/usr/bin/env python3
"""Gathers tests/gpu/run.sh's raw step outputs into its JSON files and summary.

usage: assemble.py --raw DIR --out DIR --mode MODE [--print]

Reads DIR/steps.tsv (name, status, seconds, note, raw file per step), the
facts and every step's output; writes OUT/summary.json, compare.json,
soak.json, gpu_bench.json and cpu_bench.json (Weir's numbers, llama.cpp's on
the same files and their ratios). With --print, prints the summary table:
run.sh calls it after each section (so a cut-short run still leaves its
JSON) and with --print at the end. Standard library only (the GPU machine
has a bare python3).
"""
import argparse
import glob
import json
import os
import re


def load_json(path):
    """The JSON document in a step's output, or None when there is none."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        # Some tools print log lines before the document.
        start = min([i for i in (text.find("{"), text.find("[")) if i >= 0], default=-1)
        if start >= 0:
            try:
                return json.loads(text[start:])
            except ValueError:
                pass
    return {"unparsed_output": text[:2000]}


def load_jsonl(*paths):
    """llama-batched-bench's result lines (from stdout or stderr)."""
    rows = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    line = line.strip()
                    if line.startswith('{"n_kv_max"'):
                        try:
                            rows.append(json.loads(line))
                        except ValueError:
                            pass
        except OSError:
            pass
    return rows


def read_steps(raw):
    steps = []
    try:
        with open(os.path.join(raw, "steps.tsv"), encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                parts += [""] * (5 - len(parts))
                name, status, seconds, note, _ = parts[:5]
                try:
                    secs = float(seconds)
                except ValueError:
                    secs = None
                steps.append({"name": name, "status": status, "seconds": secs, "note": note})
    except OSError:
        pass
    return steps


def read_facts(raw):
    facts = {}
    try:
        with open(os.path.join(raw, "facts.txt"), encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                facts[key.strip()] = value.strip()
    except OSError:
        pass
    return facts


def ctest_results(raw):
    """Per test of `ctest -L gpu`: passed / failed / skipped and seconds."""
    out = []
    try:
        with open(os.path.join(raw, "ctest-gpu.txt"), encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return out
    for m in re.finditer(r"Test\s+#\d+:\s+(\S+)\s+\.*\s*(\*{0,3}[A-Za-z ]+?)\s+([\d.]+) sec", text):
        status = m.group(2).strip("* ").strip()
        out.append({"name": m.group(1), "status": status, "seconds": float(m.group(3))})
    return out


def ratio(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
        return round(a / b, 3)
    return None


def get(d, *keys):
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def llama_bench_value(entries, n_prompt, n_gen, threads=None):
    """avg_ts of the llama-bench entry for (n_prompt, n_gen[, threads])."""
    if not isinstance(entries, list):
        return None
    for e in entries:
        if e.get("n_prompt") == n_prompt and e.get("n_gen") == n_gen and (threads is None or e.get("n_threads") == threads):
            return e.get("avg_ts")
    return None


def batched_tg(rows, pl):
    for r in rows:
        if r.get("pl") == pl:
            return r.get("speed_tg")
    return None


def gpu_section(raw):
    weir, llama, table = {}, {}, {}
    for label in ("gemma3", "llama3-8b"):
        w = {}
        for key, name in (("pp512", f"gpu-bench-{label}-pp512.json"), ("pp8192", f"gpu-bench-{label}-pp8192.json"),
                          ("conc8", f"gpu-conc-{label}-8.json"), ("conc64", f"gpu-conc-{label}-64.json")):
            doc = load_json(os.path.join(raw, name))
            if doc is not None:
                w[key] = doc
        lb = load_json(os.path.join(raw, f"llama-gpu-bench-{label}.json"))
        lbb = load_jsonl(os.path.join(raw, f"llama-gpu-batched-{label}.jsonl"),
                         os.path.join(raw, f"llama-gpu-batched-{label}.jsonl.err"))
        if lb is not None or lbb:
            llama[label] = {"llama_bench": lb, "batched_bench": lbb}
        if not w and label not in llama:
            continue
        weir[label] = w
        tg = get(w, "pp512", "tg") or 128
        rows = {
            "pp512_tok_s": (get(w, "pp512", "prefill_tokens_per_s"), llama_bench_value(lb, 512, 0)),
            "pp8192_tok_s": (get(w, "pp8192", "prefill_tokens_per_s"), llama_bench_value(lb, 8192, 0)),
            f"decode_tg{tg}_tok_s": (get(w, "pp512", "decode_tokens_per_s"), llama_bench_value(lb, 0, 128)),
            "decode_1_conversation_tok_s": (get(w, "conc8", "single_decode_tps"), batched_tg(lbb, 1)),
            "decode_8_conversations_tok_s": (get(w, "conc8", "aggregate_decode_tps"), batched_tg(lbb, 8)),
            "decode_64_conversations_tok_s": (get(w, "conc64", "aggregate_decode_tps"), batched_tg(lbb, 64)),
        }
        t = {k: {"weir": a, "llamacpp": b, "weir_over_llamacpp": ratio(a, b)} for k, (a, b) in rows.items()}
        for k in ("ttft_first_ms", "ttft_second_shared_prefix_ms", "ttft_second_cache_flushed_ms", "system_prompt_tokens"):
            t[k] = {"weir": get(w, "conc8", k)}
        table[label] = t
    kernels = None
    try:
        with open(os.path.join(raw, "kernels-bench.txt"), encoding="utf-8", errors="replace") as f:
            kernels = [line.rstrip("\n") for line in f if line.strip()]
    except OSError:
        pass
    overlap = None
    try:
        with open(os.path.join(raw, "overlap.txt"), encoding="utf-8") as f:
            overlap = f.read().strip()
    except OSError:
        pass
    return {"cpu_busy_during_weir_gpu_benchmarks": overlap,
            "note": "Weir's decode row runs after a 512-token prompt; llama-bench's tg128 from an empty context. "
                    "Conversations: Weir bench-concurrency (64-token prompts) vs llama-batched-bench -npp 128 -ntg 128.",
            "table": table, "weir": weir, "llamacpp": llama, "gpu_kernels_bench": kernels}


def cpu_section(raw):
    weir, llama, table = {}, {}, {}
    for label in ("gemma3", "llama3-8b"):
        runs = {}
        for path in sorted(glob.glob(os.path.join(raw, f"cpu-bench-{label}-t*.json"))):
            t = int(re.search(r"-t(\d+)\.json$", path).group(1))
            runs.setdefault(t, {})["bench"] = load_json(path)
        for path in sorted(glob.glob(os.path.join(raw, f"cpu-conc-{label}-t*.json"))):
            t = int(re.search(r"-t(\d+)\.json$", path).group(1))
            runs.setdefault(t, {})["conversations16"] = load_json(path)
        lb = load_json(os.path.join(raw, f"llama-cpu-bench-{label}.json"))
        lbb = load_jsonl(os.path.join(raw, f"llama-cpu-batched-{label}.jsonl"),
                         os.path.join(raw, f"llama-cpu-batched-{label}.jsonl.err"))
        if lb is not None or lbb:
            llama[label] = {"llama_bench": lb, "batched_bench": lbb}
        if not runs:
            continue
        weir[label] = {f"t{t}": r for t, r in sorted(runs.items())}
        rows = []
        for t, r in sorted(runs.items()):
            b, c = r.get("bench"), r.get("conversations16")
            pp, tg = get(b, "pp"), get(b, "tg")
            lpp = llama_bench_value(lb, pp, 0, t) if pp else None
            ltg = llama_bench_value(lb, 0, tg, t) if tg else None
            lconv = None
            for row in lbb:
                if row.get("n_threads") == t and row.get("pl") == 16:
                    lconv = row.get("speed_tg")
            rows.append({
                "threads": t,
                "weir_prefill_tok_s": get(b, "prefill_tokens_per_s"), "llamacpp_prefill_tok_s": lpp,
                "prefill_ratio": ratio(get(b, "prefill_tokens_per_s"), lpp),
                "weir_decode_tok_s": get(b, "decode_tokens_per_s"), "llamacpp_decode_tok_s": ltg,
                "decode_ratio": ratio(get(b, "decode_tokens_per_s"), ltg),
                "weir_decode_fraction_of_bandwidth": get(b, "decode_fraction_of_bandwidth_limit"),
                "read_bandwidth_gb_s": get(b, "read_bandwidth_gb_per_s"),
                "weir_16_conversations_tok_s": get(c, "aggregate_decode_tps"), "llamacpp_16_sequences_tok_s": lconv,
                "conversations_ratio": ratio(get(c, "aggregate_decode_tps"), lconv),
                "pp": pp, "tg": tg,
                # where a step's time went (weir-cli bench --step-split, bench-concurrency --step-split)
                "weir_decode_step_split": get(b, "decode_step_split"),
                "weir_16_conversations_step_split": get(c, "steady_step_split"),
            })
        table[label] = rows
    # The same runs at the most threads with the pool spinning 1 ms before it yields.
    spin = {}
    for path in sorted(glob.glob(os.path.join(raw, "cpu-spin-*-gemma3-t*.json"))):
        kind, t = re.search(r"cpu-spin-(bench|conc)-gemma3-t(\d+)\.json$", path).groups()
        d = load_json(path)
        spin[f"t{t}"] = dict(spin.get(f"t{t}", {}), **({"decode_tok_s": get(d, "decode_tokens_per_s"),
                                                         "prefill_tok_s": get(d, "prefill_tokens_per_s")}
                                                        if kind == "bench" else
                                                        {"conversations16_tok_s": get(d, "aggregate_decode_tps")}))
    return {"table": table, "weir": weir, "llamacpp": llama, "spin_first_1ms": spin,
            "pool_handoff": load_json(os.path.join(raw, "cpu-handoff.json"))}


def split_line(sp):
    """One line of a step split: ms per step by op, outside the pass, and the pool."""
    if not isinstance(sp, dict):
        return "-"
    ops = sp.get("ops_ms") or {}
    pool = sp.get("pool") or {}
    parts = [f"step {fmt(sp.get('step_ms'), 0)} ms:"]
    parts += [f"{k} {fmt(v, 0)}" for k, v in ops.items() if isinstance(v, (int, float)) and v >= 0.005]
    parts.append(f"outside {fmt(sp.get('outside_forward_ms'), 0)}")
    parts.append(f"| pool busy {fmt(pool.get('busy_fraction'), 0)}, {fmt(pool.get('round_trips_per_step'), 0)} trips"
                 f" of {fmt(pool.get('mean_round_trip_us'), 0)} us (wake {fmt(pool.get('mean_wake_us'), 0)},"
                 f" tail {fmt(pool.get('mean_tail_us'), 0)}), alone {fmt(pool.get('driving_thread_alone_ms'), 0)} ms")
    per_op = sp.get("ops_pool") or {}
    busy = [f"{k} {fmt(v.get('busy_fraction'), 0)}" for k, v in per_op.items()
            if isinstance(v, dict) and (v.get("in_round_trips_ms") or 0) >= 0.005]
    alone = [f"{k} {fmt(v.get('alone_ms'), 0)}" for k, v in per_op.items()
             if isinstance(v, dict) and (v.get("alone_ms") or 0) >= 0.05]
    if busy:
        parts.append("| busy by op: " + ", ".join(busy))
    if alone:
        parts.append("| alone by op (ms): " + ", ".join(alone))
    return " ".join(parts)


def compare_section(raw):
    out = {}
    for path in sorted(glob.glob(os.path.join(raw, "compare-*.json"))):
        label = os.path.basename(path)[len("compare-"):-len(".json")]
        doc = load_json(path)
        err = ""
        try:
            with open(path + ".err", encoding="utf-8", errors="replace") as f:
                err = f.read()[-1500:]
        except OSError:
            pass
        out[label] = doc if doc is not None else {"no_output": True, "stderr": err}
    return out


def fmt(v, width=10):
    if v is None:
        return "-".rjust(width)
    if isinstance(v, float):
        return (f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}").rjust(width)
    return str(v).rjust(width)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", default="full")
    ap.add_argument("--print", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    steps = read_steps(a.raw)
    compare = compare_section(a.raw)
    soak = load_json(os.path.join(a.raw, "soak.json"))
    gpu = gpu_section(a.raw)
    cpu = cpu_section(a.raw)
    counts = {s: sum(1 for x in steps if x["status"] == s) for s in ("ok", "FAILED", "TIMEOUT", "SKIPPED")}
    summary = {
        "mode": a.mode,
        "facts": read_facts(a.raw),
        "weir_devices": load_json(os.path.join(a.raw, "devices.json")),
        "counts": counts,
        "steps": steps,
        "gpu_tests": ctest_results(a.raw),
        "compare_devices": {k: {x: get(v, x) for x in ("pass", "max_rel_logit_error", "hard_divergences",
                                                        "near_tie_divergences", "bit_identical", "problems")}
                            for k, v in compare.items()},
        "soak": {x: get(soak, x) for x in ("requests", "done", "failed", "violations", "leaked_full_pages",
                                           "leaked_window_pages", "bad_terminations", "preemptions")}
                if isinstance(soak, dict) else None,
        "gpu_table": gpu["table"],
        "cpu_table": cpu["table"],
    }
    for name, doc in (("summary.json", summary), ("compare.json", compare), ("soak.json", soak),
                      ("gpu_bench.json", gpu), ("cpu_bench.json", cpu)):
        with open(os.path.join(a.out, name + ".part"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
        os.replace(os.path.join(a.out, name + ".part"), os.path.join(a.out, name))

    if not a.print:
        return
    print("\n==================== tests/gpu/run.sh summary (%s) ====================" % a.mode)
    for k in ("gpu", "nvcc", "cpu", "git"):
        if summary["facts"].get(k):
            print(f"{k}: {summary['facts'][k]}")
    devs = summary["weir_devices"]
    if isinstance(devs, dict):
        names = ", ".join(f"{d.get('id')} ({d.get('name')})" for d in devs.get("devices", []))
        print(f"weir devices: {names}" + (f"; no GPU: {devs['gpu_problem']}" if devs.get("gpu_problem") else ""))
    for s in steps:
        secs = "" if s["seconds"] is None else f"{s['seconds']:.0f}s"
        print(f"  {s['status']:8} {secs:>5}  {s['name']}" + (f"  -- {s['note'][:150]}" if s["note"] else ""))
    for t in summary["gpu_tests"]:
        if t["status"] != "Passed":
            print(f"  gpu test {t['name']}: {t['status']}")
    for k, v in summary["compare_devices"].items():
        print(f"  compare-devices {k}: pass={v['pass']} max_rel_err={v['max_rel_logit_error']} "
              f"hard={v['hard_divergences']} near_ties={v['near_tie_divergences']}")
    if summary["soak"]:
        s = summary["soak"]
        print(f"  soak: violations={s['violations']} leaked={s['leaked_full_pages']}/{s['leaked_window_pages']} "
              f"failed={s['failed']} done={s['done']}/{s['requests']}")
    for label, t in gpu["table"].items():
        print(f"  GPU {label}: {'':30} {'weir':>10} {'llama.cpp':>10} {'ratio':>8}")
        for k, v in t.items():
            if "llamacpp" in v:
                print(f"    {k:34} {fmt(v['weir'])} {fmt(v['llamacpp'])} {fmt(v['weir_over_llamacpp'], 8)}")
            else:
                print(f"    {k:34} {fmt(v['weir'])}")
    handoff = cpu.get("pool_handoff") or {}
    for r in handoff.get("results", []):
        st, ch, ba = r.get("round_trip_static", {}), r.get("round_trip_chunked", {}), r.get("barrier", {})
        print(f"  CPU pool hand-off t{r.get('threads')}: round trip overhead {st.get('overhead_ns')} ns"
              f" (chunked {ch.get('overhead_ns')}), left out {st.get('left_out_workers_per_round_trip')},"
              f" bare barrier {ba.get('median_ns')} ns")
    for label, rows in cpu["table"].items():
        print(f"  CPU {label}: threads  pp(weir/llama)  tg(weir/llama)  16conv(weir/llama)  bw-fraction")
        for r in rows:
            print(f"    t{r['threads']:<3} {fmt(r['weir_prefill_tok_s'], 8)}/{fmt(r['llamacpp_prefill_tok_s'], 8)}"
                  f" {fmt(r['weir_decode_tok_s'], 7)}/{fmt(r['llamacpp_decode_tok_s'], 7)}"
                  f" {fmt(r['weir_16_conversations_tok_s'], 8)}/{fmt(r['llamacpp_16_sequences_tok_s'], 8)}"
                  f" {fmt(r['weir_decode_fraction_of_bandwidth'], 8)}")
        for r in rows:
            for what, key in (("decode", "weir_decode_step_split"), ("16conv", "weir_16_conversations_step_split")):
                print(f"    t{r['threads']:<3} {what} step split: {split_line(r.get(key))}")
    for t, v in (cpu.get("spin_first_1ms") or {}).items():
        print(f"  CPU gemma3 {t} spinning 1 ms before yielding: pp {fmt(v.get('prefill_tok_s'), 0)},"
              f" tg {fmt(v.get('decode_tok_s'), 0)}, 16conv {fmt(v.get('conversations16_tok_s'), 0)}")
    print(f"steps: {counts['ok']} ok, {counts['FAILED']} failed, {counts['TIMEOUT']} timed out, "
          f"{counts['SKIPPED']} skipped; files in {a.out}")


if __name__ == "__main__":
    main()
