#!/usr/bin/env python3
"""OpenAI Responses (/v1/responses, stateless) through the official `openai`
client against `weir-cli serve` on the default model: text with
instructions, the streamed event sequence with its sequence numbers, a
forced function call and its function_call_output round trip (streamed and
not), text.format json_schema held to the schema, and the refusals of what a
stateless server cannot do.
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from weir_serve import Server, ServedTestCase, assert_pools_clean, paths  # noqa: E402

paths()  # skips (77) without the model or the client
import openai  # noqa: E402

WEATHER = {"type": "function", "name": "get_weather", "description": "Get the current weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"enum": ["Lisbon", "Paris", "Oslo"]}},
                          "required": ["city"], "additionalProperties": False}}
ASK = "Is it raining in Lisbon?"
STORY = "Write a long story about a lighthouse keeper."
VERDICT = {"type": "object", "properties": {"answer": {"enum": ["yes", "no"]}, "sure": {"type": "boolean"}},
           "required": ["answer", "sure"], "additionalProperties": False}


class ResponsesTest(ServedTestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--max-running-requests", "4", "--max-context", "2048")
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="none", max_retries=0, timeout=300)
        cls.model = cls.client.models.list().data[0].id

    def create(self, **kw):
        kw.setdefault("model", self.model)
        kw.setdefault("max_output_tokens", 8)
        return self.client.responses.create(**kw)

    def test_text(self):
        r = self.create(input=STORY, instructions="You are a storyteller.", temperature=0, store=True)
        self.assertEqual(r.object, "response")
        self.assertTrue(r.id.startswith("resp_"))
        self.assertEqual(r.status, "incomplete")  # cut by max_output_tokens
        self.assertEqual(r.incomplete_details.reason, "max_output_tokens")
        self.assertEqual([o.type for o in r.output], ["message"])
        self.assertEqual(r.output[0].content[0].type, "output_text")
        self.assertTrue(r.output_text)
        self.assertEqual(r.usage.output_tokens, 8)
        self.assertEqual(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens)
        self.assertEqual(r.instructions, "You are a storyteller.")
        # Items as input: a message with input_text parts.
        items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": STORY}]}]
        same = self.create(input=items, instructions="You are a storyteller.", temperature=0)
        self.assertEqual(same.output_text, r.output_text)

    def test_stream_events(self):
        events = list(self.create(input=STORY, temperature=0, max_output_tokens=6, stream=True))
        types = [e.type for e in events]
        self.assertEqual(types[:4], ["response.created", "response.in_progress", "response.output_item.added",
                                     "response.content_part.added"])
        self.assertEqual(types[-4:], ["response.output_text.done", "response.content_part.done",
                                      "response.output_item.done", "response.incomplete"])
        self.assertEqual([e.sequence_number for e in events], list(range(len(events))))
        text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        final = events[-1].response
        self.assertEqual(final.output_text, text)
        self.assertEqual(final.usage.output_tokens, 6)
        self.assertEqual(self.create(input=STORY, temperature=0, max_output_tokens=6).output_text, text)

    def test_function_call_round_trip(self):
        r = self.create(input=ASK, tools=[WEATHER], tool_choice={"type": "function", "name": "get_weather"},
                        max_output_tokens=40)
        self.assertEqual(r.status, "completed")
        calls = [o for o in r.output if o.type == "function_call"]
        self.assertEqual(len(calls), 1, r.output)
        call = calls[0]
        self.assertEqual(call.name, "get_weather")
        args = json.loads(call.arguments)
        self.assertEqual(set(args), {"city"})
        self.assertIsInstance(args["city"], str)
        follow = self.create(input=[{"role": "user", "content": ASK},
                                    {"type": "function_call", "call_id": call.call_id, "name": call.name,
                                     "arguments": call.arguments},
                                    {"type": "function_call_output", "call_id": call.call_id, "output": "Rain, 14 C"}],
                             tools=[WEATHER], max_output_tokens=8)
        self.assertEqual([o.type for o in follow.output], ["message"])  # its text may be empty: a tiny model
        self.assertGreater(follow.usage.input_tokens, r.usage.input_tokens)  # the call and its output are in

    def test_function_call_streamed(self):
        # One call: "required" alone may give several (and a second may not fit in 40 tokens).
        events = list(self.create(input=ASK, tools=[WEATHER], tool_choice="required", parallel_tool_calls=False,
                                  max_output_tokens=40, stream=True))
        types = [e.type for e in events]
        self.assertIn("response.function_call_arguments.delta", types)
        done = [e for e in events if e.type == "response.function_call_arguments.done"]
        self.assertEqual(len(done), 1)
        self.assertIsInstance(json.loads(done[0].arguments)["city"], str)
        self.assertEqual(types[-1], "response.completed")
        final = events[-1].response
        self.assertEqual(final.output[-1].type, "function_call")
        self.assertEqual(final.output[-1].arguments, done[0].arguments)

    def test_json_schema_format(self):
        for seed_text in ("Is the sky blue?", "Is fire cold?"):
            r = self.create(input=seed_text, max_output_tokens=40,
                            text={"format": {"type": "json_schema", "name": "verdict", "schema": VERDICT,
                                             "strict": True}})
            doc = json.loads(r.output_text)
            self.assertEqual(set(doc), {"answer", "sure"})
            self.assertIn(doc["answer"], ("yes", "no"))
            self.assertIsInstance(doc["sure"], bool)
        r = self.create(input="Describe Paris as JSON.", max_output_tokens=30, text={"format": {"type": "json_object"}})
        if r.status == "completed":
            self.assertIsInstance(json.loads(r.output_text), dict)
        else:
            self.assertTrue(r.output_text.lstrip().startswith("{"))

    def test_refusals(self):
        with self.assertRaises(openai.BadRequestError) as ctx:
            self.create(input="hi", previous_response_id="resp_123")
        self.assertEqual(ctx.exception.body["param"], "previous_response_id")
        with self.assertRaises(openai.BadRequestError) as ctx:
            self.create(input="hi", tools=[{"type": "web_search"}])
        self.assertEqual(ctx.exception.body["param"], "tools[0].type")
        status, _, data = self.server.request("POST", "/responses", {"input": "hi", "max_output_tokens": 1})
        self.assertEqual(status, 200, data)  # the path without /v1

    def test_zz_pools_clean(self):
        assert_pools_clean(self, self.server)


if __name__ == "__main__":
    unittest.main(verbosity=2)
