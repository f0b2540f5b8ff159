#!/usr/bin/env python3
"""Reference token ids from llama.cpp (through llama-cpp-python) for the
tokenizer tests in tests/engine/tokenizer/.

Writes into tests/data/tokenizer/:
  corpus.json      the test strings (ASCII, accents, CJK, emoji, code,
                   whitespace runs, control-token look-alikes, numbers, ...)
  long_text.txt    a long prompt (the GPL-3 text as Debian ships it, verbatim
                   copying permitted) used for a whole-prompt check and speed
  <vocab>.json     for each vocabulary: ids for every corpus string with
                   add_bos (add_special) = true and special = false; ids with
                   special = true for the control-token look-alikes; ids of
                   long_text.txt

Each vocabulary is loaded with vocab_only = True. Run with the reference venv:
  .venv-ref/bin/python tests/reference/make_tokenizer_reference.py
Vocabularies: the default model (WEIR_MODEL or models/gemma-3-270m-q4_k_m.gguf)
and the llama.cpp vocab-only files that packaging/setup.sh extracts into
models/vocab/. "gpt-2-default" is the GPT-2 vocabulary with tokenizer.ggml.pre
rewritten to "default" (llama.cpp's fallback pre-tokenizer chain).
"""
import ctypes
import json
import os
import sys
import tempfile

import llama_cpp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "tokenizer")


