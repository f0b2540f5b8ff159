// Where models are found (app/locations) and the catalogue the Model page
// lists (resources/models.json, embedded): $XDG_DATA_HOME/weir/models first,
// then the build folder's models/; a relative XDG_DATA_HOME is ignored, as
// the XDG spec says; $WEIR_MODEL overrides the default model.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include "app/locations/model_locations.h"
#include "settings/InstalledModels.h"
#include "settings/ModelCatalogue.h"
#include "settings/ModelFileProblem.h"

namespace loc = weir::locations;

namespace {

// Sets (or with an empty value, unsets) an environment variable for one scope.
struct ScopedEnv {
    ScopedEnv(const char* name, const QByteArray& value) : name_(name), old_(qgetenv(name)), had_(qEnvironmentVariableIsSet(name)) {
        if (value.isNull()) qunsetenv(name);
        else qputenv(name, value);
    }
    ~ScopedEnv() {
        if (had_) qputenv(name_, old_);
        else qunsetenv(name_);
    }
    const char* name_;
    QByteArray old_;
    bool had_;
};

const QString kDefaultFile = QFileInfo(QStringLiteral(WEIR_DEFAULT_MODEL)).fileName();

} // namespace

class ModelCatalogueTest : public QObject {
    Q_OBJECT
private slots:
    void xdgDataHomeFirstThenTheBuildFolder() {
        QTemporaryDir xdg;
        ScopedEnv data("XDG_DATA_HOME", xdg.path().toUtf8());
        const auto dirs = loc::modelSearchDirs();
        QVERIFY(dirs.size() >= 1);
        QCOMPARE(QString::fromStdString(dirs[0].string()), xdg.filePath("weir/models"));
        QCOMPARE(QString::fromStdString(loc::userDataDir().string()), xdg.filePath("weir"));
        if (dirs.size() > 1)
            QCOMPARE(QString::fromStdString(dirs[1].string()), QFileInfo(QStringLiteral(WEIR_DEFAULT_MODEL)).absolutePath());
    }

    void relativeXdgDataHomeIsIgnored() {
        QTemporaryDir home;
        ScopedEnv h("HOME", home.path().toUtf8());
        ScopedEnv data("XDG_DATA_HOME", "relative/share");
        QCOMPARE(QString::fromStdString(loc::xdgDataHome().string()), home.filePath(".local/share"));
    }

    void defaultModelFoundInTheXdgFolder() {
        QTemporaryDir xdg;
        ScopedEnv data("XDG_DATA_HOME", xdg.path().toUtf8());
        ScopedEnv model("WEIR_MODEL", QByteArray());
        QVERIFY(QDir().mkpath(xdg.filePath("weir/models")));
        const QString installed = xdg.filePath("weir/models/" + kDefaultFile);
        QFile f(installed);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("GGUF");
        f.close();
        QCOMPARE(QString::fromStdString(loc::defaultModelPath()), installed);
        QCOMPARE(QString::fromStdString(loc::findModel(kDefaultFile.toStdString())), installed);
        QCOMPARE(QString::fromStdString(loc::findModel("no-such-model.gguf")), QString());
        ScopedEnv chosen("WEIR_MODEL", "/somewhere/else.gguf");
        QCOMPARE(QString::fromStdString(loc::defaultModelPath()), QStringLiteral("/somewhere/else.gguf"));
    }

    // The app opens the instruction-tuned chat model when it is installed and
    // falls back to the default (base) model when it is not.
    void appOpensTheChatModelWhenInstalled() {
        QTemporaryDir xdg;
        ScopedEnv data("XDG_DATA_HOME", xdg.path().toUtf8());
        ScopedEnv model("WEIR_MODEL", QByteArray());
        QVERIFY(QDir().mkpath(xdg.filePath("weir/models")));
        const QString chat = xdg.filePath(QStringLiteral("weir/models/") + QStringLiteral(WEIR_CHAT_MODEL_FILE));
        const QString fallback = QString::fromStdString(loc::defaultModelPath());
        if (!QFileInfo::exists(QFileInfo(QStringLiteral(WEIR_DEFAULT_MODEL)).absolutePath() + "/" + WEIR_CHAT_MODEL_FILE))
            QCOMPARE(QString::fromStdString(loc::appModelPath()), fallback);  // nothing installed anywhere
        QFile f(chat);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("GGUF");
        f.close();
        QCOMPARE(QString::fromStdString(loc::appModelPath()), chat);
        ScopedEnv chosen("WEIR_MODEL", "/somewhere/else.gguf");
        QCOMPARE(QString::fromStdString(loc::appModelPath()), QStringLiteral("/somewhere/else.gguf"));
    }

