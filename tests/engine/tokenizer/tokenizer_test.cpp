// Tokenizer tests. Token ids are checked against llama.cpp's for a 255-string
// corpus on six vocabularies (reference data from
// tests/reference/make_tokenizer_reference.py); the rest checks behaviour on
// small hand-made vocabularies whose expected output follows from the rules.
#include <QtTest>

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <ctime>
#include <map>
#include <memory>

#include "engine/gguf/gguf_file.h"
#include "engine/tokenizer/pretokenizer.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"
#include "weir/base/error.h"

using weir::TokenId;
using weir::Tokenizer;
using weir::TokenType;
using weir::Vocabulary;

namespace {

QString dataDir() { return qEnvironmentVariable("WEIR_TEST_DATA") + "/tokenizer"; }
QString sourceDir() { return qEnvironmentVariable("WEIR_SOURCE_DIR"); }

// Where each reference vocabulary lives; "gpt-2-default" is the GPT-2 file
// with its pre-tokenizer switched to "default" (as the reference script does).
QString vocabPath(const QString& name) {
    if (name == "gemma3") return qEnvironmentVariable("WEIR_MODEL");
    const QString file = name == "gpt-2-default" ? "gpt-2" : name;
    return sourceDir() + "/models/vocab/ggml-vocab-" + file + ".gguf";
}

bool validUtf8(const std::string& s) { return weir::tok::sanitizeUtf8(s) == s; }

std::vector<TokenId> idsFromJson(const QJsonValue& v) {
    std::vector<TokenId> ids;
    for (const QJsonValue& x : v.toArray()) ids.push_back(TokenId(x.toInt()));
    return ids;
}

QString showIds(const std::vector<TokenId>& ids) {
    QStringList parts;
    for (TokenId id : ids) parts << QString::number(id);
    return "[" + parts.join(",") + "]";
}

// A tiny SentencePiece vocabulary: the usual three specials, 256 byte tokens,
// then pieces with scores chosen so the merge order is known.
Vocabulary smallSpm() {
    Vocabulary v;
    v.model = "llama";
    auto add = [&](const std::string& text, float score, TokenType type) {
        v.tokens.push_back(text);
        v.scores.push_back(score);
        v.types.push_back(type);
        return TokenId(v.tokens.size() - 1);
    };
    add("<unk>", 0, TokenType::Unknown);       // 0
    add("<s>", 0, TokenType::Control);         // 1
    add("</s>", 0, TokenType::Control);        // 2
    for (int b = 0; b < 256; ++b) {            // 3..258
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        add(name, 0, TokenType::Byte);
    }
    for (const char* c : {"\xE2\x96\x81", "h", "e", "l", "o", "w", "r", "d"}) add(c, -10, TokenType::Normal);  // 259..266
    add("he", -1, TokenType::Normal);          // 267
    add("ll", -2, TokenType::Normal);          // 268
    add("hell", -3, TokenType::Normal);        // 269
    add("hello", -4, TokenType::Normal);       // 270
    add("\xE2\x96\x81w", -5, TokenType::Normal);  // 271 "▁w"
    add("or", -6, TokenType::Normal);          // 272
    add("\xE2\x96\x81wor", -7, TokenType::Normal);  // 273
    add("<ctl>", 0, TokenType::Control);       // 274
    add("<ud>", 0, TokenType::UserDefined);    // 275
    add("<ctl><ud>", 0, TokenType::Control);   // 276 (longer: taken first)
    add("<end_of_turn>", 0, TokenType::Normal);  // 277: forced to Control (end of generation)
    v.bos = 1;
    v.eos = 2;
    v.unk = 0;
    v.addBos = true;
    return v;
}

} // namespace

class TokenizerTest : public QObject {
    Q_OBJECT

    // Loaded GGUF tokenizers, by reference name (nullptr if the file is absent).
    std::map<QString, std::unique_ptr<Tokenizer>> tokenizers_;
    QStringList corpus_;

