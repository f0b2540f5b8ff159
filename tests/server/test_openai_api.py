#!/usr/bin/env python3
"""The official `openai` client against `weir-cli serve` on the default model:
chat (plain and streamed), completions, stop sequences, seeds, the prefix
cache in usage, a tool-call round trip, and every error the API promises
(400 naming the field, 401, 404, 405, 413), plus malformed bodies over HTTP.
"""
import json
import os
import random
import socket
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from weir_serve import Server, ServedTestCase, assert_pools_clean, error_of, paths  # noqa: E402

paths()  # skips (77) without the model or the client
import openai  # noqa: E402

KEY = "sk-weir-test-0123456789"
MODEL = "gemma-3-270m-q4_k_m"
BODY_LIMIT = 65536

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city name, e.g. Paris"}},
            "required": ["city"],
        },
    },
}

# A strongly worded instruction and one worked example, so that the 270M
# model answers with a call to the tool.
TOOL_SYSTEM = ("You are a function-calling assistant. You never answer questions yourself. "
               "For every question about the weather you reply ONLY with a tool_call block that calls get_weather.")
TOOL_EXAMPLE = [
    {"role": "user", "content": "What's the weather in Rome?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_example", "type": "function",
         "function": {"name": "get_weather", "arguments": json.dumps({"city": "Rome"})}}]},
    {"role": "tool", "tool_call_id": "call_example", "content": json.dumps({"temperature_c": 24, "sky": "clear"})},
    {"role": "assistant", "content": "It is 24 °C and clear in Rome."},
]


