"""A real client of the app's endpoint: the official `openai` package streams
one chat completion from BASE_URL and prints what it got as one JSON line.

Used by the end-to-end test while the app's own conversations generate.
Exit 0: the stream had several content chunks, a finish reason and usage;
1: it did not; 77: the openai package is missing (the test then skips).
"""
import json
import sys
import time

try:
    import openai
except ImportError:
    print(json.dumps({"skipped": "the openai package is not installed"}))
    sys.exit(77)


def main():
    base_url = sys.argv[1]
    max_tokens = int(sys.argv[2]) if len(sys.argv) > 2 else 48
    client = openai.OpenAI(base_url=base_url, api_key="not-needed", timeout=600)
    model = client.models.list().data[0].id
    started = time.monotonic()
    first = None
    chunks, text, finish, usage = 0, "", None, None
    stream = client.chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": "Answer briefly."},
                  {"role": "user", "content": "Name three rivers in Europe."}],
        max_tokens=max_tokens, temperature=0, seed=1, stream=True,
        stream_options={"include_usage": True})
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage.model_dump()
        for choice in chunk.choices:
            if choice.delta.content:
                if first is None:
                    first = time.monotonic() - started
                chunks += 1
                text += choice.delta.content
            if choice.finish_reason:
                finish = choice.finish_reason
    result = {"model": model, "chunks": chunks, "text": text, "finish_reason": finish, "usage": usage,
              "first_token_s": first, "total_s": time.monotonic() - started}
    print(json.dumps(result))
    ok = chunks >= 2 and finish in ("stop", "length") and usage and usage["completion_tokens"] > 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