    Tokenizer* load(const QString& name) {
        auto it = tokenizers_.find(name);
        if (it != tokenizers_.end()) return it->second.get();
        std::unique_ptr<Tokenizer> tok;
        const QString path = vocabPath(name);
        if (!path.isEmpty() && QFile::exists(path)) {
            QElapsedTimer t;
            t.start();
            auto file = weir::gguf::GgufFile::open(path.toStdString());
            const qint64 openMs = t.elapsed();
            Vocabulary v = Vocabulary::fromGguf(*file);
            if (name == "gpt-2-default") v.pre = "default";
            tok = Tokenizer::fromVocabulary(std::move(v));
            qInfo("%s: %d tokens; GGUF parsed in %lld ms, tokenizer built in %lld ms", qPrintable(name),
                  tok->vocabSize(), openMs, t.elapsed() - openMs);
        }
        return (tokenizers_[name] = std::move(tok)).get();
    }

    static QStringList referenceNames() {
        return {"gemma3", "llama-bpe", "qwen2", "gpt-2", "gpt-2-default", "llama-spm"};
    }
    static void addVocabRows() {
        QTest::addColumn<QString>("vocab");
        for (const QString& n : referenceNames()) QTest::newRow(n.toUtf8().constData()) << n;
    }

private slots:
    void initTestCase() {
        QFile f(dataDir() + "/corpus.json");
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable("missing " + f.fileName()));
        for (const QJsonValue& v : QJsonDocument::fromJson(f.readAll()).array()) corpus_ << v.toString();
        QVERIFY(corpus_.size() >= 220);
    }

    // --- hand-made vocabularies ---------------------------------------------

    void spmMergesByScore() {
        auto tok = Tokenizer::fromVocabulary(smallSpm());
        // "hello": he(-1) first, then ll(-2), then hell(-3), then hello(-4).
        QCOMPARE(tok->encode("hello", false, false), (std::vector<TokenId>{270}));
        // " world": "▁w"(-5) and "or"(-6) merge, "▁wor"(-7) joins them; l, d stay.
        QCOMPARE(tok->encode(" world", false, false), (std::vector<TokenId>{273, 262, 266}));
        QCOMPARE(tok->encode("hello", true, false), (std::vector<TokenId>{1, 270}));
        QCOMPARE(tok->encode("", true, false), (std::vector<TokenId>{1}));
        QCOMPARE(tok->encode("", false, false), (std::vector<TokenId>{}));
    }

    void spmByteFallback() {
        auto tok = Tokenizer::fromVocabulary(smallSpm());
        // "é" is not a piece: its two UTF-8 bytes become <0xC3> <0xA9>.
        QCOMPARE(tok->encode("h\xC3\xA9", false, false), (std::vector<TokenId>{260, 3 + 0xC3, 3 + 0xA9}));
        QCOMPARE(tok->decode(tok->encode("h\xC3\xA9", false, false)), std::string("h\xC3\xA9"));
        QCOMPARE(tok->tokenBytes(3 + 0x41), std::string("A"));
        QCOMPARE(tok->tokenBytes(259), std::string(" "));
    }

    void spmAddSpacePrefix() {
        Vocabulary v = smallSpm();
        v.addSpacePrefix = true;
        auto tok = Tokenizer::fromVocabulary(std::move(v));
        // "world" is tokenized as " world"; after a special token the prefix comes back.
        QCOMPARE(tok->encode("world", false, false), (std::vector<TokenId>{273, 262, 266}));
        QCOMPARE(tok->encode("<ud>world", false, false), (std::vector<TokenId>{275, 273, 262, 266}));
        QCOMPARE(tok->decode(tok->encode("world", true, false)), std::string("world"));
        QCOMPARE(tok->decode(tok->encode(" world", true, false)), std::string(" world"));
    }

    void specialTokensOnlyWhenAsked() {
        auto tok = Tokenizer::fromVocabulary(smallSpm());
        const std::vector<TokenId> plain = tok->encode("<ctl>", false, false);
        QVERIFY(std::find(plain.begin(), plain.end(), 274) == plain.end());
        QVERIFY(!plain.empty());
        QCOMPARE(tok->decode(plain), std::string("<ctl>"));
        QCOMPARE(tok->encode("<ctl>", false, true), (std::vector<TokenId>{274}));
        // User-defined tokens match even in user text.
        QCOMPARE(tok->encode("<ud>", false, false), (std::vector<TokenId>{275}));
        // Longest first: "<ctl><ud>" wins over "<ctl>" + "<ud>".
        QCOMPARE(tok->encode("<ctl><ud><ud>", false, true), (std::vector<TokenId>{276, 275}));
        QCOMPARE(tok->encode("he<ud>he", false, false), (std::vector<TokenId>{267, 275, 267}));
        // Control tokens are hidden unless asked for.
        QCOMPARE(tok->tokenBytes(274), std::string());
        QCOMPARE(tok->tokenBytes(274, true), std::string("<ctl>"));
        QCOMPARE(tok->tokenBytes(275), std::string("<ud>"));
        QVERIFY(tok->isControl(1));
        QVERIFY(tok->isControl(0));
        QVERIFY(!tok->isControl(275));
        QVERIFY(!tok->isControl(270));
    }

    void endOfGenerationByName() {
        auto tok = Tokenizer::fromVocabulary(smallSpm());
        QCOMPARE(tok->endOfGeneration(), (std::vector<TokenId>{2, 277}));
        QVERIFY(tok->isEndOfGeneration(2));
        QVERIFY(tok->isEndOfGeneration(277));
        QVERIFY(!tok->isEndOfGeneration(1));
        // Forced to Control: user text cannot produce it.
        QVERIFY(tok->isControl(277));
        const auto ids = tok->encode("<end_of_turn>", false, false);
        QVERIFY(std::find(ids.begin(), ids.end(), 277) == ids.end());
        QCOMPARE(tok->encode("<end_of_turn>", false, true), (std::vector<TokenId>{277}));
    }

    void bpeMergesByRank() {
        // Byte-level alphabet for "a", "b", "c", " " (Ġ = U+0120 stands for the space byte).
        Vocabulary v;
        v.model = "gpt2";
        v.pre = "gpt-2";
        v.tokens = {"a", "b", "c", "\xC4\xA0", "ab", "bc", "abc", "\xC4\xA0" "a"};
        v.merges = {"b c", "a b", "a bc", "\xC4\xA0 a"};
        auto tok = Tokenizer::fromVocabulary(v);
        // "abc": "b c" has the better rank, then "a bc".
        QCOMPARE(tok->encode("abc", false, false), (std::vector<TokenId>{6}));
        // "abab": words are not split; "a b" twice.
        QCOMPARE(tok->encode("abab", false, false), (std::vector<TokenId>{4, 4}));
        // " a" is one word (GPT-2 regex: optional space + letters), then "Ġa".
        QCOMPARE(tok->encode("c a", false, false), (std::vector<TokenId>{2, 7}));
        QCOMPARE(tok->decode({2, 7}), std::string("c a"));
        // Without "ignore merges", a word that is a token still goes through merges:
        v.tokens.push_back("ac");  // 8: never produced, no merge makes it
        auto tok2 = Tokenizer::fromVocabulary(v);
        QCOMPARE(tok2->encode("ac", false, false), (std::vector<TokenId>{0, 2}));
        // ... while the Llama 3 pre-tokenizer takes a whole-word token directly.
        v.pre = "llama-bpe";
        auto tok3 = Tokenizer::fromVocabulary(v);
        QCOMPARE(tok3->encode("ac", false, false), (std::vector<TokenId>{8}));
    }

    void badVocabulariesAreErrors() {
        Vocabulary v = smallSpm();
        v.model = "bert";
        QVERIFY_THROWS_EXCEPTION(weir::Error, Tokenizer::fromVocabulary(v));
        v = smallSpm();
        v.types.pop_back();
        QVERIFY_THROWS_EXCEPTION(weir::Error, Tokenizer::fromVocabulary(v));
        v = smallSpm();
        v.tokens.clear();
        v.types.clear();
        v.scores.clear();
        QVERIFY_THROWS_EXCEPTION(weir::Error, Tokenizer::fromVocabulary(v));
        Vocabulary b;
        b.model = "gpt2";
        b.pre = "some-future-regex";
        b.tokens = {"a"};
        try {
            Tokenizer::fromVocabulary(b);
            QFAIL("an unknown pre-tokenizer must be an error");
        } catch (const weir::Error& e) {
            QVERIFY(QString(e.what()).contains("some-future-regex"));
        }
    }

    void preTokenizerSplits_data() {
        QTest::addColumn<QString>("pre");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("words");
        // Expected splits written from the regexes in pretokenizer.h.
        QTest::newRow("llama3 words") << "llama-bpe" << "Hello world" << QStringList{"Hello", " world"};
        QTest::newRow("llama3 digits") << "llama-bpe" << "1234567" << QStringList{"123", "456", "7"};
        QTest::newRow("llama3 contraction") << "llama-bpe" << "I'M ok" << QStringList{"I", "'M", " ok"};
        QTest::newRow("llama3 spaces") << "llama-bpe" << "a   b" << QStringList{"a", "  ", " b"};
        QTest::newRow("llama3 newlines") << "llama-bpe" << "a \n\n b" << QStringList{"a", " \n\n", " b"};
        QTest::newRow("llama3 punct") << "llama-bpe" << "x ...\n!" << QStringList{"x", " ...\n", "!"};
        QTest::newRow("llama3 trailing") << "llama-bpe" << "a  " << QStringList{"a", "  "};
        QTest::newRow("qwen2 digits") << "qwen2" << "x123" << QStringList{"x", "1", "2", "3"};
        QTest::newRow("gpt2 digits") << "gpt-2" << "ab 123 cd" << QStringList{"ab", " 123", " cd"};
        QTest::newRow("gpt2 spaces") << "gpt-2" << "a  b" << QStringList{"a", " ", " b"};
        QTest::newRow("gpt2 case") << "gpt-2" << "I'M" << QStringList{"I", "'", "M"};
        QTest::newRow("default chain") << "default" << "ab 12345+=c"
                                       << QStringList{"ab", " ", "123", "45", "+=", "c"};
        QTest::newRow("unicode letters") << "llama-bpe" << QString::fromUtf8("naïve 東京")
                                         << QStringList{QString::fromUtf8("naïve"), QString::fromUtf8(" 東京")};
    }
    void preTokenizerSplits() {
        QFETCH(QString, pre);
        QFETCH(QString, text);
        QFETCH(QStringList, words);
        const std::string utf8 = text.toStdString();
        const std::vector<uint32_t> cps = weir::tok::decodeUtf8(utf8);
        std::vector<uint32_t> lengths;
        weir::tok::preTokenize(weir::tok::preTokenizerFromName(pre.toStdString()), cps, lengths);
        QStringList got;
        size_t start = 0;
        for (uint32_t len : lengths) {
            std::string w;
            for (size_t i = start; i < start + len; ++i) weir::tok::appendUtf8(w, cps[i]);
            got << QString::fromStdString(w);
            start += len;
        }
        QCOMPARE(got, words);
    }

    void utf8Helpers() {
        using weir::tok::sanitizeUtf8;
        QCOMPARE(sanitizeUtf8("abc"), std::string("abc"));
        QCOMPARE(sanitizeUtf8("a\xFF" "b"), std::string("a\xEF\xBF\xBD" "b"));
        QCOMPARE(sanitizeUtf8("\xC0\x80"), std::string("\xEF\xBF\xBD\xEF\xBF\xBD"));   // overlong
        QCOMPARE(sanitizeUtf8("\xED\xA0\x80"), std::string("\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"));  // surrogate
        QCOMPARE(sanitizeUtf8("\xF0\x9F\x98"), std::string("\xEF\xBF\xBD"));  // cut off: one U+FFFD
        QCOMPARE(sanitizeUtf8("\xE4\xB8" "a"), std::string("\xEF\xBF\xBD" "a"));
        std::string out;
        QCOMPARE(weir::tok::takeCompleteUtf8("ab\xF0\x9F", out), size_t(2));
        QCOMPARE(out, std::string("ab"));
    }

    void streamingOnHandMadeBytes() {
        auto tok = Tokenizer::fromVocabulary(smallSpm());
        const std::string text = "h\xF0\x9F\x98\x80\xE4\xB8\xAD";  // "h😀中"
        weir::StreamingDetokenizer stream(*tok);
        std::string all;
        std::vector<std::string> outputs;
        for (TokenId id : tok->encode(text, false, false)) {
            outputs.push_back(stream.push(id));
            all += outputs.back();
        }
        all += stream.flush();
        QCOMPARE(all, text);
        // The emoji's first three bytes give nothing; its fourth gives all of it.
        QCOMPARE(outputs.size(), size_t(8));
        QCOMPARE(outputs[1], std::string());
        QCOMPARE(outputs[3], std::string());
        QCOMPARE(outputs[4], std::string("\xF0\x9F\x98\x80"));
        // A sequence that cannot complete becomes U+FFFD once that is certain,
        // an incomplete tail at flush too.
        weir::StreamingDetokenizer bad(*tok);
        QCOMPARE(bad.push(3 + 0xE4), std::string());
        QCOMPARE(bad.push(3 + 0x41), std::string("\xEF\xBF\xBD" "A"));
        QCOMPARE(bad.push(3 + 0xF0), std::string());
        QCOMPARE(bad.flush(), std::string("\xEF\xBF\xBD"));
    }

    // --- real vocabularies against llama.cpp -----------------------------------

    void idsMatchLlamaCpp_data() { addVocabRows(); }
    void idsMatchLlamaCpp() {
        QFETCH(QString, vocab);
        QFile f(dataDir() + "/" + vocab + ".json");
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable("missing " + f.fileName()));
        const QJsonObject ref = QJsonDocument::fromJson(f.readAll()).object();
        Tokenizer* tok = load(vocab);
        if (!tok) QSKIP(qPrintable("vocabulary not found: " + vocabPath(vocab) + " (packaging/setup.sh extracts it)"));

        int checked = 0, matched = 0;
        QStringList failures;
        auto check = [&](const QString& what, const QString& text, bool addBos, bool special,
                         const std::vector<TokenId>& expected) {
            const std::vector<TokenId> got = tok->encode(text.toStdString(), addBos, special);
            ++checked;
            if (got == expected) {
                ++matched;
            } else if (failures.size() < 8) {
                failures << QString("%1 %2: text %3\n  llama.cpp %4\n  weir      %5")
                                .arg(vocab, what, QString::fromUtf8(QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact)),
                                     showIds(expected), showIds(got));
            }
        };
        const QJsonArray plain = ref["plain"].toArray();
        QCOMPARE(plain.size(), corpus_.size());
        for (int i = 0; i < corpus_.size(); ++i) check(QString("plain #%1").arg(i), corpus_[i], true, false, idsFromJson(plain[i]));
        const QJsonObject special = ref["special"].toObject();
        for (auto it = special.begin(); it != special.end(); ++it)
            check("special #" + it.key(), corpus_[it.key().toInt()], true, true, idsFromJson(it.value()));
        const QJsonObject noBos = ref["no_bos"].toObject();
        for (auto it = noBos.begin(); it != noBos.end(); ++it)
            check("no_bos #" + it.key(), corpus_[it.key().toInt()], false, false, idsFromJson(it.value()));
        QFile longFile(dataDir() + "/long_text.txt");
        QVERIFY(longFile.open(QIODevice::ReadOnly));
        check("long text", QString::fromUtf8(longFile.readAll()), true, false, idsFromJson(ref["long"]));

        qInfo("%s: %d of %d encodings identical to llama.cpp (%d corpus strings, %d with special parsing, %d without BOS, 1 long text)",
              qPrintable(vocab), matched, checked, int(plain.size()), int(special.size()), int(noBos.size()));
        for (const QString& s : failures) qWarning("%s", qPrintable(s));
        QCOMPARE(matched, checked);
    }

    // llama.cpp's own test strings for these vocabularies, with the ids the
    // Hugging Face tokenizers give them (a second, independent reference).
    void idsMatchHuggingFace_data() {
        QTest::addColumn<QString>("vocab");
        for (const char* n : {"llama-bpe", "qwen2", "gpt-2", "llama-spm"}) QTest::newRow(n) << QString(n);
    }
    void idsMatchHuggingFace() {
        QFETCH(QString, vocab);
        Tokenizer* tok = load(vocab);
        QFile inp(vocabPath(vocab) + ".inp"), out(vocabPath(vocab) + ".out");
        if (!tok || !inp.open(QIODevice::ReadOnly) || !out.open(QIODevice::ReadOnly))
            QSKIP(qPrintable("not found: " + vocabPath(vocab) + "{,.inp,.out} (packaging/setup.sh extracts them)"));
        QList<QByteArray> texts = inp.readAll().split('\n');
        // Strings are separated by lines "__ggml_vocab_test__"; rejoin the lines of each.
        QList<QByteArray> cases;
        QByteArray current;
        bool first = true;
        for (const QByteArray& line : texts) {
            if (line == "__ggml_vocab_test__") {
                cases << current;
                current.clear();
                first = true;
                continue;
            }
            if (!first) current += '\n';
            current += line;
            first = false;
        }
        const QList<QByteArray> lines = out.readAll().split('\n');
        QVERIFY(lines.size() >= cases.size());
        int matched = 0;
        for (int i = 0; i < cases.size(); ++i) {
            std::vector<TokenId> expected;
            for (const QByteArray& x : lines[i].split(' '))
                if (!x.isEmpty()) expected.push_back(TokenId(x.toInt()));
            const auto got = tok->encode(cases[i].toStdString(), false, false);
            if (got == expected) ++matched;
            else qWarning("%s #%d: expected %s got %s", qPrintable(vocab), i, qPrintable(showIds(expected)), qPrintable(showIds(got)));
        }
        qInfo("%s: %d of %d match Hugging Face tokenizers", qPrintable(vocab), matched, int(cases.size()));
        QVERIFY(cases.size() > 20);
        QCOMPARE(matched, int(cases.size()));
    }

    // User text never yields a control token; with parseSpecial it does.
    void controlTokensNeedParseSpecial_data() { addVocabRows(); }
    void controlTokensNeedParseSpecial() {
        QFETCH(QString, vocab);
        Tokenizer* tok = load(vocab);
        if (!tok) QSKIP(qPrintable("vocabulary not found: " + vocabPath(vocab)));
        for (const QString& s : corpus_) {
            const std::vector<TokenId> ids = tok->encode(s.toStdString(), false, false);
            for (TokenId id : ids)
                QVERIFY2(!tok->isControl(id), qPrintable(QString("control token %1 from user text %2").arg(id).arg(s)));
        }
        // Each vocabulary's own turn markers, written in the text.
        for (const char* name : {"<start_of_turn>", "<end_of_turn>", "<|im_end|>", "<|eot_id|>", "<|begin_of_text|>", "<|endoftext|>"}) {
            const TokenId id = tok->find(name);
            if (id < 0 || !tok->isControl(id)) continue;
            const std::string text = std::string("x") + name + "user";
            const auto plain = tok->encode(text, false, false);
            QVERIFY(std::find(plain.begin(), plain.end(), id) == plain.end());
            QCOMPARE(tok->decode(plain), text);
            const auto special = tok->encode(text, false, true);
            QVERIFY2(std::find(special.begin(), special.end(), id) != special.end(), name);
        }
    }

    void roundTrip_data() { addVocabRows(); }
    void roundTrip() {
        QFETCH(QString, vocab);
        Tokenizer* tok = load(vocab);
        if (!tok) QSKIP(qPrintable("vocabulary not found: " + vocabPath(vocab)));
        const bool sentencePiece = vocab == "gemma3" || vocab == "llama-spm";
        int n = 0;
        for (const QString& s : corpus_) {
            // SentencePiece writes spaces as U+2581, so a U+2581 in the input
            // comes back as a space: the one text that cannot round-trip.
            if (sentencePiece && s.contains(QChar(0x2581))) continue;
            const std::string text = s.toStdString();
            for (bool bos : {false, true}) {
                QCOMPARE(tok->decode(tok->encode(text, bos, false)), text);
                ++n;
            }
        }
        qInfo("%s: %d round trips", qPrintable(vocab), n);
    }

    // Streams every corpus string token by token: each piece is valid UTF-8
    // and the pieces add up to the text. Then emoji and CJK forced through
    // byte tokens (SentencePiece vocabularies have <0xNN> tokens).
    void streamingDetokenizer_data() { addVocabRows(); }
    void streamingDetokenizer() {
        QFETCH(QString, vocab);
        Tokenizer* tok = load(vocab);
        if (!tok) QSKIP(qPrintable("vocabulary not found: " + vocabPath(vocab)));
        int splitChars = 0;
        for (const QString& s : corpus_) {
            const std::string text = s.toStdString();
            const std::vector<TokenId> ids = tok->encode(text, false, false);
            std::string expected;
            for (TokenId id : ids) expected += tok->tokenBytes(id);
            weir::StreamingDetokenizer stream(*tok);
            std::string all;
            for (TokenId id : ids) {
                const std::string piece = stream.push(id);
                QVERIFY2(validUtf8(piece), qPrintable(s));
                if (tok->tokenBytes(id) != piece) ++splitChars;
                all += piece;
            }
            all += stream.flush();
            QCOMPARE(all, expected);
        }
        qInfo("%s: %d tokens held back part of a character", qPrintable(vocab), splitChars);

        std::vector<TokenId> bytes;
        const std::string text = "\xF0\x9F\x98\x80 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9";
        for (unsigned char c : text) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", c);
            bytes.push_back(tok->find(name));
        }
        if (bytes.front() < 0) return;  // byte-level BPE: no <0xNN> tokens
        weir::StreamingDetokenizer stream(*tok);
        std::string all;
        for (TokenId id : bytes) {
            const std::string piece = stream.push(id);
            QVERIFY(validUtf8(piece));
            all += piece;
        }
        all += stream.flush();
        QCOMPARE(all, text);
    }

    // Arbitrary bytes (mostly invalid UTF-8) must never crash and give only
    // valid ids; streamed output is always valid UTF-8.
    void arbitraryBytes_data() { addVocabRows(); }
    void arbitraryBytes() {
        QFETCH(QString, vocab);
        Tokenizer* tok = load(vocab);
        if (!tok) QSKIP(qPrintable("vocabulary not found: " + vocabPath(vocab)));
        const bool sentencePiece = vocab == "gemma3" || vocab == "llama-spm";
        uint64_t state = 0x9E3779B97F4A7C15ull;
        auto next = [&] {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            return state;
        };
        const std::string alphabet = "ab <>|_\n\t\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\x80\xBF\xFF\xC0\xED\xA0";
        for (int i = 0; i < 300; ++i) {
            std::string text;
            const size_t len = next() % 48;
            for (size_t j = 0; j < len; ++j)
                text += (next() & 1) ? char(next() & 0xFF) : alphabet[next() % alphabet.size()];
            if (sentencePiece && text.find("\xE2\x96\x81") != std::string::npos) continue;
            for (bool special : {false, true}) {
                const std::vector<TokenId> ids = tok->encode(text, true, special);
                for (TokenId id : ids) QVERIFY(id >= 0 && id < tok->vocabSize());
                // Lossless for valid UTF-8. (Not for broken input: a cut-off
                // sequence followed by a space swallows the bytes of its U+2581,
                // which then come back as bytes, as in llama.cpp.)
                const std::string valid = weir::tok::sanitizeUtf8(text);
                if (sentencePiece && !special) QCOMPARE(tok->decode(tok->encode(valid, true, false)), valid);
                weir::StreamingDetokenizer stream(*tok);
                for (TokenId id : ids) QVERIFY(validUtf8(stream.push(id)));
                QVERIFY(validUtf8(stream.flush()));
            }
        }
    }

    void endOfGenerationSets() {
        struct Case { const char* vocab; std::vector<const char*> names; };
        const Case cases[] = {
            // "</s>" (an HTML tag in Gemma's vocabulary) is on llama.cpp's list too.
            {"gemma3", {"<eos>", "<end_of_turn>", "</s>"}},
            {"llama-bpe", {"<|end_of_text|>", "<|eot_id|>"}},
            {"qwen2", {"<|endoftext|>", "<|im_end|>", "</s>"}},
        };
        int seen = 0;
        for (const Case& c : cases) {
            Tokenizer* tok = load(c.vocab);
            if (!tok) continue;
            ++seen;
            std::vector<TokenId> expected;
            for (const char* n : c.names) expected.push_back(tok->find(n));
            std::sort(expected.begin(), expected.end());
            QCOMPARE(tok->endOfGeneration(), expected);
        }
        if (seen == 0) QSKIP("no GGUF vocabulary found");
        Tokenizer* gemma = load("gemma3");
        if (gemma) {
            QCOMPARE(gemma->bos(), TokenId(2));
            QCOMPARE(gemma->eos(), TokenId(1));
            QVERIFY(gemma->addBosDefault());
            QCOMPARE(gemma->vocabSize(), 262144);
            QCOMPARE(gemma->tokenText(2), std::string("<bos>"));
            QCOMPARE(gemma->find("<start_of_turn>"), TokenId(105));
            QCOMPARE(gemma->tokenText(-1), std::string());
            QCOMPARE(gemma->tokenBytes(1 << 30), std::string());
        }
    }

    // Speed of a whole long prompt (no assertion on time: it is reported).
    void encodeSpeed_data() { addVocabRows(); }
    void encodeSpeed() {
        QFETCH(QString, vocab);
        Tokenizer* tok = load(vocab);
        if (!tok) QSKIP(qPrintable("vocabulary not found: " + vocabPath(vocab)));
        QFile f(dataDir() + "/long_text.txt");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const std::string text = f.readAll().toStdString();
        size_t n = tok->encode(text, true, false).size();  // warm-up
        const int reps = 5;
        QElapsedTimer t;
        t.start();
        const std::clock_t cpu0 = std::clock();
        for (int i = 0; i < reps; ++i) n = tok->encode(text, true, false).size();
        const double ms = double(t.nsecsElapsed()) / 1e6 / reps;
        const double cpuMs = double(std::clock() - cpu0) * 1000.0 / CLOCKS_PER_SEC / reps;
        qInfo("%s: %zu bytes -> %zu tokens in %.2f ms wall, %.2f ms CPU", qPrintable(vocab), text.size(), n, ms, cpuMs);
        QVERIFY(n > 1000);
    }
};

QTEST_APPLESS_MAIN(TokenizerTest)
#include "tokenizer_test.moc"