class OpenAIApiTest(ServedTestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--max-running-requests", "4", "--max-context", "2048",
                            "--max-body-bytes", str(BODY_LIMIT), "--default-max-tokens", "8",
                            api_key=KEY)
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key=KEY, max_retries=0, timeout=300)

    def chat(self, **kw):
        kw.setdefault("model", MODEL)
        return self.client.chat.completions.create(**kw)

    # ------------------------------------------------------------ basics

    def test_health_and_models(self):
        status, body = self.server.json("GET", "/health", key=False)
        self.assertEqual(status, 200)
        self.assertEqual(body["status"], "ok")
        models = self.client.models.list()
        self.assertEqual([m.id for m in models.data], [MODEL])
        self.assertEqual(self.client.models.retrieve(MODEL).id, MODEL)

    def test_chat_non_streaming(self):
        r = self.chat(messages=[{"role": "system", "content": "You are a friendly assistant."},
                                {"role": "user", "content": "Say hello to Ada."}],
                      max_tokens=16, temperature=0)
        self.assertEqual(r.object, "chat.completion")
        self.assertEqual(len(r.choices), 1)
        c = r.choices[0]
        self.assertEqual(c.message.role, "assistant")
        self.assertIsInstance(c.message.content, str)
        self.assertTrue(c.message.content.strip())
        self.assertIn(c.finish_reason, ("stop", "length"))
        self.assertIsNone(c.message.tool_calls)
        u = r.usage
        self.assertGreater(u.prompt_tokens, 5)
        self.assertTrue(1 <= u.completion_tokens <= 16)
        self.assertEqual(u.total_tokens, u.prompt_tokens + u.completion_tokens)
        self.assertGreaterEqual(u.prompt_tokens_details.cached_tokens, 0)
        if c.finish_reason == "length":
            self.assertEqual(u.completion_tokens, 16)

    def test_chat_streaming(self):
        stream = self.chat(messages=[{"role": "user", "content": "Count from one to five."}],
                           max_tokens=16, temperature=0, stream=True, stream_options={"include_usage": True})
        chunks = list(stream)
        self.assertGreaterEqual(len(chunks), 3)
        self.assertTrue(all(ch.object == "chat.completion.chunk" for ch in chunks))
        self.assertEqual(chunks[0].choices[0].delta.role, "assistant")
        text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
        self.assertTrue(text.strip())
        finishes = [ch.choices[0].finish_reason for ch in chunks if ch.choices and ch.choices[0].finish_reason]
        self.assertEqual(len(finishes), 1)
        self.assertIn(finishes[0], ("stop", "length"))
        self.assertEqual(chunks[-1].choices, [])
        self.assertGreater(chunks[-1].usage.completion_tokens, 0)
        # The same request without streaming gives the same text (greedy).
        r = self.chat(messages=[{"role": "user", "content": "Count from one to five."}], max_tokens=16, temperature=0)
        self.assertEqual(r.choices[0].message.content, text)

    def test_sse_wire_format(self):
        status, headers, body = self.server.request(
            "POST", "/v1/chat/completions",
            {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "stream": True})
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/event-stream"))
        events = [e for e in body.decode().split("\n\n") if e]
        self.assertTrue(all(e.startswith("data: ") for e in events), events)
        self.assertEqual(events[-1], "data: [DONE]")
        for e in events[:-1]:
            json.loads(e[len("data: "):])

    def test_completions(self):
        r = self.client.completions.create(model=MODEL, prompt="The capital of France is", max_tokens=6, temperature=0)
        self.assertEqual(r.object, "text_completion")
        self.assertTrue(r.choices[0].text)
        self.assertIn(r.choices[0].finish_reason, ("stop", "length"))
        self.assertEqual(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens)
        echoed = self.client.completions.create(model=MODEL, prompt="The capital of France is", max_tokens=6,
                                                temperature=0, echo=True)
        self.assertEqual(echoed.choices[0].text, "The capital of France is" + r.choices[0].text)
        streamed = self.client.completions.create(model=MODEL, prompt="The capital of France is", max_tokens=6,
                                                  temperature=0, stream=True)
        self.assertEqual("".join(ch.choices[0].text for ch in streamed), r.choices[0].text)

    # ------------------------------------------------------------ stop, seeds, cache

    def test_stop_sequences(self):
        prompt = "List the days of the week: Monday, Tuesday,"
        full = self.client.completions.create(model=MODEL, prompt=prompt, max_tokens=16, temperature=0).choices[0].text
        words = [w for w in full.split() if len(w) > 3]
        self.assertTrue(words, f"no word to stop at in {full!r}")
        stop = words[len(words) // 2]
        cut = full[:full.index(stop)]
        for stops in (stop, [stop], ["<never>", stop]):
            r = self.client.completions.create(model=MODEL, prompt=prompt, max_tokens=16, temperature=0, stop=stops)
            self.assertEqual(r.choices[0].text, cut)
            self.assertEqual(r.choices[0].finish_reason, "stop")
        # Streaming never shows any part of the stop sequence.
        streamed = "".join(ch.choices[0].text for ch in self.client.completions.create(
            model=MODEL, prompt=prompt, max_tokens=16, temperature=0, stop=stop, stream=True))
        self.assertEqual(streamed, cut)
        # Chat too.
        msgs = [{"role": "user", "content": "Write a short sentence about the sea."}]
        chat_full = self.chat(messages=msgs, max_tokens=16, temperature=0).choices[0].message.content
        chat_words = [w for w in chat_full.split() if len(w) > 3]
        self.assertTrue(chat_words)
        chat_stop = chat_words[-1]
        r = self.chat(messages=msgs, max_tokens=16, temperature=0, stop=[chat_stop])
        self.assertEqual(r.choices[0].message.content, chat_full[:chat_full.index(chat_stop)])
        self.assertEqual(r.choices[0].finish_reason, "stop")

    def test_seeds(self):
        msgs = [{"role": "user", "content": "Invent a name for a cat."}]
        texts = {}
        for seed in (1, 2, 3):
            a = self.chat(messages=msgs, max_tokens=12, temperature=1.0, top_p=0.95, seed=seed).choices[0].message.content
            b = self.chat(messages=msgs, max_tokens=12, temperature=1.0, top_p=0.95, seed=seed,
                          stream=True)
            b = "".join(ch.choices[0].delta.content or "" for ch in b if ch.choices)
            self.assertEqual(a, b, f"seed {seed}: same seed, different text")
            texts[seed] = a
        self.assertGreater(len(set(texts.values())), 1, f"three seeds gave one text: {texts}")

    def test_cached_prompt_tokens(self):
        system = "You are a careful assistant for a library. " * 8
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": "Suggest a book."}]
        first = self.chat(messages=msgs, max_tokens=4, temperature=0)
        second = self.chat(messages=msgs[:1] + [{"role": "user", "content": "Suggest a film."}],
                           max_tokens=4, temperature=0)
        self.assertGreater(second.usage.prompt_tokens_details.cached_tokens, 32)
        self.assertLess(second.usage.prompt_tokens_details.cached_tokens, second.usage.prompt_tokens)
        self.assertGreater(first.usage.prompt_tokens, 64)

    def test_speculative_drafts_in_usage(self):
        # Code written out again: the engine's prompt-lookup drafts are kept,
        # and usage says how many in Weir's own field (OpenAI's prediction
        # fields are for Predicted Outputs, which these are not).
        code = "int add(int a, int b) {\n    return a + b;\n}\n\nint sub(int a, int b) {\n    return a - b;\n}\n"
        r = self.client.completions.create(model=MODEL, prompt=code + "\n" + code[:20], max_tokens=24, temperature=0)
        self.assertIsNone(r.usage.completion_tokens_details)
        d = r.usage.model_extra["weir"]
        self.assertGreater(d["accepted_draft_tokens"], 0)
        self.assertGreaterEqual(d["draft_tokens"], d["accepted_draft_tokens"])
        self.assertLessEqual(d["accepted_draft_tokens"], r.usage.completion_tokens)

    # ------------------------------------------------------------ tools

    def test_tool_call_round_trip(self):
        question = {"role": "user", "content": "What's the weather in Paris?"}
        base = [{"role": "system", "content": TOOL_SYSTEM}] + TOOL_EXAMPLE + [question]
        # One city, one call (without parallel_tool_calls "required" may give several).
        one = dict(tool_choice="required", parallel_tool_calls=False)
        r = self.chat(messages=base, tools=[WEATHER_TOOL], max_tokens=64, temperature=0, **one)
        c = r.choices[0]
        self.assertEqual(c.finish_reason, "tool_calls", f"no call: {c.message.content!r}")
        calls = c.message.tool_calls
        self.assertEqual(len(calls), 1)
        self.assertEqual(calls[0].type, "function")
        self.assertEqual(calls[0].function.name, "get_weather")
        self.assertTrue(calls[0].id.startswith("call_"))
        args = json.loads(calls[0].function.arguments)
        self.assertIsInstance(args, dict)
        self.assertIn("city", args)

        # The same call streamed as structured deltas.
        stream = self.chat(messages=base, tools=[WEATHER_TOOL], max_tokens=64, temperature=0, stream=True, **one)
        deltas = [ch.choices[0].delta for ch in stream if ch.choices]
        streamed = [tc for d in deltas for tc in (d.tool_calls or [])]
        self.assertEqual(len(streamed), 1)
        self.assertEqual(streamed[0].index, 0)
        self.assertEqual(streamed[0].function.name, "get_weather")
        self.assertEqual(json.loads(streamed[0].function.arguments), args)
        self.assertFalse("".join(d.content or "" for d in deltas).strip())

        # Round trip: the call and its result go back; the model answers in words.
        follow = base + [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": calls[0].id, "type": "function",
                 "function": {"name": "get_weather", "arguments": calls[0].function.arguments}}]},
            {"role": "tool", "tool_call_id": calls[0].id, "content": json.dumps({"temperature_c": 18, "sky": "sunny"})},
        ]
        answer = self.chat(messages=follow, tools=[WEATHER_TOOL], max_tokens=32, temperature=0)
        self.assertIn(answer.choices[0].finish_reason, ("stop", "length", "tool_calls"))
        if answer.choices[0].finish_reason != "tool_calls":
            self.assertTrue(answer.choices[0].message.content.strip())
        # tool_choice "none": no tools in the prompt, no calls parsed.
        plain = self.chat(messages=[question], tools=[WEATHER_TOOL], tool_choice="none", max_tokens=8, temperature=0)
        self.assertIsNone(plain.choices[0].message.tool_calls)

    # ------------------------------------------------------------ errors

    def assert_api_error(self, exc_type, status, param=None, code=None, **kw):
        with self.assertRaises(exc_type) as ctx:
            self.chat(**kw)
        self.assertEqual(ctx.exception.status_code, status)
        e = error_of(ctx.exception.response.content)
        if param is not None:
            self.assertEqual(e["param"], param)
        if code is not None:
            self.assertEqual(e["code"], code)
        return e

    def test_error_wrong_type_names_the_field(self):
        msgs = [{"role": "user", "content": "hi"}]
        e = self.assert_api_error(openai.BadRequestError, 400, "temperature", "invalid_type",
                                  messages=msgs, temperature="hot")
        self.assertIn("temperature", e["message"])
        self.assert_api_error(openai.BadRequestError, 400, "max_tokens", messages=msgs, max_tokens=-3)
        self.assert_api_error(openai.BadRequestError, 400, "messages[0].role", messages=[{"role": "robot", "content": "x"}])
        self.assert_api_error(openai.BadRequestError, 400, "n", messages=msgs, n=9)
        self.assert_api_error(openai.BadRequestError, 400, "stop", messages=msgs, extra_body={"stop": 7})

    def test_error_malformed_json(self):
        for body in (b'{"model": "x", "messages": [', b"not json at all", b"[1, 2, 3]", b"\xff\xfe"):
            status, _, data = self.server.request("POST", "/v1/chat/completions", body)
            self.assertEqual(status, 400, body)
            e = error_of(data)
            self.assertEqual(e["type"], "invalid_request_error")

    def test_error_unknown_model(self):
        e = self.assert_api_error(openai.NotFoundError, 404, "model", "model_not_found", model="gpt-99",
                                  messages=[{"role": "user", "content": "hi"}])
        self.assertIn("gpt-99", e["message"])
        with self.assertRaises(openai.NotFoundError):
            self.client.completions.create(model="gpt-99", prompt="x")

    def test_error_api_key(self):
        status, headers, data = self.server.request("GET", "/v1/models", key=False)
        self.assertEqual(status, 401)
        self.assertEqual(headers.get("www-authenticate"), "Bearer")
        error_of(data)
        wrong = openai.OpenAI(base_url=self.server.base_url, api_key="sk-wrong", max_retries=0)
        with self.assertRaises(openai.AuthenticationError) as ctx:
            wrong.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
        self.assertEqual(error_of(ctx.exception.response.content)["code"], "invalid_api_key")
        status, _, _ = self.server.request("GET", "/v1/models", headers={"Authorization": "Basic abc"}, key=False)
        self.assertEqual(status, 401)

    def test_error_body_too_large(self):
        big = {"model": MODEL, "messages": [{"role": "user", "content": "x" * (BODY_LIMIT + 100)}]}
        status, _, data = self.server.request("POST", "/v1/chat/completions", big)
        self.assertEqual(status, 413)
        self.assertEqual(error_of(data)["code"], "request_too_large")
        # Far over the limit: refused while it is still being sent; the server lives on.
        conn = socket.create_connection((self.server.host, self.server.port), timeout=60)
        size = 4 * 1024 * 1024
        head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n").encode()
        reply = b""
        try:
            conn.sendall(head)
            chunk = b"x" * 65536
            for _ in range(size // len(chunk)):
                conn.sendall(chunk)
        except OSError:
            pass  # the server stopped reading: expected
        try:
            while True:
                part = conn.recv(65536)
                if not part:
                    break
                reply += part
        except OSError:
            pass
        conn.close()
        if reply:
            self.assertTrue(reply.startswith(b"HTTP/1.1 413"), reply[:200])
        status, _ = self.server.json("GET", "/health", key=False)
        self.assertEqual(status, 200)

    def test_error_unknown_url_and_method(self):
        status, _, data = self.server.request("GET", "/v1/nothing-here")
        self.assertEqual(status, 404)
        self.assertEqual(error_of(data)["code"], "unknown_url")
        status, _, data = self.server.request("GET", "/v1/chat/completions")
        self.assertEqual(status, 405)
        error_of(data)

    def test_error_context_length(self):
        long_text = "word " * 3000
        e = self.assert_api_error(openai.BadRequestError, 400, code="context_length_exceeded",
                                  messages=[{"role": "user", "content": long_text}])
        self.assertIn("2048", e["message"])

    def test_mutated_bodies_over_http(self):
        rng = random.Random(7)
        seed = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1,
                           "temperature": 0.5, "stop": ["x"], "tool_choice": "none",
                           "tools": [{"type": "function", "function": {"name": "f"}}]}).encode()
        counts = {}
        for _ in range(10000):  # the acceptance's 10,000 mutated bodies, over a real socket
            b = bytearray(seed)
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(b))
                op = rng.randrange(3)
                if op == 0:
                    b[i] = rng.randrange(256)
                elif op == 1:
                    del b[i:i + rng.randint(1, 6)]
                else:
                    b[i:i] = rng.choice([b"{", b"]", b'"', b"null", b"-1", b",", b"\\"])
            status, _, data = self.server.request("POST", "/v1/chat/completions", bytes(b))
            counts[status] = counts.get(status, 0) + 1
            if status == 200:
                json.loads(data)
            else:
                self.assertTrue(400 <= status < 500, (status, bytes(b), data))
                error_of(data)
        print(f"mutated bodies over HTTP: {dict(sorted(counts.items()))}", flush=True)
        self.assertGreater(counts.get(400, 0), 5000, counts)
        self.assertTrue(self.server.alive())
        assert_pools_clean(self, self.server)  # no violation, no leaked page


if __name__ == "__main__":
    unittest.main(verbosity=2)
