#!/usr/bin/env python3
"""What clients of local OpenAI servers rely on (issue 14), through the
official `openai` client against `weir-cli serve` on the default model:
parallel_tool_calls, logit_bias, the Bearer scheme in any case, OpenAI's
context-overflow wording, total tokens within the context, CORS preflights,
optional model, paths without /v1, system_fingerprint, logprobs (chat and
completions, streamed too), n choices sharing the prompt's pages, and several
prompts per completions request.
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from weir_serve import Server, ServedTestCase, assert_pools_clean, paths  # noqa: E402

_, MODEL_PATH = paths()  # skips (77) without the model or the client
import openai  # noqa: E402

KEY = "sk-weir-compat"
MODEL = "gemma-3-270m-q4_k_m"
CONTEXT = 2048
PAGE = 16
CHUNK = 128  # a shared prefix of a chunk or more is computed once (the scheduler's rule)
ORIGIN = "http://localhost:5173"

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
# One worked example with two calls, so that the 270M model calls twice.
TWO_CALLS = [
    {"role": "system", "content": "You are a function-calling assistant. You never answer questions yourself. "
                                  "For every city in the question you reply with one tool_call block that calls get_weather."},
    {"role": "user", "content": "What's the weather in Rome and in Oslo?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": "Rome"})}},
        {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": "Oslo"})}}]},
    {"role": "tool", "tool_call_id": "a", "content": json.dumps({"c": 20})},
    {"role": "tool", "tool_call_id": "b", "content": json.dumps({"c": 5})},
    {"role": "assistant", "content": "Rome 20, Oslo 5."},
    {"role": "user", "content": "What's the weather in Paris and in Berlin?"},
]


def vocabulary():
    """Token text -> id, from the model file (SentencePiece writes a space as U+2581)."""
    import gguf
    reader = gguf.GGUFReader(MODEL_PATH)
    field = reader.fields["tokenizer.ggml.tokens"]
    return {bytes(field.parts[i]).decode("utf-8", "replace").replace("\u2581", " "): n
            for n, i in enumerate(field.data)}


class OpenAICompatTest(ServedTestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--max-running-requests", "4", "--max-context", str(CONTEXT), "--page-size", str(PAGE),
                            "--prefill-chunk", str(CHUNK), "--cors-origins", ORIGIN, api_key=KEY)
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key=KEY, max_retries=0, timeout=300)

    def chat(self, **kw):
        kw.setdefault("model", MODEL)
        return self.client.chat.completions.create(**kw)

    # ------------------------------------------------------------ defects 2-7

    def test_parallel_tool_calls_false_gives_one_call(self):
        # "required" is constrained to one or more calls (test_structured_output.py);
        # without parallel calls to exactly one, streamed and not.
        args = dict(messages=TWO_CALLS, tools=[WEATHER_TOOL], tool_choice="required", max_tokens=96, temperature=0)
        both = self.chat(**args).choices[0]
        self.assertEqual(both.finish_reason, "tool_calls")
        self.assertGreaterEqual(len(both.message.tool_calls or []), 1)
        one = self.chat(parallel_tool_calls=False, **args).choices[0]
        self.assertEqual(one.finish_reason, "tool_calls")
        self.assertEqual(len(one.message.tool_calls), 1)
        self.assertIn("city", json.loads(one.message.tool_calls[0].function.arguments))
        streamed = [tc for ch in self.chat(parallel_tool_calls=False, stream=True, **args) if ch.choices
                    for tc in (ch.choices[0].delta.tool_calls or [])]
        self.assertEqual(len(streamed), 1)

    def test_logit_bias_is_applied(self):
        prompt = "The capital of France is"
        first = self.client.completions.create(model=MODEL, prompt=prompt, max_tokens=1, temperature=0, logprobs=1)
        token = first.choices[0].logprobs.tokens[0]
        ids = vocabulary()
        self.assertIn(token, ids)
        banned = self.client.completions.create(model=MODEL, prompt=prompt, max_tokens=1, temperature=0, logprobs=1,
                                                logit_bias={str(ids[token]): -100})
        self.assertNotEqual(banned.choices[0].text, first.choices[0].text)
        # The log probabilities are the model's own: the banned token is still the likeliest.
        self.assertIn(token, banned.choices[0].logprobs.top_logprobs[0])
        forced = self.client.completions.create(model=MODEL, prompt=prompt, max_tokens=3, temperature=0,
                                                logit_bias={str(ids[" banana"]): 100})
        self.assertEqual(forced.choices[0].text, " banana" * 3)
        with self.assertRaises(openai.BadRequestError) as cm:
            self.chat(messages=[{"role": "user", "content": "hi"}], max_tokens=1, logit_bias={"99999999": 5})
        e = cm.exception.body
        self.assertEqual(e["param"], "logit_bias")
        self.assertIn("99999999", e["message"])

    def test_bearer_scheme_in_any_case(self):
        for scheme in ("bearer", "BEARER", "Bearer"):
            status, _, data = self.server.request("GET", "/v1/models", key=False,
                                                  headers={"Authorization": f"{scheme} {KEY}"})
            self.assertEqual(status, 200, data)
        status, _, _ = self.server.request("GET", "/v1/models", key=False, headers={"Authorization": f"bearer {KEY}x"})
        self.assertEqual(status, 401)

    def test_context_overflow_says_it_as_openai(self):
        with self.assertRaises(openai.BadRequestError) as cm:
            self.chat(messages=[{"role": "user", "content": "word " * 3000}], max_tokens=10)
        e = cm.exception.body
        self.assertEqual(e["code"], "context_length_exceeded")
        # What LiteLLM (and others) look for, with the numbers.
        self.assertRegex(e["message"], rf"^This model's maximum context length is {CONTEXT} tokens\. However, you "
                                       r"requested (\d+) tokens \((\d+) in the messages, 10 in the completion\)\.")

    def test_total_tokens_never_above_the_context(self):
        prompt = [2] + [1000] * (CONTEXT - 9)
        r = self.client.completions.create(model=MODEL, prompt=prompt, max_tokens=50, temperature=0,
                                           extra_body={"ignore_eos": True})
        self.assertEqual(r.usage.prompt_tokens, CONTEXT - 8)
        self.assertEqual(r.usage.total_tokens, CONTEXT)
        self.assertEqual(r.choices[0].finish_reason, "length")

    def test_cors_preflight_needs_no_key(self):
        ask = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST",
               "Access-Control-Request-Headers": "authorization, content-type"}
        status, headers, _ = self.server.request("OPTIONS", "/v1/chat/completions", key=False, headers=ask)
        self.assertEqual(status, 204)
        self.assertEqual(headers["access-control-allow-origin"], ORIGIN)
        self.assertIn("POST", headers["access-control-allow-methods"])
        self.assertIn("authorization", headers["access-control-allow-headers"])
        self.assertEqual(headers["access-control-max-age"], "600")
        status, headers, data = self.server.request(
            "POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2},
            headers={"Origin": ORIGIN})
        self.assertEqual(status, 200, data)
        self.assertEqual(headers["access-control-allow-origin"], ORIGIN)
        status, headers, _ = self.server.request("OPTIONS", "/v1/chat/completions", key=False,
                                                 headers=dict(ask, Origin="https://elsewhere.example"))
        self.assertEqual(status, 403)
        self.assertNotIn("access-control-allow-origin", headers)

    # ------------------------------------------------------------ compatibility

    def test_optional_model_paths_without_v1_and_fingerprint(self):
        root = openai.OpenAI(base_url=self.server.base_url[:-len("/v1")], api_key=KEY, max_retries=0)
        self.assertEqual([m.id for m in root.models.list().data], [MODEL])
        r = root.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=2)
        self.assertTrue(r.system_fingerprint.startswith("fp_"))
        chunks = list(root.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}],
                                                   max_tokens=2, stream=True))
        self.assertTrue(chunks)
        self.assertEqual({c.system_fingerprint for c in chunks}, {r.system_fingerprint})
        text = root.completions.create(model=MODEL, prompt="Hello", max_tokens=2)
        self.assertEqual(text.system_fingerprint, r.system_fingerprint)
        status, _, data = self.server.request("POST", "/v1/chat/completions",
                                              {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
        self.assertEqual(status, 200, data)
        self.assertEqual(json.loads(data)["model"], MODEL)

    # ------------------------------------------------------------ logprobs

    def test_chat_logprobs(self):
        msgs = [{"role": "user", "content": "Name three colours."}]
        r = self.chat(messages=msgs, max_tokens=8, temperature=0, logprobs=True, top_logprobs=4,
                      extra_body={"ignore_eos": True})
        content = r.choices[0].logprobs.content
        self.assertEqual(len(content), r.usage.completion_tokens)
        self.assertEqual("".join(t.token for t in content), r.choices[0].message.content)
        for t in content:
            self.assertLessEqual(t.logprob, 0.0)
            self.assertEqual(len(t.top_logprobs), 4)
            self.assertEqual(t.top_logprobs[0].token, t.token)  # greedy: the likeliest
            self.assertAlmostEqual(t.top_logprobs[0].logprob, t.logprob, places=5)
            self.assertEqual(bytes(t.bytes).decode("utf-8", "replace"), t.token)
            self.assertEqual([a.logprob for a in t.top_logprobs], sorted((a.logprob for a in t.top_logprobs), reverse=True))
        streamed = [t for ch in self.chat(messages=msgs, max_tokens=8, temperature=0, logprobs=True, top_logprobs=4,
                                          stream=True, extra_body={"ignore_eos": True})
                    if ch.choices and ch.choices[0].logprobs for t in ch.choices[0].logprobs.content]
        self.assertEqual([(t.token, round(t.logprob, 4)) for t in streamed],
                         [(t.token, round(t.logprob, 4)) for t in content])
        plain = self.chat(messages=msgs, max_tokens=2, temperature=0)
        self.assertIsNone(plain.choices[0].logprobs)
        with self.assertRaises(openai.BadRequestError):
            self.chat(messages=msgs, max_tokens=2, logprobs=True, top_logprobs=21)

    def test_completion_logprobs(self):
        r = self.client.completions.create(model=MODEL, prompt="One, two, three,", max_tokens=6, temperature=0,
                                           logprobs=3, echo=True, extra_body={"ignore_eos": True})
        lp = r.choices[0].logprobs
        self.assertEqual(len(lp.tokens), 6)
        self.assertTrue(r.choices[0].text.endswith("".join(lp.tokens)))
        self.assertEqual(lp.text_offset[0], len("One, two, three,"))
        for i, top in enumerate(lp.top_logprobs):
            self.assertIn(lp.tokens[i], top)
            self.assertGreaterEqual(len(top), 3)
            self.assertEqual(max(top.values()), lp.token_logprobs[i])  # greedy
        chunks = list(self.client.completions.create(model=MODEL, prompt="One, two, three,", max_tokens=6,
                                                     temperature=0, logprobs=3, stream=True,
                                                     extra_body={"ignore_eos": True}))
        tokens = [t for c in chunks if c.choices and c.choices[0].logprobs for t in c.choices[0].logprobs.tokens]
        self.assertEqual(tokens, lp.tokens)
        with self.assertRaises(openai.BadRequestError):
            self.client.completions.create(model=MODEL, prompt="x", max_tokens=1, logprobs=6)

    # ------------------------------------------------------------ n and several prompts

    def test_n_choices_share_the_prompt(self):
        before = self.server.cache_status()["prefix_hit_tokens"]
        story = "In a quiet harbour town the lighthouse keeper kept a ledger of every ship. " * 8
        r = self.chat(messages=[{"role": "user", "content": story}], n=3, max_tokens=12, temperature=1.0, seed=5,
                      extra_body={"ignore_eos": True})
        self.assertEqual([c.index for c in r.choices], [0, 1, 2])
        self.assertGreater(len({c.message.content for c in r.choices}), 1)
        self.assertEqual(r.usage.completion_tokens, 36)
        # Each choice after the first found the prompt's pages in the prefix cache
        # (the prompt is longer than a prefill chunk: shorter ones are computed side by side).
        self.assertGreater(r.usage.prompt_tokens, CHUNK)
        hits = self.server.cache_status()["prefix_hit_tokens"] - before
        self.assertGreaterEqual(hits, 2 * (r.usage.prompt_tokens - PAGE))
        again = self.chat(messages=[{"role": "user", "content": story}], n=3, max_tokens=12, temperature=1.0, seed=5,
                          extra_body={"ignore_eos": True})
        self.assertEqual([c.message.content for c in again.choices], [c.message.content for c in r.choices])
        stream = self.chat(messages=[{"role": "user", "content": "Count to five."}], n=2, max_tokens=6, stream=True)
        text, finish = {}, {}
        for ch in stream:
            for c in ch.choices:
                text[c.index] = text.get(c.index, "") + (c.delta.content or "")
                if c.finish_reason:
                    finish[c.index] = c.finish_reason
        self.assertEqual(sorted(finish), [0, 1])

    def test_several_prompts_per_completion_request(self):
        prompts = ["The capital of France is", "Water boils at"]
        r = self.client.completions.create(model=MODEL, prompt=prompts, n=2, max_tokens=4, temperature=0)
        self.assertEqual([c.index for c in r.choices], [0, 1, 2, 3])
        alone = [self.client.completions.create(model=MODEL, prompt=p, max_tokens=4, temperature=0) for p in prompts]
        self.assertEqual([c.text for c in r.choices], [alone[0].choices[0].text] * 2 + [alone[1].choices[0].text] * 2)
        self.assertEqual(r.usage.prompt_tokens, sum(a.usage.prompt_tokens for a in alone))
        tokens = self.client.completions.create(model=MODEL, prompt=[[2, 651, 6037], [2, 9259]], max_tokens=2,
                                                temperature=0)
        self.assertEqual(len(tokens.choices), 2)

    def test_zz_pools_clean(self):
        assert_pools_clean(self, self.server)


if __name__ == "__main__":
    unittest.main(verbosity=2)