def build_corpus():
    c = []
    # ASCII prose
    c += [
        "Hello world",
        "Hello, world!",
        "The quick brown fox jumps over the lazy dog.",
        "hello",
        " hello",
        "hello ",
        "HELLO WORLD",
        "Once upon a time, in a land far, far away, there lived a curious little robot.",
        "What is the capital of France? The capital of France is Paris.",
        "Can you explain how transformers work in machine learning?",
        "I'm sure you're right; they've said we'll see. He'd agree, wouldn't he?",
        "It's DON'T and I'M and YOU'RE and THEY'VE and WE'LL and HE'D.",
        "rock 'n' roll and O'Neil's 'quoted' words",
        "'s 't 're 've 'm 'll 'd",
        "A.B.C. e.g. i.e. etc.",
        "Mr. Smith went to Washington.",
        "This sentence ends with a question?",
        "Wow!!! Really?! No...",
        "semi;colon:colon,comma.period",
        "under_score and hyphen-ated and slash/separated",
        "camelCaseIdentifier and snake_case_identifier and SCREAMING_CASE",
        "email@example.com and https://example.org/path?q=1&r=two#frag",
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.",
        "a",
        "I",
        "x y z",
        "ab cd ef gh ij kl mn op qr st uv wx yz",
        "The year 2024 had 366 days.",
        "Summarize the following text in three bullet points.",
        "Translate to German: Good morning, how are you today?",
    ]
    # Accents and European languages
    c += [
        "café crème brûlée naïve façade",
        "Über Größe Straße Fußgänger",
        "¿Dónde está la biblioteca? ¡Aquí!",
        "São Paulo, Brasília, coração, informação",
        "Zażółć gęślą jaźń",
        "Příliš žluťoučký kůň úpěl ďábelské ódy",
        "Tiếng Việt có dấu: Xin chào thế giới",
        "İstanbul'da ılık bir gün; ĞÜŞİÖÇ ğüşıöç",
        "Ελληνικά: Καλημέρα κόσμε",
        "Русский текст: Привет, мир! Как дела?",
        "Íslenska: Þetta er próf, ðæ",
        "Ærø Øresund Åland",
        "e\u0301 (e + combining acute) vs \u00e9",
        "A\u030a vs \u00c5 vs \u212b",
        "ﬁ ligature ﬂ and ß and ẞ",
        "Dvořák, Janáček, Smetana",
        "l'été, aujourd'hui, c'est-à-dire",
        "Ça va? Très bien, merci.",
        "naïveté résumé coöperate",
        "Łódź Kraków Gdańsk Wrocław",
    ]
    # CJK
    c += [
        "你好，世界",
        "我爱自然语言处理。",
        "今天天气很好，我们去公园散步吧！",
        "日本語のテキスト：こんにちは世界",
        "カタカナとひらがなと漢字",
        "東京都渋谷区",
        "한국어 텍스트: 안녕하세요 세계",
        "대한민국의 수도는 서울입니다.",
        "中文English混合text测试",
        "全角数字１２３と全角英字ＡＢＣ",
        "「引用」『二重引用』【括弧】",
        "一二三四五六七八九十百千万亿",
        "繁體中文：電腦與網路",
        "日本語、句読点。改行\n次の行",
        "ｶﾀｶﾅ半角",
        "𠀀𠀁𠀂 (CJK Extension B)",
        "中 文 空 格",
        "漢字かな交じり文",
        "你好！Hello！こんにちは！안녕！",
        "㊗ ㍻ ㋿",
    ]
    # Other scripts
    c += [
        "العربية: مرحبا بالعالم",
        "עברית: שלום עולם",
        "हिन्दी: नमस्ते दुनिया",
        "ภาษาไทย: สวัสดีชาวโลก",
        "தமிழ்: வணக்கம் உலகம்",
        "ქართული: გამარჯობა მსოფლიო",
        "Հայերեն: Բարեւ աշխարհ",
        "አማርኛ: ሰላም ዓለም",
        "বাংলা: হ্যালো বিশ্ব",
        "ᚠᚢᚦᚨᚱᚲ runes",
    ]
    # Emoji
    c += [
        "😀",
        "Hello 😀 world",
        "👍🏽 thumbs up with skin tone",
        "👨‍👩‍👧‍👦 family ZWJ sequence",
        "🇫🇷🇩🇪🇯🇵 flags",
        "1️⃣ 2️⃣ keycaps",
        "❤️ vs ❤ (variation selector)",
        "🏳️‍🌈 rainbow flag",
        "🤖🧠💡🚀🔥",
        "emoji at end 🎉",
        "🎉emoji at start",
        "mixed😀text😀without😀spaces",
        "🧑🏿‍💻 technologist",
        "😀😀😀😀😀😀😀😀😀😀",
        "☃ ☕ ★ ♥ ✓ ✗",
    ]
    # Code
    c += [
        "def hello():\n    print(\"Hello, world!\")\n",
        "for i in range(10):\n\tif i % 2 == 0:\n\t\tcontinue\n",
        "int main(int argc, char** argv) {\n    return 0;\n}\n",
        "#include <iostream>\n#include <vector>\nstd::vector<int> v{1, 2, 3};",
        "{\"name\": \"weir\", \"version\": 1, \"tags\": [\"a\", \"b\"], \"ok\": true, \"none\": null}",
        "<html><body><div class=\"x\">Hi</div></body></html>",
        "SELECT id, name FROM users WHERE age >= 18 ORDER BY name;",
        "ls -la | grep -v '^d' && echo \"done\" > /tmp/out.txt 2>&1",
        "x = [a**2 for a in range(100) if a != 3]  # comment",
        "const f = (a, b) => a + b; let s = `template ${x}`;",
        "regex: ^\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*=\\s*(.+?)$",
        "| col1 | col2 |\n|------|------|\n| a    | b    |",
        "```python\nprint('hi')\n```",
        "if (a && b || !c) { x += 1; } else { x -= 1; }",
        "fn main() -> Result<(), Box<dyn Error>> { Ok(()) }",
        "    four spaces indent\n        eight spaces indent\n",
        "\tone tab\n\t\ttwo tabs\n\t\t\tthree tabs",
        "a->b; c::d; e=>f; g<=h; i>=j; k!=l; m==n;",
        "0x1F 0b1010 0o777 1_000_000 3.14e-10",
        "print(f\"{name!r:>10}\")",
    ]
    # Whitespace
    c += [
        "",
        " ",
        "  ",
        "   ",
        "    ",
        "\t",
        "\t\t",
        "\n",
        "\n\n",
        "\n\n\n",
        "\r\n",
        "\r\n\r\n",
        " \n ",
        "a  b",
        "a   b",
        "a\t\tb",
        "a \t b",
        "  leading spaces",
        "trailing spaces  ",
        "  both  ",
        "a \n b",
        "line1\nline2\nline3",
        "para1\n\npara2\n\n\npara3",
        " " * 40,
        "\n" * 50,
        "word" + " " * 37 + "word",
        "\t \n \t\n",
        "a\u00a0b (no-break space)",
        "a\u3000b (ideographic space)",
        "a\u2009b\u200ac (thin spaces)",
        "a\u200bb (zero width space)",
        "a\u2028b\u2029c (line/para separators)",
        "a\u0085b (next line)",
        "x\x0by\x0cz (vertical tab, form feed)",
        " \t\n\r\x0b\x0c",
    ]
    # Control-token look-alikes (and real ones of each vocabulary)
    c += [
        "<start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
        "<start_of_turn>user",
        "<end_of_turn>",
        "<eos>",
        "<bos>",
        "<pad>",
        "<unk>",
        "<mask>",
        "<unused0>",
        "[multimodal]",
        "<start_of_image>",
        "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>",
        "<|im_end|>",
        "<|eot_id|>",
        "<|begin_of_text|>",
        "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
        "<|endoftext|>",
        "<|end_of_text|>",
        "<s>",
        "</s>",
        "<s>[INST] Hi [/INST]",
        "<0x41>",
        "<start_of_tur",
        "<<eos>>",
        "<eos><eos>",
        " <eos> ",
        "text<end_of_turn>more text",
        "<bos><bos>double",
        "<|im_start|>",
        "before<|endoftext|>after",
        "<|reserved_special_token_0|>",
        "[PAD151646]",
        "<start_of_turn>model\n<end_of_turn><eos>",
    ]
    # Numbers
    c += [
        "0",
        "12",
        "123",
        "1234",
        "12345",
        "1234567",
        "12345678901234567890",
        "3.14159",
        "1,000,000",
        "-42",
        "1e-10",
        "+1 (555) 123-4567",
        "٣٤٥ (Arabic-Indic digits)",
        "Ⅻ Ⅳ (Roman numerals)",
        "½ ¾ ² ³",
        "１２３４５",
        "2024-01-15T10:30:00Z",
        "v1.2.3-beta.4",
        "100%",
        "$1,234.56",
    ]
    # Long words and runs
    c += [
        "a" * 300,
        "supercalifragilisticexpialidocious",
        "Pneumonoultramicroscopicsilicovolcanoconiosis",
        "Donaudampfschifffahrtsgesellschaftskapitän",
        "SGVsbG8sIFdvcmxkIQ==aGVsbG8gd29ybGQgdGhpcyBpcyBhIGJhc2U2NCBzdHJpbmc=",
        "d41d8cd98f00b204e9800998ecf8427e",
        "=" * 100,
        "-" * 80,
        "ab" * 120,
        "hello" * 50,
        "https://www.example.com/a/very/long/path/with/many/segments/and/a/query?param1=value1&param2=value2",
        "antidisestablishmentarianism",
    ]
    # Punctuation and symbols
    c += [
        "!!!",
        "?!",
        "...",
        "—",
        "«guillemets»",
        "“curly quotes” and ‘single’",
        "(parens) [brackets] {braces}",
        "$100 + €50 = £? ¥ ₹ ₿",
        "a+b=c",
        "<=> ^~| `backtick`",
        "@user #hashtag",
        "∑∫√∞≠≤≥±×÷",
        "→ ← ↑ ↓ ⇒ ⇔",
        "┌─┐│└─┘",
        "©®™§¶†‡•",
        "...---...",
        "&amp; &lt; &gt;",
        "\\n \\t \\\\",
        "'single' \"double\"",
        "#!/bin/bash",
    ]
    # Characters with tokenizer meaning
    c += [
        "\u2581",
        "\u2581hello\u2581world",
        "Ġhello Ċ",
        "a\x00b (NUL)",
        "\x01\x02\x7f control chars",
        "\ufffd replacement char",
        "\ufeffBOM at start",
        "\U0001F600\U0001F600 astral",
        "\U000E0041 tag char",
        "\U0010FFFD private use",
    ]
    # Prompt-like
    c += [
        "You are a helpful assistant.\n\nUser: What's 2+2?\nAssistant: 4",
        "Q: Who wrote Hamlet?\nA: William Shakespeare.",
        "Write a haiku about the sea:\n",
        "### Instruction:\nList three colors.\n\n### Response:\n",
        "Step 1: Preheat the oven to 180°C.\nStep 2: Mix flour and sugar.",
        "Résumé of José: 5 years at Zürich AG, fluent in 日本語 and Español.",
        "The temperature is -5°C (23°F) today.",
        "Title: \"A Tale\"\nAuthor: Unknown\n\nChapter 1\n\nIt was a dark and stormy night.",
        "  Indented first line\nnext line",
        "End with newline\n",
    ]
    return c


