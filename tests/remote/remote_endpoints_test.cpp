// The remote endpoint store: endpoints and their keys survive a reload, the
// keys stay out of the list in a file only the user may read (0600, made so
// again when someone loosened it), and bad names, addresses and damaged
// files are refused with the reason.
#include <QtTest>

#include <QFile>
#include <QTemporaryDir>
#include <sys/stat.h>

#include "app/remote/remote_endpoints.h"

using namespace weir::remote;

namespace {

// These tests never write into the keyring of the person running them.
constexpr ApiKeyVault::Keyring kFileOnly = ApiKeyVault::Keyring::Never;

unsigned modeOf(const QString& path) {
    struct stat st {};
    if (::stat(QFile::encodeName(path).constData(), &st) != 0) return 0;
    return st.st_mode & 0777;
}

RemoteEndpointEntry entry(const char* name, const char* url, const char* model = "") {
    return {QLatin1String(name), QUrl(QLatin1String(url)), QLatin1String(model), {}};
}

// The key as the store knows it without asking a keyring (file-only stores know every key).
QString keyOf(const RemoteEndpointStore& s, const char* name) {
    return s.knownApiKey(QLatin1String(name)).value_or(QStringLiteral("<not known>"));
}

} // namespace

class RemoteEndpointsTest : public QObject {
    Q_OBJECT
private slots:
    void savesAndReloads() {
        QTemporaryDir dir;
        QString error;
        {
            RemoteEndpointStore s(dir.path() + QStringLiteral("/weir"), kFileOnly);   // the folder is made on the first save
            QVERIFY2(s.load(&error), qPrintable(error));
            QVERIFY(s.endpoints().isEmpty());
            QVERIFY2(s.add(entry("GPU box", "http://gpu-box:8000/v1", "Qwen/Qwen3-8B"), QStringLiteral("sk-secret-1"), &error), qPrintable(error));
            QVERIFY2(s.add(entry("laptop ollama", "http://127.0.0.1:11434/v1"), {}, &error), qPrintable(error));
            QVERIFY2(s.setModel(QStringLiteral("laptop ollama"), QStringLiteral("llama3.2"), &error), qPrintable(error));
        }
        RemoteEndpointStore s(dir.path() + QStringLiteral("/weir"), kFileOnly);
        QVERIFY2(s.load(&error), qPrintable(error));
        QCOMPARE(s.endpoints().size(), 2);
        QCOMPARE(s.endpoints()[0].name, QStringLiteral("GPU box"));
        QCOMPARE(s.endpoints()[0].baseUrl, QUrl(QStringLiteral("http://gpu-box:8000/v1")));
        QCOMPARE(s.endpoints()[0].model, QStringLiteral("Qwen/Qwen3-8B"));
        QCOMPARE(s.endpoints()[1].model, QStringLiteral("llama3.2"));
        QCOMPARE(keyOf(s, "GPU box"), QStringLiteral("sk-secret-1"));
        QCOMPARE(keyOf(s, "laptop ollama"), QString());
        QVERIFY(s.keyStorage().contains(s.keysPath()));
        QVERIFY(!s.keysInKeyring());
    }

