// kill -9 during generation loses no earlier message. A child process (this
// executable with --child) runs the real ChatController on the fake engine,
// streaming a reply that never ends; the parent waits until the child has
// saved the partial reply twice, SIGKILLs it, then opens the database: every
// earlier message is intact and the partial reply is marked interrupted with
// at least the text the child reported saved.
#include <QCoreApplication>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "FakeEngineBackend.h"
#include "chat/ChatController.h"
#include "engine_host/EngineHost.h"
#include "storage/Storage.h"

using namespace weir::desktop;

namespace {

int runChild(const QString& dataDir) {
    Storage storage(dataDir);
    if (!storage.open()) return 2;
    // An earlier, finished exchange.
    const qint64 conv = storage.createConversation(QStringLiteral("Kill test"));
    MessageRecord m;
    m.conversationId = conv;
    m.role = QStringLiteral("user");
    m.content = QStringLiteral("earlier question");
    storage.appendMessage(m);
    m.role = QStringLiteral("assistant");
    m.content = QStringLiteral("earlier answer, complete");
    storage.appendMessage(m);

    testing::FakeEngineConfig config;
    config.endless = true;
    config.tokenIntervalMs = 5;
    EngineHost host(testing::FakeEngineBackend::factory(config));
    ChatController chat(&storage, &host);
    QObject::connect(&chat, &ChatController::replySaved, [](qint64, qint64 id, int length) {
        std::printf("saved %lld %d\n", static_cast<long long>(id), length);
        std::fflush(stdout);
    });
    QObject::connect(&host, &EngineHost::stateChanged, [&] {
        if (host.state() == EngineHost::Ready) chat.sendTo(conv, QStringLiteral("a question that never ends"));
    });
    host.load(QStringLiteral("fake.gguf"));
    return QCoreApplication::exec();
}

} // namespace

class StorageKillTest : public QObject {
    Q_OBJECT
private slots:
    void killDuringGenerationKeepsEverything() {
        QTemporaryDir dir;
        QProcess child;
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--child"), dir.path()});
        QVERIFY(child.waitForStarted());

        // Wait (generously: a loaded CI box) for two periodic saves.
        int saves = 0;
        qint64 messageId = 0;
        int savedLength = 0;
        QByteArray buffer;
        while (saves < 2) {
            if (!child.waitForReadyRead(60000)) QFAIL("the child never reported a save");
            buffer += child.readAllStandardOutput();
            int nl;
            while ((nl = buffer.indexOf('\n')) >= 0) {
                const QList<QByteArray> parts = buffer.left(nl).split(' ');
                buffer.remove(0, nl + 1);
                if (parts.size() == 3 && parts[0] == "saved") {
                    ++saves;
                    messageId = parts[1].toLongLong();
                    savedLength = parts[2].toInt();
                }
            }
        }
        QVERIFY(savedLength > 0);
        ::kill(pid_t(child.processId()), SIGKILL);
        QVERIFY(child.waitForFinished(30000));
        QCOMPARE(child.exitStatus(), QProcess::CrashExit);

        Storage storage(dir.path());
        QVERIFY2(storage.open(), qPrintable(storage.lastError()));
        QCOMPARE(storage.interruptedAtOpen(), 1);
        const auto conversations = storage.conversations();
        QCOMPARE(conversations.size(), 1);
        const auto messages = storage.messages(conversations[0].id);
        QCOMPARE(messages.size(), 4);
        QCOMPARE(messages[0].content, QStringLiteral("earlier question"));
        QCOMPARE(messages[1].content, QStringLiteral("earlier answer, complete"));
        QCOMPARE(messages[1].state, MessageState::Complete);
        QCOMPARE(messages[2].content, QStringLiteral("a question that never ends"));
        QCOMPARE(messages[3].id, messageId);
        QCOMPARE(messages[3].state, MessageState::Interrupted);
        // At least what was reported saved, and exactly the start of the stream.
        QVERIFY(messages[3].content.size() >= savedLength);
        QVERIFY(messages[3].content.startsWith(QStringLiteral("word0 word1 ")));

        // Opening again finds nothing left to mark.
        Storage again(dir.path());
        QVERIFY(again.open());
        QCOMPARE(again.interruptedAtOpen(), 0);
    }
};

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    if (argc >= 3 && std::strcmp(argv[1], "--child") == 0) return runChild(QString::fromLocal8Bit(argv[2]));
    StorageKillTest test;
    return QTest::qExec(&test, argc, argv);
}
#include "storage_kill_test.moc"