# Indices of strings also tokenized with special = true: every string with a
# '<' or '[' in it (the control-token look-alikes and a few others).
def special_indices(corpus):
    return [i for i, s in enumerate(corpus) if ("<" in s or "[" in s) and len(s) < 200]


@llama_cpp.llama_log_callback
def _QUIET(level, text, user_data):  # keeps llama.cpp's loader quiet; module-level so it is never freed
    pass


class Vocab:
    def __init__(self, path):
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self.model = llama_cpp.llama_model_load_from_file(path.encode(), params)
        if not self.model:
            raise RuntimeError("cannot load " + path)
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)

    def tokenize(self, text, add_special, parse_special):
        data = text.encode("utf-8")
        n_max = len(data) + 16
        buf = (llama_cpp.llama_token * n_max)()
        n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, n_max, add_special, parse_special)
        if n < 0:
            raise RuntimeError("token buffer too small")
        return [int(buf[i]) for i in range(n)]

    def close(self):
        llama_cpp.llama_model_free(self.model)


def rewrite_pre(src, dst, pre):
    """Copies a vocab-only GGUF with tokenizer.ggml.pre replaced."""
    import gguf
    reader = gguf.GGUFReader(src)
    arch = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(dst, arch)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        value = field.contents()
        vtype = field.types[0]
        if name == "tokenizer.ggml.pre":
            value = pre
        if vtype == gguf.GGUFValueType.ARRAY:
            writer.add_key_value(name, value, vtype, sub_type=field.types[-1])
        else:
            writer.add_key_value(name, value, vtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()


def main():
    corpus = build_corpus()
    assert len(corpus) >= 220, len(corpus)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "corpus.json"), "w", encoding="utf-8") as f:
        # ASCII escapes: Qt's JSON parser drops a raw U+FEFF at the start of a string.
        json.dump(corpus, f, ensure_ascii=True, indent=0)
        f.write("\n")
    long_path = os.path.join(OUT, "long_text.txt")
    if not os.path.exists(long_path):
        with open("/usr/share/common-licenses/GPL-3", encoding="utf-8") as src:
            text = src.read()
        with open(long_path, "w", encoding="utf-8") as f:
            f.write(text)
    with open(long_path, encoding="utf-8") as f:
        long_text = f.read()

    model = os.environ.get("WEIR_MODEL", os.path.join(ROOT, "models", "gemma-3-270m-q4_k_m.gguf"))
    vocab_dir = os.path.join(ROOT, "models", "vocab")
    tmp = tempfile.mkdtemp()
    gpt2_default = os.path.join(tmp, "ggml-vocab-gpt-2-default.gguf")
    rewrite_pre(os.path.join(vocab_dir, "ggml-vocab-gpt-2.gguf"), gpt2_default, "default")
    vocabs = [
        ("gemma3", model),
        ("llama-bpe", os.path.join(vocab_dir, "ggml-vocab-llama-bpe.gguf")),
        ("qwen2", os.path.join(vocab_dir, "ggml-vocab-qwen2.gguf")),
        ("gpt-2", os.path.join(vocab_dir, "ggml-vocab-gpt-2.gguf")),
        ("gpt-2-default", gpt2_default),
        ("llama-spm", os.path.join(vocab_dir, "ggml-vocab-llama-spm.gguf")),
    ]
    llama_cpp.llama_backend_init()
    llama_cpp.llama_log_set(_QUIET, ctypes.c_void_p(0))
    specials = special_indices(corpus)
    for name, path in vocabs:
        v = Vocab(path)
        ref = {
            "vocab": name,
            "file": os.path.basename(path),
            "llama_cpp_python": llama_cpp.__version__,
            "plain": [v.tokenize(s, True, False) for s in corpus],
            "special": {str(i): v.tokenize(corpus[i], True, True) for i in specials},
            "no_bos": {str(i): v.tokenize(corpus[i], False, False) for i in range(0, len(corpus), 7)},
            "long": v.tokenize(long_text, True, False),
        }
        v.close()
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(ref, f, separators=(",", ":"))
            f.write("\n")
        print(f"{name}: {len(corpus)} strings, {len(specials)} with special, long text {len(ref['long'])} tokens")


if __name__ == "__main__":
    sys.exit(main())
