#!/usr/bin/env python3
"""Greedy reference runs of llama.cpp (through llama-cpp-python's low-level API)
for the model forward-pass tests.

For each prompt: tokenize it with llama.cpp (BOS added as the vocabulary says),
prefill, then run `--steps` greedy steps, recording every generated id and the
top-5 (id, logit) of the logits that chose it. llama.cpp runs with the settings
its CPU path uses by default (f16 KV cache, flash attention "auto"), which are
recorded in the output.

  # default model, text prompts
  .venv-ref/bin/python tests/reference/make_model_reference.py \
      --model models/gemma-3-270m-q4_k_m.gguf --out tests/data/reference/gemma3_270m_greedy.json
  # the synthetic models (random weights; prompts as random token ids)
  build/bin/weir-cli make-synthetic /tmp/llama.gguf
  build/bin/weir-cli make-synthetic /tmp/qwen2.gguf --arch qwen2 --seed 2
  build/bin/weir-cli make-synthetic /tmp/gemma3.gguf --arch gemma3 --seed 3 --layers 3 --rope-base 1000000
  .venv-ref/bin/python tests/reference/make_model_reference.py --model /tmp/llama.gguf \
      --prompt-ids-seed 7 --out tests/data/reference/llama_synthetic_greedy.json   # same for qwen2, gemma3

  # SmolLM2 135M Instruct (Llama architecture, ChatML): its own prompts, plus
  # chat messages rendered by the file's chat template with python jinja2
  .venv-ref/bin/python tests/reference/make_model_reference.py \
      --model models/smollm2-135m-instruct-q4_1.gguf --steps 48 \
      --chat-message "What is the capital of France?" --chat-message "Name three primary colors." \
      --out tests/data/reference/smollm2_135m_greedy.json

Keep prompts under 64 tokens and prompt + steps under 256: beyond those
llama.cpp switches its flash attention to kernels that round differently
(tiled for 64+ queries, split over threads once 512 cache cells are in view),
which we do not reproduce bit for bit.

The recorded system_info says whether llama.cpp was built with AVX-512; its
attention scores and SwiGLU round differently from an AVX2 build, and the
tests replay the build that recorded the data (reference_runner.h useBuildOf).
"""
import argparse
import ctypes
import hashlib
import json
import os
import random
import sys

import numpy as np
import llama_cpp as L

# Varied on purpose: plain prose, a question, code, a list, numbers, another
# language, repetition, and the prompt weir-cli generate is checked with.
DEFAULT_PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village by the sea,",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "Q: What is the boiling point of water at sea level?\nA:",
    "Here is a list of fruits:\n1. Apple\n2.",
    "12 + 35 = 47, 18 + 21 = 39, 44 + 17 =",
    "La vie est belle quand",
    "The quick brown fox jumps over the lazy dog. The quick brown fox",
    "<start_of_turn>user\nWrite a haiku about autumn.<end_of_turn>\n<start_of_turn>model\n",
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tokenize(vocab, text, parse_special):
    data = text.encode("utf-8")
    buf = (L.llama_token * (len(data) + 16))()
    n = L.llama_tokenize(vocab, data, len(data), buf, len(buf), True, parse_special)
    if n < 0:
        raise SystemExit(f"tokenize failed for {text!r}")
    return list(buf[:n])