    void fallsBackToTheFileWhenNoKeyringAnswers() {
        if (!qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS"))
            QSKIP("a D-Bus session runs here: a keyring may answer, and this test does not write into it");
        QTemporaryDir dir;
        RemoteEndpointStore s(dir.path(), ApiKeyVault::Keyring::Try, QStringLiteral("Weir test endpoints"));
        QString error;
        QVERIFY2(s.load(&error), qPrintable(error));
        QTRY_VERIFY(!s.checkingKeyring());  // the keyring's answer (a failure) comes later
        QVERIFY(s.add(entry("a", "http://h:1/v1"), QStringLiteral("sk-fallback"), &error));
        QVERIFY(!s.keysInKeyring());
        QCOMPARE(modeOf(s.keysPath()), 0600u);
        QCOMPARE(keyOf(s, "a"), QStringLiteral("sk-fallback"));
        // The UI can say where the key went and why.
        const QString where = s.keyStorage();
        QVERIFY2(where.contains(s.keysPath()) && where.contains(QLatin1String("readable only by you")), qPrintable(where));
        QVERIFY2(where.contains(QLatin1String("keyring is not available")) || where.contains(QLatin1String("without QtKeychain")),
                 qPrintable(where));
        qInfo("%s", qPrintable(where));
    }

    void keysStayPrivateAndOutOfTheList() {
        QTemporaryDir dir;
        QString error;
        RemoteEndpointStore s(dir.path(), kFileOnly);
        QVERIFY(s.add(entry("a", "https://api.example.com/v1"), QStringLiteral("sk-very-secret"), &error));
        QCOMPARE(modeOf(s.keysPath()), 0600u);
        QFile list(s.listPath());
        QVERIFY(list.open(QIODevice::ReadOnly));
        QVERIFY(!list.readAll().contains("sk-very-secret"));
        // Loosened by hand: made private again on the next load.
        QVERIFY(QFile::setPermissions(s.keysPath(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup |
                                                         QFileDevice::ReadOther));
        QCOMPARE(modeOf(s.keysPath()), 0644u);
        RemoteEndpointStore again(dir.path(), kFileOnly);
        QVERIFY(again.load(&error));
        QCOMPARE(modeOf(again.keysPath()), 0600u);
        // A new key keeps the file private.
        QVERIFY(again.setApiKey(QStringLiteral("a"), QStringLiteral("sk-new"), &error));
        QCOMPARE(modeOf(again.keysPath()), 0600u);
        QCOMPARE(keyOf(again, "a"), QStringLiteral("sk-new"));
    }

    void refusesBadInput() {
        QTemporaryDir dir;
        RemoteEndpointStore s(dir.path(), kFileOnly);
        QString error;
        QVERIFY(s.add(entry("a", "http://h:1/v1"), {}, &error));
        QVERIFY(!s.add(entry("a", "http://other:2/v1"), {}, &error));
        QVERIFY2(error.contains(QStringLiteral("already an endpoint named “a”")), qPrintable(error));
        QVERIFY(!s.add(entry(" ", "http://h:1/v1"), {}, &error));
        QVERIFY2(error.contains(QLatin1String("needs a name")), qPrintable(error));
        QVERIFY(!s.add(entry("b", "ftp://h/v1"), {}, &error));
        QVERIFY2(error.contains(QLatin1String("not an http:// or https:// address")), qPrintable(error));
        QVERIFY(!s.add(entry("c", "gpu-box:8000"), {}, &error));
        QVERIFY(!s.setModel(QStringLiteral("nobody"), QStringLiteral("m"), &error));
        QVERIFY2(error.contains(QStringLiteral("no endpoint named “nobody”")), qPrintable(error));
        QCOMPARE(s.endpoints().size(), 1);
    }

    void renameKeepsTheKeyAndRemoveDropsIt() {
        QTemporaryDir dir;
        RemoteEndpointStore s(dir.path(), kFileOnly);
        QString error;
        QVERIFY(s.add(entry("old", "http://h:1/v1"), QStringLiteral("k1"), &error));
        QVERIFY(s.add(entry("other", "http://h:2/v1"), QStringLiteral("k2"), &error));
        QVERIFY(!s.update(QStringLiteral("old"), entry("other", "http://h:1/v1"), &error));   // taken
        QVERIFY2(s.update(QStringLiteral("old"), entry("new", "http://h:3/v1"), &error), qPrintable(error));
        QCOMPARE(keyOf(s, "new"), QStringLiteral("k1"));
        QCOMPARE(keyOf(s, "old"), QString());
        QVERIFY(s.remove(QStringLiteral("new"), &error));
        RemoteEndpointStore again(dir.path(), kFileOnly);
        QVERIFY(again.load(&error));
        QCOMPARE(again.endpoints().size(), 1);
        QCOMPARE(again.endpoints()[0].name, QStringLiteral("other"));
        QCOMPARE(keyOf(again, "new"), QString());
        QCOMPARE(keyOf(again, "other"), QStringLiteral("k2"));
    }

    void aRenamedEndpointAnswersToItsFormerName() {
        QTemporaryDir dir;
        QString error;
        {
            RemoteEndpointStore s(dir.path(), kFileOnly);
            QVERIFY(s.add(entry("GPU box", "http://h:1/v1", "m"), QStringLiteral("k1"), &error));
            QVERIFY2(s.update(QStringLiteral("GPU box"), entry("Lab", "http://h:1/v1", "m"), &error), qPrintable(error));
            QVERIFY2(s.update(QStringLiteral("Lab"), entry("Lab 2", "http://h:1/v1", "m"), &error), qPrintable(error));
            QCOMPARE(s.find(QStringLiteral("GPU box")), nullptr);
            QVERIFY(s.resolve(QStringLiteral("GPU box")));
            QCOMPARE(s.resolve(QStringLiteral("GPU box"))->name, QStringLiteral("Lab 2"));
            QCOMPARE(s.resolve(QStringLiteral("Lab"))->name, QStringLiteral("Lab 2"));
            QCOMPARE(keyOf(s, "Lab 2"), QStringLiteral("k1"));
        }
        RemoteEndpointStore s(dir.path(), kFileOnly);
        QVERIFY(s.load(&error));
        QCOMPARE(s.endpoints()[0].formerNames, (QStringList{QStringLiteral("GPU box"), QStringLiteral("Lab")}));
        // A new endpoint takes a former name over; a removed one answers to none.
        QVERIFY(s.add(entry("GPU box", "http://other:2/v1"), {}, &error));
        QCOMPARE(s.resolve(QStringLiteral("GPU box"))->baseUrl, QUrl(QStringLiteral("http://other:2/v1")));
        QCOMPARE(s.endpoints()[0].formerNames, QStringList{QStringLiteral("Lab")});
        QVERIFY(s.remove(QStringLiteral("Lab 2"), &error));
        QCOMPARE(s.resolve(QStringLiteral("Lab")), nullptr);
    }

    void damagedFilesAreNamed() {
        QTemporaryDir dir;
        RemoteEndpointStore s(dir.path(), kFileOnly);
        QFile f(s.listPath());
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"endpoints\": [ {\"name\": \"a\", ");
        f.close();
        QString error;
        QVERIFY(!s.load(&error));
        QVERIFY2(error.contains(s.listPath()) && error.contains(QLatin1String("damaged")), qPrintable(error));
        QVERIFY(s.endpoints().isEmpty());

        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("{\"endpoints\": [ {\"name\": \"a\", \"base_url\": \"not a url\"} ]}");
        f.close();
        QVERIFY(!s.load(&error));
        QVERIFY2(error.contains(QLatin1String("not an http://")), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(RemoteEndpointsTest)
#include "remote_endpoints_test.moc"
