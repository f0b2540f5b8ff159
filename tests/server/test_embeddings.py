#!/usr/bin/env python3
"""OpenAI embeddings (/v1/embeddings) through the official `openai` client
against `weir-cli serve`, on Gemma 3 270M and SmolLM2-135M: vectors of the
model's width and unit length, deterministic, identical texts at cosine 1,
a batch equal to its inputs one by one, token-id inputs, base64, usage, and
`dimensions` refused.
"""
import base64
import math
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from weir_serve import Server, ServedTestCase, assert_pools_clean, paths  # noqa: E402

_, GEMMA_PATH = paths()  # skips (77) without the model or the client
import openai  # noqa: E402

SMOL_PATH = os.path.join(os.environ.get("WEIR_SOURCE_DIR", ""), "models", "smollm2-135m-instruct-q4_1.gguf")
TEXTS = ["The cat sat on the mat.", "Quarterly revenue grew by four percent.", "The cat sat on the mat."]


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


class EmbeddingsCase:
    MODEL_PATH = None
    WIDTH = None

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(cls.MODEL_PATH):
            raise unittest.SkipTest(f"{cls.MODEL_PATH} is missing")
        cls.server = Server("--max-running-requests", "4", "--max-context", "1024", model=cls.MODEL_PATH)
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="none", max_retries=0, timeout=300)
        cls.model = cls.client.models.list().data[0].id

    def embed(self, inputs, **kw):
        return self.client.embeddings.create(model=self.model, input=inputs, **kw)

    def test_unit_length_deterministic_and_batched(self):
        batch = self.embed(TEXTS)
        self.assertEqual([d.index for d in batch.data], [0, 1, 2])
        vectors = [d.embedding for d in batch.data]
        for v in vectors:
            self.assertEqual(len(v), self.WIDTH)
            self.assertAlmostEqual(math.sqrt(sum(x * x for x in v)), 1.0, places=4)
        self.assertAlmostEqual(cosine(vectors[0], vectors[2]), 1.0, places=5)  # identical texts
        self.assertLess(cosine(vectors[0], vectors[1]), 0.999)
        for text, v in zip(TEXTS, vectors):
            alone = self.embed(text).data[0].embedding
            self.assertLess(max(abs(x - y) for x, y in zip(alone, v)), 1e-4)
        again = self.embed(TEXTS[0]).data[0].embedding
        self.assertLess(max(abs(x - y) for x, y in zip(again, vectors[0])), 1e-5)
        self.assertEqual(batch.usage.prompt_tokens, batch.usage.total_tokens)
        self.assertGreater(batch.usage.prompt_tokens, 10)
        self.assertEqual(batch.model_extra.get("pooling"), "last")

    def test_many_inputs_keep_their_order(self):
        # More inputs than the server puts in the engine at once (8): all come back, in order.
        texts = [f"Item number {i} of the list." for i in range(20)]
        got = self.embed(texts).data
        self.assertEqual([d.index for d in got], list(range(20)))
        for i in (0, 9, 19):
            alone = self.embed(texts[i]).data[0].embedding
            self.assertLess(max(abs(x - y) for x, y in zip(alone, got[i].embedding)), 1e-4)
        self.assertLess(cosine(got[0].embedding, got[19].embedding), 0.99999)

    def test_token_ids_and_base64(self):
        ids = [[5, 200, 300, 400], [5, 200, 300, 400], [7, 8, 9]]
        got = self.embed(ids).data
        self.assertAlmostEqual(cosine(got[0].embedding, got[1].embedding), 1.0, places=5)
        single = self.embed(ids[2]).data[0].embedding
        self.assertLess(max(abs(x - y) for x, y in zip(single, got[2].embedding)), 1e-4)
        status, _, data = self.server.request("POST", "/v1/embeddings",
                                              {"input": TEXTS[1], "encoding_format": "base64"})
        self.assertEqual(status, 200, data)
        import json
        raw = base64.b64decode(json.loads(data)["data"][0]["embedding"])
        floats = struct.unpack(f"<{len(raw) // 4}f", raw)
        self.assertEqual(len(floats), self.WIDTH)
        plain = self.embed(TEXTS[1]).data[0].embedding
        self.assertLess(max(abs(x - y) for x, y in zip(floats, plain)), 1e-5)

    def test_refusals(self):
        with self.assertRaises(openai.BadRequestError) as ctx:
            self.embed("hello", dimensions=64)
        self.assertEqual(ctx.exception.body["param"], "dimensions")
        with self.assertRaises(openai.BadRequestError) as ctx:
            self.embed(["fine", ""])
        self.assertEqual(ctx.exception.body["param"], "input[1]")

    def test_zz_pools_clean(self):
        assert_pools_clean(self, self.server)


class GemmaEmbeddingsTest(EmbeddingsCase, ServedTestCase):
    MODEL_PATH = GEMMA_PATH
    WIDTH = 640


class SmolEmbeddingsTest(EmbeddingsCase, ServedTestCase):
    MODEL_PATH = SMOL_PATH
    WIDTH = 576


if __name__ == "__main__":
    unittest.main(verbosity=2)