    void catalogueListsEachModelWithWhereItIs() {
        QTemporaryDir xdg;
        ScopedEnv data("XDG_DATA_HOME", xdg.path().toUtf8());
        QVERIFY(QDir().mkpath(xdg.filePath("weir/models")));
        QFile f(xdg.filePath("weir/models/smollm2-135m-instruct-q4_1.gguf"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        const QVariantList models = weir::desktop::bundledModels();  // the embedded :/models.json
        QVERIFY(models.size() >= 2);
        QVariantMap gemma, smol;
        for (const QVariant& v : models) {
            const QVariantMap m = v.toMap();
            if (m["id"] == "gemma-3-270m") gemma = m;
            if (m["id"] == "smollm2-135m-instruct") smol = m;
        }
        QCOMPARE(gemma["file"].toString(), kDefaultFile);  // the catalogue's default is the build's default
        QCOMPARE(gemma["role"].toString(), QStringLiteral("default"));
        QCOMPARE(gemma["architecture"].toString(), QStringLiteral("gemma3"));
        QVERIFY(!gemma["licence"].toString().isEmpty());
        QCOMPARE(smol["path"].toString(), xdg.filePath("weir/models/smollm2-135m-instruct-q4_1.gguf"));
        QCOMPARE(smol["licence"].toString(), QStringLiteral("Apache-2.0"));
        QCOMPARE(smol["role"].toString(), QStringLiteral("chat"));  // the model the app opens
        QCOMPARE(smol["file"].toString(), QStringLiteral(WEIR_CHAT_MODEL_FILE));
    }

    void catalogueNameOfAFile() {
        QCOMPARE(weir::desktop::catalogueName(QStringLiteral(WEIR_CHAT_MODEL_FILE)), QStringLiteral("SmolLM2 135M Instruct"));
        QCOMPARE(weir::desktop::catalogueName(kDefaultFile), QStringLiteral("Gemma 3 270M"));
        QCOMPARE(weir::desktop::catalogueName(QStringLiteral("my-own-model.gguf")), QString());
    }

    // Issue 26: a file that cannot be loaded led with the reader's detail
    // ("tensor_count 272 cannot fit in the 976 bytes left"). The Model page
    // now leads with a sentence and keeps the detail below it.
    void brokenFilesLeadWithAPlainSentence() {
        QTemporaryDir dir;
        auto write = [&](const char* name, const QByteArray& bytes) {
            QFile f(dir.filePath(QString::fromLatin1(name)));
            if (!f.open(QIODevice::WriteOnly)) return QString();
            f.write(bytes);
            return f.fileName();
        };
        // A GGUF header promising 272 tensors, then the file ends.
        QByteArray cut("GGUF");
        auto u32 = [&](quint32 v) { cut.append(reinterpret_cast<const char*>(&v), 4); };
        auto u64 = [&](quint64 v) { cut.append(reinterpret_cast<const char*>(&v), 8); };
        u32(3);
        u64(272);
        u64(0);
        cut.append(976, '\0');
        const QVariantMap truncated = weir::desktop::InstalledModels::summarize(write("cut.gguf", cut));
        QCOMPARE(truncated.value("error").toString(), QStringLiteral("This file is not a complete GGUF model (it may be cut short)."));
        QVERIFY2(truncated.value("errorDetail").toString().contains(QStringLiteral("tensor_count 272 cannot fit in the 976 bytes left")),
                 qPrintable(truncated.value("errorDetail").toString()));

        const QVariantMap text = weir::desktop::InstalledModels::summarize(write("notes.gguf", "just some notes, not a model"));
        QCOMPARE(text.value("error").toString(), QStringLiteral("This file is not a GGUF model."));
        QVERIFY(text.value("errorDetail").toString().contains(QStringLiteral("bad magic")));

        using weir::desktop::describeModelFileProblem;
        QCOMPARE(describeModelFileProblem(QStringLiteral("m.gguf: unsupported architecture 'mamba' (supported: gemma3, llama)")).headline,
                 QStringLiteral("Weir does not support this model's architecture."));
        QCOMPARE(describeModelFileProblem(QStringLiteral("m.gguf: offset 88: duplicate key 'a'")).headline,
                 QStringLiteral("This file is a damaged GGUF model."));
        QCOMPARE(describeModelFileProblem(QStringLiteral("m.gguf: missing tensor output_norm.weight")).headline,
                 QStringLiteral("Weir cannot load this model."));
    }

    void unreadableCatalogueIsEmpty() {
        QTemporaryDir dir;
        QVERIFY(weir::desktop::bundledModels(dir.filePath("missing.json")).isEmpty());
        QFile f(dir.filePath("bad.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{ not json");
        f.close();
        QVERIFY(weir::desktop::bundledModels(dir.filePath("bad.json")).isEmpty());
    }
};

QTEST_GUILESS_MAIN(ModelCatalogueTest)
#include "model_catalogue_test.moc"
