// The API key vault on a keyring that answers when the test says so
// (FakeKeyring): nothing waits for the keyring; keys wait in line behind the
// first question (does a keyring answer?); a key read or written once is in
// memory for the session, so the next read answers at once; a keyring that
// never answers is given up after the time limit, in words; one that fails
// hands the keys to the 0600 file and says so; answers that come after their
// asker (or the vault) went find nothing.
#include <QtTest>

#include <QFile>
#include <QTemporaryDir>
#include <optional>
#include <sys/stat.h>

#include "app/remote/api_key_vault.h"
#include "tests/remote/fake_keyring.h"

using namespace weir::remote;
using weir::test::FakeKeyring;

namespace {

unsigned modeOf(const QString& path) {
    struct stat st {};
    if (::stat(QFile::encodeName(path).constData(), &st) != 0) return 0;
    return st.st_mode & 0777;
}

struct Setup {
    Setup() : state(std::make_shared<FakeKeyring::State>()) {}
    std::unique_ptr<ApiKeyVault> vault() {
        return std::make_unique<ApiKeyVault>(dir.filePath(QStringLiteral("keys.json")), std::make_unique<FakeKeyring>(state));
    }
    QTemporaryDir dir;
    std::shared_ptr<FakeKeyring::State> state;
};

// What a read answered, if it did.
struct Answer {
    std::optional<KeyRead> read;
    ApiKeyVault::ReadDone callback() {
        return [this](const KeyRead& r) { read = r; };
    }
};

} // namespace

class ApiKeyVaultTest : public QObject {
    Q_OBJECT
private slots:
    void writesWaitForTheProbeAndAreSeenAtOnce() {
        Setup s;
        auto v = s.vault();
        QString error;
        QVERIFY(v->load(&error));
        QCOMPARE(s.state->pending.size(), size_t(1));  // "does a keyring answer?"
        QVERIFY(v->checkingKeyring());
        QVERIFY2(v->storageDescription().contains(QLatin1String("asking it now")), qPrintable(v->storageDescription()));
        QCOMPARE(v->known(QStringLiteral("a")), std::nullopt);

        std::optional<QString> saved;
        v->write(QStringLiteral("a"), QStringLiteral("sk-a"), [&](const QString& e) { saved = e; });
        QCOMPARE(v->known(QStringLiteral("a")), std::optional<QString>(QStringLiteral("sk-a")));  // before any answer
        QCOMPARE(s.state->writes, 0);  // in line behind the probe
        QVERIFY(s.state->answerNext());  // the probe: "not found", so a keyring answers
        QVERIFY(v->usingKeyring());
        QCOMPARE(s.state->writes, 1);
        QVERIFY(!saved);
        QVERIFY(s.state->answerNext());
        QCOMPARE(saved, std::optional<QString>(QString()));
        QCOMPARE(s.state->stored.value(QStringLiteral("a")), QStringLiteral("sk-a"));
        QVERIFY(!QFile::exists(v->filePath()));  // no copy in the file
    }

    void aReadAnswersLaterThenFromMemory() {
        Setup s;
        s.state->stored.insert(QStringLiteral("a"), QStringLiteral("sk-a"));
        auto v = s.vault();
        QVERIFY(v->load(nullptr));
        s.state->answerAll();
        const int before = s.state->reads;

        Answer first;
        v->read(QStringLiteral("a"), nullptr, first.callback());
        QVERIFY(!first.read);  // the keyring has not answered: nothing waited for it
        QCOMPARE(s.state->reads, before + 1);
        QVERIFY(s.state->answerNext());
        QVERIFY(first.read && first.read->ok);
        QCOMPARE(first.read->key, QStringLiteral("sk-a"));

        // Kept for the session: the next read answers inside the call.
        Answer second;
        v->read(QStringLiteral("a"), nullptr, second.callback());
        QVERIFY(second.read && second.read->ok);
        QCOMPARE(second.read->key, QStringLiteral("sk-a"));
        QCOMPARE(s.state->reads, before + 1);
        QCOMPARE(v->known(QStringLiteral("a")), std::optional<QString>(QStringLiteral("sk-a")));

        // None stored is remembered too.
        Answer none;
        v->read(QStringLiteral("b"), nullptr, none.callback());
        s.state->answerAll();
        QVERIFY(none.read && none.read->ok && none.read->key.isEmpty());
        QCOMPARE(v->known(QStringLiteral("b")), std::optional<QString>(QString()));
    }

