#!/usr/bin/env python3
"""The endpoint under load, on one engine with 4 running requests at most and
a wait queue of 6:
  - a full queue answers 503 with Retry-After; clients that disconnect have
    their requests cancelled (running and waiting alike) and pages freed;
  - 16 concurrent streaming clients x 8 requests: every request completes or
    gets a clean 503; afterwards the pools show no violation and no leaked page.
The engine checks pool integrity after every step (--check-integrity).
"""
import http.client
import json
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from weir_serve import Server, ServedTestCase, assert_pools_clean, error_of, paths  # noqa: E402

paths()
import openai  # noqa: E402

MODEL = "gemma-3-270m-q4_k_m"
MAX_RUNNING = 4
MAX_WAITING = 6
SYSTEM = "You are a concise assistant. Answer every question in a few words. " * 3


class ServerLoadTest(ServedTestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--max-running-requests", str(MAX_RUNNING), "--max-waiting", str(MAX_WAITING),
                            "--max-context", "1024", "--check-integrity")

    def stats(self):
        status, s = self.server.json("GET", "/v1/stats")
        self.assertEqual(status, 200)
        return s

    def test_1_queue_full_and_disconnects(self):
        before = self.stats()
        # Ten long streaming requests that are never read: four run, six wait.
        # One at a time, each seen by the engine before the next is sent.
        conns = []
        for i in range(MAX_RUNNING + MAX_WAITING):
            c = http.client.HTTPConnection(self.server.host, self.server.port, timeout=600)
            body = json.dumps({"model": MODEL, "stream": True, "max_tokens": 900, "temperature": 0.7, "seed": i,
                               "messages": [{"role": "user", "content": f"Tell a very long story number {i}."}]})
            c.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
            conns.append(c)
            self.server.wait_until(lambda s, n=i + 1: s["running"] + s["waiting"] == n, f"request {i + 1} to be queued")
        st = self.server.wait_until(lambda s: s["running"] == MAX_RUNNING and s["waiting"] == MAX_WAITING,
                                    "4 running and 6 waiting requests")
        self.assertEqual(sorted(r["client"].split(":")[0] for r in st["requests"]), ["api"] * 10)

        # One more: the queue is full.
        status, headers, data = self.server.request(
            "POST", "/v1/chat/completions",
            {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4})
        self.assertEqual(status, 503)
        self.assertGreaterEqual(int(headers["retry-after"]), 1)
        e = error_of(data)
        self.assertEqual(e["code"], "queue_full")
        with self.assertRaises(openai.APIStatusError) as ctx:
            openai.OpenAI(base_url=self.server.base_url, api_key="x", max_retries=0).chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=4, stream=True)
        self.assertEqual(ctx.exception.status_code, 503)

        # The clients hang up: every request is cancelled, running or waiting.
        for c in conns:
            c.sock.close()
            c.close()
        self.server.wait_until(lambda s: s["running"] == 0 and s["waiting"] == 0 and not s["requests"],
                               "the disconnected requests to be cancelled")
        after = self.stats()
        self.assertEqual(after["requests"]["cancelled"] - before["requests"]["cancelled"], 10)
        self.assertGreaterEqual(after["requests"]["rejected_503"] - before["requests"]["rejected_503"], 2)
        assert_pools_clean(self, self.server)

    def test_2_sixteen_streaming_clients(self):
        before = self.stats()
        outcomes, problems = [], []
        lock = threading.Lock()

        def client(n):
            api = openai.OpenAI(base_url=self.server.base_url, api_key="x", max_retries=0, timeout=600)
            for k in range(8):
                try:
                    stream = api.chat.completions.create(
                        model=MODEL, stream=True, max_tokens=6, temperature=0.8, seed=n * 100 + k,
                        stream_options={"include_usage": True},
                        messages=[{"role": "system", "content": SYSTEM},
                                  {"role": "user", "content": f"Client {n}, question {k}: name a colour."}])
                    finish, usage, text = None, None, ""
                    for ch in stream:
                        if ch.choices:
                            text += ch.choices[0].delta.content or ""
                            finish = ch.choices[0].finish_reason or finish
                        if ch.usage:
                            usage = ch.usage
                    ok = finish in ("stop", "length") and usage is not None and 1 <= usage.completion_tokens <= 6
                    with lock:
                        outcomes.append("ok" if ok else "bad")
                        if not ok:
                            problems.append(f"client {n}/{k}: finish={finish} usage={usage} text={text!r}")
                except openai.APIStatusError as e:
                    clean = False
                    try:
                        clean = (e.status_code == 503 and int(e.response.headers["retry-after"]) >= 1 and
                                 error_of(e.response.content)["code"] == "queue_full")
                    except Exception as inner:  # noqa: BLE001
                        problems.append(f"client {n}/{k}: unreadable error: {inner}")
                    with lock:
                        outcomes.append("503" if clean else "bad")
                        if not clean:
                            problems.append(f"client {n}/{k}: HTTP {e.status_code}: {e.response.content[:300]!r}")
                except Exception as e:  # noqa: BLE001
                    with lock:
                        outcomes.append("bad")
                        problems.append(f"client {n}/{k}: {type(e).__name__}: {e}")

        threads = [threading.Thread(target=client, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(len(outcomes), 128)
        self.assertEqual(problems, [])
        succeeded = outcomes.count("ok")
        rejected = outcomes.count("503")
        print(f"load: {succeeded} completed, {rejected} answered 503", flush=True)
        self.assertGreater(succeeded, 0)
        self.assertTrue(self.server.alive())

        after = self.stats()
        self.assertEqual(after["requests"]["succeeded"] - before["requests"]["succeeded"], succeeded)
        self.assertEqual(after["requests"]["rejected_503"] - before["requests"]["rejected_503"], rejected)
        self.assertGreater(after["throughput"]["generated_tokens_per_second"], 0)
        self.assertGreater(after["latency"]["time_to_first_token_ms"]["samples"], 0)
        assert_pools_clean(self, self.server)


if __name__ == "__main__":
    unittest.main(verbosity=2)
