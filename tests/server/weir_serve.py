"""Starts `weir-cli serve` for the tests and talks raw HTTP to it.

The server is started on port 0 (a free port); it prints
"listening on http://127.0.0.1:PORT/v1" once it accepts connections.
Tests that cannot run (no model, no openai package) exit with 77, which
CTest reports as skipped.
"""
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

SKIP = 77


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


def paths():
    bin_dir = os.environ.get("WEIR_BIN_DIR", "")
    model = os.environ.get("WEIR_MODEL", "")
    cli = os.path.join(bin_dir, "weir-cli")
    if not model or not os.path.exists(model):
        skip(f"the default model is missing ({model or 'WEIR_MODEL not set'})")
    try:
        import openai  # noqa: F401
    except ImportError:
        skip("the openai package is not installed in this python")
    if not os.path.exists(cli):
        raise SystemExit(f"weir-cli not found at {cli}")
    return cli, model


class Server:
    def __init__(self, *args, api_key=None, model=None):
        cli, default_model = paths()
        model = model or default_model
        self.api_key = api_key
        cmd = [cli, "serve", "-m", model, "--port", "0", "--threads", "2", *args]
        if api_key:
            cmd += ["--api-key", api_key]
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.wait(timeout=30)
            raise RuntimeError(f"weir-cli serve did not start ({' '.join(cmd)}):\n{self.stderr()}")
        self.base_url = line.split()[-1].strip()          # http://127.0.0.1:PORT/v1
        self.host, port = self.base_url.split("//")[1].split("/")[0].rsplit(":", 1)
        self.port = int(port)

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        """SIGTERM; returns the exit code (0 when it shut down cleanly)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode

    # ------------------------------------------------------------ raw HTTP

    def headers(self, key=True, extra=None):
        h = {"Content-Type": "application/json"}
        if key and self.api_key:
            h["Authorization"] = f"Bearer {self.api_key}"
        h.update(extra or {})
        return h

    def request(self, method, path, body=None, key=True, headers=None, timeout=600):
        """(status, headers dict with lower-case names, body bytes)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            elif isinstance(body, str):
                body = body.encode()
            conn.request(method, path, body=body, headers=self.headers(key, headers))
            r = conn.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        finally:
            conn.close()

    def json(self, method, path, body=None, key=True):
        status, _, data = self.request(method, path, body, key)
        return status, json.loads(data)

    def cache_status(self):
        status, data = self.json("GET", "/v1/cache/status")
        assert status == 200, data
        return data

    def wait_until(self, predicate, what, limit_seconds=120):
        """Polls /v1/cache/status until predicate(status) holds. The limit only
        guards against a hang; no test depends on how fast this happens."""
        deadline = time.monotonic() + limit_seconds
        while True:
            st = self.cache_status()
            if predicate(st):
                return st
            if time.monotonic() > deadline:
                raise AssertionError(f"gave up waiting for {what}; last status: {json.dumps(st)[:2000]}")
            time.sleep(0.05)


def error_of(body_bytes):
    """The error object of an OpenAI-style error body, checking its shape."""
    doc = json.loads(body_bytes)
    assert set(doc) == {"error"}, doc
    e = doc["error"]
    assert isinstance(e.get("message"), str) and e["message"], e
    assert isinstance(e.get("type"), str), e
    assert "param" in e and (e["param"] is None or isinstance(e["param"], str)), e
    assert "code" in e and (e["code"] is None or isinstance(e["code"], str)), e
    return e


def assert_pools_clean(test, server):
    """Idle engine: no violation; once the prefix cache is dropped, every page is free."""
    st = server.wait_until(lambda s: s["running"] == 0 and s["waiting"] == 0, "the engine to go idle")
    test.assertEqual(st["violations"], 0, st["violation_details"])
    test.assertGreater(st["integrity_checks"], 0)
    status, cleared = server.json("POST", "/v1/cache/clear")
    test.assertEqual(status, 200)
    for pool in ("full", "window"):
        p = cleared[pool]
        test.assertEqual(p["owned_tokens"], 0, cleared)
        test.assertEqual(p["cached_tokens"], 0, cleared)
        test.assertEqual(p["free_tokens"], p["capacity_tokens"], f"leaked pages in the {pool} pool: {cleared}")
    test.assertEqual(cleared["violations"], 0, cleared["violation_details"])
    test.assertEqual(cleared["requests"], [])


def chat_reply(client, stream=False, **kw):
    """One chat completion as (text, [(tool name, arguments text)], finish reason), streamed or not."""
    if not stream:
        c = client.chat.completions.create(**kw).choices[0]
        return (c.message.content or "", [(t.function.name, t.function.arguments) for t in c.message.tool_calls or []],
                c.finish_reason)
    text, calls, finish = "", {}, None
    for chunk in client.chat.completions.create(stream=True, **kw):
        for c in chunk.choices:
            text += c.delta.content or ""
            for t in c.delta.tool_calls or []:
                name, args = calls.get(t.index, ("", ""))
                calls[t.index] = (name + (t.function.name or ""), args + (t.function.arguments or ""))
            finish = c.finish_reason or finish
    return text, [calls[i] for i in sorted(calls)], finish


class ServedTestCase(unittest.TestCase):
    """A test class whose setUpClass starts `cls.server` (a Server); at the end
    the server is stopped and must exit cleanly (its stderr is shown if not)."""

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        if code != 0:
            print(cls.server.stderr())
        assert code == 0, f"weir-cli serve exited with {code}"