    void aKeyringThatNeverAnswersIsGivenUp() {
        Setup s;
        auto v = s.vault();
        v->setKeyringWaitMs(20);
        QVERIFY(v->load(nullptr));
        s.state->answerAll();  // the probe
        Answer read;
        v->read(QStringLiteral("a"), nullptr, read.callback());
        QTRY_VERIFY(read.read.has_value());  // the read is left unanswered
        QVERIFY(!read.read->ok);
        QVERIFY2(read.read->problem.contains(QLatin1String("did not answer within 20 ms")), qPrintable(read.read->problem));
        QCOMPARE(v->known(QStringLiteral("a")), std::nullopt);  // asked again next time
        // The late answer finds nobody waiting.
        QVERIFY(s.state->answerNext());
        QVERIFY(!read.read->ok);
    }

    void aFailingKeyringHandsTheKeysToThePrivateFile() {
        Setup s;
        s.state->failWith = QStringLiteral("no keyring service answers");
        auto v = s.vault();
        QVERIFY(v->load(nullptr));
        int storageChanges = 0;
        v->setStorageChanged([&] { ++storageChanges; });
        s.state->answerAll();
        QCOMPARE(storageChanges, 1);
        QVERIFY(!v->usingKeyring() && !v->checkingKeyring());
        const QString where = v->storageDescription();
        QVERIFY2(where.contains(v->filePath()) && where.contains(QLatin1String("readable only by you")) &&
                     where.contains(QLatin1String("no keyring service answers")),
                 qPrintable(where));
        // From now on nothing goes to the keyring: saved at once.
        std::optional<QString> saved;
        v->write(QStringLiteral("a"), QStringLiteral("sk-file"), [&](const QString& e) { saved = e; });
        QCOMPARE(saved, std::optional<QString>(QString()));
        QCOMPARE(modeOf(v->filePath()), 0600u);
        QCOMPARE(s.state->writes, 0);
        ApiKeyVault again(v->filePath(), nullptr);
        QVERIFY(again.load(nullptr));
        QCOMPARE(again.known(QStringLiteral("a")), std::optional<QString>(QStringLiteral("sk-file")));
    }

    void aWriteTheKeyringRefusesGoesToTheFile() {
        Setup s;
        auto v = s.vault();
        QVERIFY(v->load(nullptr));
        s.state->answerAll();  // a keyring answers
        s.state->failWith = QStringLiteral("access to the keyring was refused");
        std::optional<QString> saved;
        v->write(QStringLiteral("a"), QStringLiteral("sk-a"), [&](const QString& e) { saved = e; });
        s.state->answerAll();
        QCOMPARE(saved, std::optional<QString>(QString()));
        QVERIFY(!v->usingKeyring());
        QVERIFY(v->storageDescription().contains(QLatin1String("refused the key")));
        QCOMPARE(modeOf(v->filePath()), 0600u);
    }

    void anAnswerAfterItsAskerWentIsDropped() {
        Setup s;
        s.state->stored.insert(QStringLiteral("a"), QStringLiteral("sk-a"));
        auto v = s.vault();
        QVERIFY(v->load(nullptr));
        s.state->answerAll();
        auto asker = std::make_unique<QObject>();
        Answer read;
        v->read(QStringLiteral("a"), asker.get(), read.callback());
        asker.reset();
        s.state->answerAll();
        QVERIFY(!read.read);
        QCOMPARE(v->known(QStringLiteral("a")), std::optional<QString>(QStringLiteral("sk-a")));  // still kept

        // And after the vault went.
        Answer late;
        v->read(QStringLiteral("b"), nullptr, late.callback());
        v.reset();
        s.state->answerAll();
        QVERIFY(!late.read);
    }

    void renameMovesAKeyOnlyTheKeyringHolds() {
        Setup s;
        s.state->stored.insert(QStringLiteral("old"), QStringLiteral("sk-old"));
        auto v = s.vault();
        QVERIFY(v->load(nullptr));
        s.state->answerAll();
        std::optional<QString> moved;
        v->rename(QStringLiteral("old"), QStringLiteral("new"), [&](const QString& e) { moved = e; });
        // A read of the new name right away waits for the move, not the keyring's old state.
        Answer read;
        v->read(QStringLiteral("new"), nullptr, read.callback());
        s.state->answerAll();
        QCOMPARE(moved, std::optional<QString>(QString()));
        QVERIFY(read.read && read.read->ok);
        QCOMPARE(read.read->key, QStringLiteral("sk-old"));
        QCOMPARE(s.state->stored.value(QStringLiteral("new")), QStringLiteral("sk-old"));
        QVERIFY(!s.state->stored.contains(QStringLiteral("old")));
    }
};

QTEST_GUILESS_MAIN(ApiKeyVaultTest)
#include "api_key_vault_test.moc"