def render_chat(model_path, user_message):
    """One user message through the GGUF's own chat template, rendered the way
    Hugging Face transformers does (sandboxed jinja2, trim/lstrip blocks)."""
    import gguf
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    reader = gguf.GGUFReader(model_path)

    def text(key):
        field = reader.get_field(key)
        return None if field is None else bytes(field.parts[field.data[0]]).decode()

    def token(key):
        field = reader.get_field(key)
        if field is None:
            return ""
        tokens = reader.get_field("tokenizer.ggml.tokens")
        return bytes(tokens.parts[tokens.data[int(field.parts[field.data[0]][0])]]).decode()

    source = text("tokenizer.chat_template")
    if source is None:
        raise SystemExit(f"{model_path} has no tokenizer.chat_template")
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(source).render(messages=[{"role": "user", "content": user_message}],
                                          add_generation_prompt=True,
                                          bos_token=token("tokenizer.ggml.bos_token_id"),
                                          eos_token=token("tokenizer.ggml.eos_token_id"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=1024)
    ap.add_argument("--prompt-ids-seed", type=int, default=None,
                    help="use random token-id prompts (for models without a real vocabulary)")
    ap.add_argument("--prompt-count", type=int, default=8)
    ap.add_argument("--prompt-text", action="append", default=None,
                    help="replace the default text prompts (repeatable)")
    ap.add_argument("--chat-message", action="append", default=[],
                    help="add a prompt: this user message rendered by the model's own chat template "
                         "(tokenizer.chat_template, python jinja2, generation prompt added)")
    args = ap.parse_args()

    L.llama_backend_init()
    mparams = L.llama_model_default_params()
    model = L.llama_model_load_from_file(args.model.encode(), mparams)
    if not model:
        raise SystemExit(f"llama.cpp could not load {args.model}")
    vocab = L.llama_model_get_vocab(model)
    n_vocab = L.llama_vocab_n_tokens(vocab)

    cparams = L.llama_context_default_params()
    cparams.n_ctx = args.n_ctx
    cparams.n_threads = args.threads
    cparams.n_threads_batch = args.threads
    # Left at llama.cpp's defaults on purpose (recorded below): type_k/type_v f16,
    # flash_attn_type auto (enabled on the CPU backend), n_batch/n_ubatch.
    ctx = L.llama_init_from_model(model, cparams)
    if not ctx:
        raise SystemExit("llama.cpp could not create a context")
    settings = {
        "n_ctx": cparams.n_ctx,
        "n_batch": cparams.n_batch,
        "n_ubatch": cparams.n_ubatch,
        "n_threads": cparams.n_threads,
        "n_threads_batch": cparams.n_threads_batch,
        "type_k": {1: "f16", 0: "f32", 8: "q8_0"}.get(cparams.type_k, cparams.type_k),
        "type_v": {1: "f16", 0: "f32", 8: "q8_0"}.get(cparams.type_v, cparams.type_v),
        "flash_attn_type": {-1: "auto", 0: "disabled", 1: "enabled"}.get(cparams.flash_attn_type, cparams.flash_attn_type),
        "swa_full": bool(cparams.swa_full),
        "llama_cpp_python": L.__version__,
        "system_info": L.llama_print_system_info().decode(errors="replace").strip(),
    }

    if args.prompt_ids_seed is not None:
        rng = random.Random(args.prompt_ids_seed)
        prompts = []
        for i in range(args.prompt_count):
            n = rng.randint(3, 40)
            prompts.append((None, [rng.randrange(3, n_vocab) for _ in range(n)]))
    else:
        texts = args.prompt_text or DEFAULT_PROMPTS
        # Text is user input: special tokens only parsed for the chat-formatted prompts.
        prompts = [(t, tokenize(vocab, t, "<start_of_turn>" in t)) for t in texts]
        for message in args.chat_message:
            t = render_chat(args.model, message)
            prompts.append((t, tokenize(vocab, t, True)))

    mem = L.llama_get_memory(ctx)
    batch = L.llama_batch_init(max(len(p[1]) for p in prompts) + 1, 0, 1)

    def decode(ids, start_pos):
        batch.n_tokens = len(ids)
        for i, t in enumerate(ids):
            batch.token[i] = t
            batch.pos[i] = start_pos + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = 1 if i == len(ids) - 1 else 0
        rc = L.llama_decode(ctx, batch)
        if rc != 0:
            raise SystemExit(f"llama_decode failed: {rc}")
        ptr = L.llama_get_logits_ith(ctx, len(ids) - 1)
        return np.ctypeslib.as_array(ptr, shape=(n_vocab,)).copy()

    cases = []
    for text, ids in prompts:
        L.llama_memory_clear(mem, True)
        logits = decode(ids, 0)
        gen, top5 = [], []
        pos = len(ids)
        for step in range(args.steps):
            order = np.argsort(-logits, kind="stable")[:5]
            top5.append([[int(i), round(float(logits[i]), 5)] for i in order])
            tok = int(order[0])
            gen.append(tok)
            if step + 1 < args.steps:
                logits = decode([tok], pos)
                pos += 1
        case = {"prompt_ids": ids, "generated": gen, "top5": top5}
        if text is not None:
            case = {"prompt": text, **case}
        cases.append(case)
        print(f"{len(ids):3d} prompt tokens -> {gen[:12]}...", file=sys.stderr)

    L.llama_batch_free(batch)
    L.llama_free(ctx)
    L.llama_model_free(model)

    out = {
        "generator": "tests/reference/make_model_reference.py",
        "model": os.path.basename(args.model),
        "model_sha256": sha256(args.model),
        "n_vocab": n_vocab,
        "steps": args.steps,
        "settings": settings,
        "cases": cases,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {args.out}: {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
