#!/usr/bin/env python3
"""Anthropic Messages (/v1/messages, /v1/messages/count_tokens) through the
official `anthropic` client against `weir-cli serve` on the default model:
text and streamed text with Anthropic's event sequence, stop reasons
(max_tokens, stop_sequence), a forced tool call round trip (tool_use, then
tool_result), count_tokens equal to usage.input_tokens, the key as x-api-key
(or Bearer), and errors in Anthropic's shape.
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from weir_serve import Server, ServedTestCase, assert_pools_clean, paths  # noqa: E402

paths()  # skips (77) without the model or the openai client
try:
    import anthropic  # noqa: E402
except ImportError:
    print("SKIPPED: the anthropic package is not installed in this python")
    sys.exit(77)

KEY = "sk-weir-anthropic-test"
WEATHER = {
    "name": "get_weather",
    "description": "Get the current weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"enum": ["Lisbon", "Paris", "Oslo"]}},
                     "required": ["city"], "additionalProperties": False},
}
ASK = [{"role": "user", "content": "Is it raining in Lisbon?"}]
STORY = [{"role": "user", "content": "Write a long story about a lighthouse keeper."}]


class AnthropicMessagesTest(ServedTestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--max-running-requests", "4", "--max-context", "2048", api_key=KEY)
        root = cls.server.base_url.rsplit("/v1", 1)[0]
        cls.client = anthropic.Anthropic(base_url=root, api_key=KEY, max_retries=0, timeout=300)

    @staticmethod
    def sampling(kw):
        # This client has no sampling arguments of its own; the API still takes them.
        extra = {k: kw.pop(k) for k in ("temperature", "top_p", "top_k") if k in kw}
        if extra:
            kw["extra_body"] = extra
        kw.setdefault("model", "weir")  # any name: coding agents name Claude models
        return kw

    def create(self, **kw):
        kw.setdefault("max_tokens", 8)
        return self.client.messages.create(**self.sampling(kw))

    def test_text(self):
        m = self.create(messages=STORY, system="You are a storyteller.", temperature=0)
        self.assertEqual(m.type, "message")
        self.assertEqual(m.role, "assistant")
        self.assertTrue(m.id.startswith("msg_"))
        self.assertEqual([b.type for b in m.content], ["text"])
        self.assertTrue(m.content[0].text)
        self.assertEqual(m.stop_reason, "max_tokens")
        self.assertIsNone(m.stop_sequence)
        self.assertEqual(m.usage.output_tokens, 8)
        self.assertGreater(m.usage.input_tokens, 5)

    def test_stop_sequence(self):
        # Greedy decoding repeats itself: a word of the first answer stops the second.
        first = self.create(messages=STORY, temperature=0, max_tokens=12).content[0].text
        words = [w for w in first.split() if len(w) > 2]
        self.assertTrue(words, first)
        stop = words[min(1, len(words) - 1)]
        m = self.create(messages=STORY, temperature=0, max_tokens=12, stop_sequences=["zzqx", stop])
        self.assertEqual(m.stop_reason, "stop_sequence")
        self.assertEqual(m.stop_sequence, stop)
        self.assertNotIn(stop, m.content[0].text if m.content else "")

    def test_stream_events(self):
        types, text = [], ""
        with self.client.messages.stream(**self.sampling(dict(max_tokens=6, messages=STORY, temperature=0))) as s:
            for ev in s:
                types.append(ev.type)
                if ev.type == "content_block_delta":
                    self.assertEqual(ev.delta.type, "text_delta")
                    text += ev.delta.text
            final = s.get_final_message()
        raw = [t for t in types if t not in ("text",)]  # the helper adds "text" events of its own
        self.assertEqual(raw[0], "message_start")
        self.assertEqual(raw[-2:], ["message_delta", "message_stop"])
        self.assertIn("content_block_start", raw)
        self.assertLess(raw.index("content_block_start"), raw.index("content_block_stop"))
        self.assertEqual(final.content[0].text, text)
        self.assertEqual(final.stop_reason, "max_tokens")
        self.assertEqual(final.usage.output_tokens, 6)
        # The same text as without streaming (greedy).
        self.assertEqual(self.create(messages=STORY, temperature=0, max_tokens=6).content[0].text, text)

    def test_forced_tool_call_round_trip(self):
        m = self.create(messages=ASK, tools=[WEATHER], tool_choice={"type": "tool", "name": "get_weather"},
                        max_tokens=40)
        self.assertEqual(m.stop_reason, "tool_use")
        uses = [b for b in m.content if b.type == "tool_use"]
        self.assertEqual(len(uses), 1, m.content)
        use = uses[0]
        self.assertEqual(use.name, "get_weather")
        self.assertIsInstance(use.input, dict)
        self.assertEqual(set(use.input), {"city"})
        self.assertIsInstance(use.input["city"], str)
        # The result goes back; the answer is text.
        reply = self.create(messages=ASK + [
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in m.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "Rain, 14 C"}]},
        ], tools=[WEATHER], max_tokens=8)
        self.assertIn(reply.stop_reason, ("end_turn", "max_tokens"))
        self.assertTrue(all(b.type == "text" for b in reply.content), reply.content)  # may be empty: a tiny model
        self.assertGreater(reply.usage.input_tokens, m.usage.input_tokens)  # the call and its result are in

    def test_forced_tool_call_streamed(self):
        with self.client.messages.stream(model="weir", max_tokens=40, messages=ASK, tools=[WEATHER],
                                         tool_choice={"type": "any", "disable_parallel_tool_use": True}) as s:
            deltas = [ev.delta.type for ev in s if ev.type == "content_block_delta"]
            final = s.get_final_message()
        self.assertIn("input_json_delta", deltas)
        self.assertEqual(final.stop_reason, "tool_use")
        use = [b for b in final.content if b.type == "tool_use"][0]
        self.assertEqual(use.name, "get_weather")
        self.assertIsInstance(use.input.get("city"), str)

    def test_count_tokens_matches_usage(self):
        kw = dict(messages=ASK, system="You are terse.", tools=[WEATHER])
        counted = self.client.messages.count_tokens(model="weir", **kw)
        used = self.create(max_tokens=1, **kw)
        self.assertEqual(counted.input_tokens, used.usage.input_tokens)
        plain = self.client.messages.count_tokens(model="weir", messages=ASK)
        self.assertLess(plain.input_tokens, counted.input_tokens)  # the tools and system count

    def test_api_key(self):
        wrong = anthropic.Anthropic(base_url=self.client.base_url, api_key="sk-wrong", max_retries=0)
        with self.assertRaises(anthropic.AuthenticationError) as ctx:
            wrong.messages.create(model="weir", max_tokens=1, messages=ASK)
        self.assertEqual(ctx.exception.status_code, 401)
        self.assertEqual(ctx.exception.body["type"], "error")
        self.assertEqual(ctx.exception.body["error"]["type"], "authentication_error")
        body = {"max_tokens": 1, "messages": ASK}
        status, _, data = self.server.request("POST", "/v1/messages", body, key=False)
        self.assertEqual(status, 401)
        self.assertEqual(json.loads(data)["error"]["type"], "authentication_error")
        # Bearer works as well, and the path without /v1, and anthropic-version is tolerated.
        status, _, data = self.server.request("POST", "/messages", body,
                                              headers={"anthropic-version": "2023-06-01"})
        self.assertEqual(status, 200, data)
        self.assertEqual(json.loads(data)["type"], "message")

    def test_errors_in_anthropics_shape(self):
        with self.assertRaises(anthropic.BadRequestError) as ctx:
            self.create(messages=[{"role": "user", "content": [{"type": "image", "source": {
                "type": "base64", "media_type": "image/png", "data": "AAAA"}}]}])
        err = ctx.exception.body
        self.assertEqual(err["type"], "error")
        self.assertEqual(err["error"]["type"], "invalid_request_error")
        self.assertIn("messages[0].content[0].type", err["error"]["message"])
        status, _, data = self.server.request("POST", "/v1/messages", "{not json")
        self.assertEqual(status, 400)
        doc = json.loads(data)
        self.assertEqual(set(doc), {"type", "error"})
        self.assertEqual(doc["error"]["type"], "invalid_request_error")
        status, _, data = self.server.request("GET", "/v1/messages")
        self.assertEqual(status, 405)
        self.assertEqual(json.loads(data)["type"], "error")
        # Any model name is served by the one model, and the answer says which.
        m = self.create(model="claude-sonnet-4-5", messages=ASK, max_tokens=1)
        self.assertEqual(m.model, self.server.json("GET", "/v1/models")[1]["data"][0]["id"])

    def test_zz_pools_clean(self):
        assert_pools_clean(self, self.server)


if __name__ == "__main__":
    unittest.main(verbosity=2)
