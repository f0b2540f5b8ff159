// Chat template choice for real GGUF files: the default model (Gemma 3 270M,
// whose GGUF has no tokenizer.chat_template) gets the built-in Gemma
// template with its own BOS/EOS texts; a GGUF that carries a template gets it.
#include <QtTest>

#include <filesystem>

#include "engine/chat/chat_model_info.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "weir/base/error.h"

using weir::ChatTemplate;

class ChatModelInfoTest : public QObject {
    Q_OBJECT

private slots:
    void defaultModel() {
        const std::string path = qEnvironmentVariable("WEIR_MODEL").toStdString();
        if (path.empty() || !std::filesystem::exists(path)) QSKIP("SKIPPED: default model not present (WEIR_MODEL)");
        auto file = weir::gguf::GgufFile::open(path);
        weir::ChatModelInfo info = weir::chatModelInfoFromGguf(*file);
        QVERIFY(info.chatTemplate.empty());
        QCOMPARE(QString::fromStdString(info.architecture), QString("gemma3"));
        QCOMPARE(QString::fromStdString(info.bosText), QString("<bos>"));
        QCOMPARE(QString::fromStdString(info.eosText), QString("<eos>"));
        auto has = [&](const char* t) {
            return std::find(info.specialTokens.begin(), info.specialTokens.end(), t) != info.specialTokens.end();
        };
        QVERIFY(has("<start_of_turn>"));
        QVERIFY(has("<end_of_turn>"));

        auto tmpl = ChatTemplate::forModel(info);
        QVERIFY(tmpl->isBuiltin());
        QCOMPARE(QString::fromStdString(tmpl->family()), QString("gemma"));
        QVERIFY(tmpl->rendersBos());
        const std::string text = tmpl->render({{"system", "Be brief.", {}}, {"user", "Hi", {}}}, true);
        QCOMPARE(QByteArray::fromStdString(text),
                 QByteArray("<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n"));
        QVERIFY(!tmpl->addBosWhenTokenizing(text, true));
    }

    // A small GGUF written here: its template is used as is, the BOS/EOS texts
    // come from the token ids, control tokens are collected.
    void templateFromGguf() {
        weir::gguf::GgufWriter w;
        w.addString("general.architecture", "qwen2");
        w.addString("tokenizer.chat_template",
                    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}");
        w.add("tokenizer.ggml.tokens", weir::gguf::makeStringArray({"a", "<|im_start|>", "<|im_end|>", "b"}));
        w.add("tokenizer.ggml.token_type", weir::gguf::makeI32Array({1, 3, 3, 1}));
        w.addU32("tokenizer.ggml.eos_token_id", 2);
        std::vector<uint8_t> bytes = w.toBytes();
        auto file = weir::gguf::GgufFile::fromMemory(bytes.data(), bytes.size(), "synthetic");
        weir::ChatModelInfo info = weir::chatModelInfoFromGguf(*file);
        QCOMPARE(QString::fromStdString(info.eosText), QString("<|im_end|>"));
        QVERIFY(info.bosText.empty());
        QCOMPARE(info.specialTokens, (std::vector<std::string>{"<|im_start|>", "<|im_end|>"}));
        auto tmpl = ChatTemplate::forModel(info);
        QVERIFY(!tmpl->isBuiltin());
        QCOMPARE(QString::fromStdString(tmpl->family()), QString("chatml"));
        QCOMPARE(QByteArray::fromStdString(tmpl->render({{"user", "x", {}}}, true)),
                 QByteArray("<|im_start|>user\nx<|im_end|>\n"));
        QVERIFY(tmpl->addBosWhenTokenizing("<|im_start|>", true));  // no BOS text: nothing written

        weir::gguf::GgufWriter bad;
        bad.add("tokenizer.ggml.tokens", weir::gguf::makeStringArray({"a"}));
        bad.addU32("tokenizer.ggml.bos_token_id", 7);
        bytes = bad.toBytes();
        file = weir::gguf::GgufFile::fromMemory(bytes.data(), bytes.size(), "bad");
        QVERIFY_THROWS_EXCEPTION(weir::Error, weir::chatModelInfoFromGguf(*file));
    }
};

QTEST_APPLESS_MAIN(ChatModelInfoTest)
#include "chat_model_info_test.moc"
