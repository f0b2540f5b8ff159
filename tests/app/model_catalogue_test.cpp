// Where models are found (app/locations) and the catalogue the Model page
// lists (resources/models.json, embedded): $XDG_DATA_HOME/weir/models first,
// then the build folder's models/; a relative XDG_DATA_HOME is ignored, as
// the XDG spec says; $WEIR_MODEL overrides the default model.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include "app/locations/model_locations.h"
#include "settings/ModelCatalogue.h"

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
