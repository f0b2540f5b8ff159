// The whole window when storage fails, on the fake engine. Before, a database
// that was not SQLite, damaged or write-protected made the app exit 1 with no
// window, and a full disk only showed in stderr. Now: the window opens with a
// banner saying what is wrong, the file is left exactly as it was, a damaged
// file can be replaced by the backup copy from the banner (the damaged one is
// kept), and a full disk shows a banner and "not saved" on the reply until
// there is room again. Screenshots: $WEIR_SCREENSHOT_DIR/fake/storage-*.png.
#include <QDir>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QTest>

#include "AppDriver.h"
#include "DatabaseDamage.h"
#include "DesktopApp.h"
#include "FakeEngineBackend.h"
#include "chat/ChatController.h"
#include "engine_host/EngineHost.h"
#include "storage/Storage.h"

using namespace weir::desktop;
using namespace weir::desktop::testing;

namespace {

// Delegates of a list view are items of the scene but not QObject children
// of the window, so this walks the item tree.
bool anyVisible(QQuickItem* item, const QString& name) {
    if (!item || !item->isVisible()) return false;
    if (item->objectName() == name) return true;
    for (QQuickItem* child : item->childItems())
        if (anyVisible(child, name)) return true;
    return false;
}

bool anyVisible(QQuickWindow* window, const char* name) { return anyVisible(window->contentItem(), QString::fromLatin1(name)); }

} // namespace

class StorageBannerTest : public QObject {
    Q_OBJECT
    QString shots_;

    static QStringList noModel(const QString& dir) {
        return {QStringLiteral("weir"), QStringLiteral("--no-model"), QStringLiteral("--data-dir"), dir};
    }

private slots:
    void initTestCase() {
        shots_ = QDir(qEnvironmentVariable("WEIR_SCREENSHOT_DIR", QDir::tempPath())).filePath(QStringLiteral("fake"));
    }

    void unreadableDatabaseOpensTheWindowAndRestoresTheBackup() {
        QTemporaryDir dir;
        {
            Storage s(dir.path());
            QVERIFY(s.open());
            QVERIFY(s.createConversation(QStringLiteral("Kept conversation")) > 0);
            QVERIFY(s.backUp());
        }
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        QVERIFY(damage(path, Damage::NotADatabase));
        const QByteArray damaged = fileBytes(path);

        DesktopApp app(FakeEngineBackend::factory());
        QVERIFY(app.start(noModel(dir.path())));
        QQuickWindow* window = app.window();
        QVERIFY(window);
        window->resize(1200, 760);
        QVERIFY(QTest::qWaitForWindowExposed(window));
        QCOMPARE(app.storage()->mode(), StorageMode::Temporary);
        QQuickItem* banner = findItem(window, "storageBanner");
        QTRY_VERIFY(banner->isVisible());
        const QString text = banner->property("text").toString();
        QVERIFY2(text.contains(QStringLiteral("cannot read")) && text.contains(QStringLiteral("not a database")),
                 qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("backup copy")));
        QCOMPARE(fileBytes(path), damaged);
        QVERIFY(!saveScreenshot(window, shots_, QStringLiteral("storage-unreadable")).isEmpty());

        QVERIFY(clickItem(window, findItem(window, "storageBannerAction")));
        QTRY_COMPARE(app.storage()->mode(), StorageMode::ReadWrite);
        QTRY_VERIFY(!banner->isVisible());
        QCOMPARE(app.chat()->conversations()->count(), 1);
        QCOMPARE(app.chat()->currentTitle(), QStringLiteral("Kept conversation"));
        const QStringList kept = QDir(dir.path()).entryList({QStringLiteral("weir.damaged-*.sqlite3")});
        QCOMPARE(kept.size(), 1);
        QCOMPARE(fileBytes(dir.filePath(kept.first())), damaged);
    }

    void damagedDatabaseOpensReadOnly() {
        QTemporaryDir dir;
        QVERIFY(writeDatabase(dir.path(), QStringLiteral("Precious"), 200) > 0);
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        QVERIFY(damage(path, Damage::OverwrittenInTheMiddle));
        const QByteArray before = fileBytes(path);
        {
            DesktopApp app(FakeEngineBackend::factory());
            QVERIFY(app.start(noModel(dir.path())));
            QQuickWindow* window = app.window();
            QVERIFY(window);
            window->resize(1200, 760);
            QVERIFY(QTest::qWaitForWindowExposed(window));
            QCOMPARE(app.storage()->mode(), StorageMode::ReadOnly);
            QQuickItem* banner = findItem(window, "storageBanner");
            QTRY_VERIFY(banner->isVisible());
            const QString text = banner->property("text").toString();
            QVERIFY2(text.contains(QStringLiteral("damaged")) && text.contains(QStringLiteral("read-only")), qPrintable(text));
            QCOMPARE(app.chat()->conversations()->count(), 1);  // what is readable stays readable
            QVERIFY(!app.chat()->send(QStringLiteral("not saved anywhere")));
            QVERIFY(!saveScreenshot(window, shots_, QStringLiteral("storage-damaged")).isEmpty());
        }
        QCOMPARE(fileBytes(path), before);
    }

    void writeProtectedDatabaseOpensReadOnly() {
        QTemporaryDir dir;
        QVERIFY(writeDatabase(dir.path(), QStringLiteral("Mine"), 4) > 0);
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        if (!makeReadOnly(path)) QSKIP("cannot make a file read-only for this process here");
        const QByteArray before = fileBytes(path);
        {
            DesktopApp app(FakeEngineBackend::factory());
            QVERIFY(app.start(noModel(dir.path())));
            QQuickWindow* window = app.window();
            QVERIFY(window);
            QCOMPARE(app.storage()->mode(), StorageMode::ReadOnly);
            QQuickItem* banner = findItem(window, "storageBanner");
            QTRY_VERIFY(banner->isVisible());
            QVERIFY2(banner->property("text").toString().contains(QStringLiteral("cannot be written")),
                     qPrintable(banner->property("text").toString()));
            QVERIFY(!findItem(window, "storageBannerAction")->isVisible());  // the newest data is in this file
            QCOMPARE(app.chat()->conversations()->count(), 1);
        }
        makeWritable(path);
        QCOMPARE(fileBytes(path), before);
    }

    // Issue 26: on a read-only mount the window showed "cannot read" and an
    // empty session; it shows the conversations, read-only.
    void readOnlyFolderShowsItsConversations() {
        QTemporaryDir dir;
        QVERIFY(writeDatabase(dir.path(), QStringLiteral("Mine"), 4) > 0);
        const QString path = dir.filePath(QStringLiteral("weir.sqlite3"));
        if (!makeReadOnlyFolder(dir.path(), path)) QSKIP("cannot make a folder read-only for this process here");
        const QByteArray before = fileBytes(path);
        {
            DesktopApp app(FakeEngineBackend::factory());
            QVERIFY(app.start(noModel(dir.path())));
            QQuickWindow* window = app.window();
            QVERIFY(window);
            QCOMPARE(app.storage()->mode(), StorageMode::ReadOnly);
            QCOMPARE(app.chat()->conversations()->count(), 1);
            QQuickItem* banner = findItem(window, "storageBanner");
            QTRY_VERIFY(banner->isVisible());
            const QString text = banner->property("text").toString();
            QVERIFY2(text.contains(QStringLiteral("cannot be written")) && text.contains(QStringLiteral("is read-only")),
                     qPrintable(text));
            QVERIFY(!saveScreenshot(window, shots_, QStringLiteral("storage-read-only-folder")).isEmpty());
        }
        makeWritableFolder(dir.path(), path);
        QCOMPARE(fileBytes(path), before);
    }

    void fullDiskShowsABannerUntilThereIsRoom() {
        QTemporaryDir dir;
        FakeEngineConfig config;
        config.endless = true;
        config.tokenIntervalMs = 3;
        DesktopApp app(FakeEngineBackend::factory(config));
        QVERIFY(app.start({QStringLiteral("weir"), QStringLiteral("--model"), QStringLiteral("/models/fake.gguf"),
                           QStringLiteral("--data-dir"), dir.path()}));
        QQuickWindow* window = app.window();
        QVERIFY(window);
        window->resize(1200, 760);
        QVERIFY(QTest::qWaitForWindowExposed(window));
        QTRY_VERIFY_WITH_TIMEOUT(app.engineHost()->state() == EngineHost::Ready, 30000);
        QCOMPARE(app.storage()->mode(), StorageMode::ReadWrite);
        QVERIFY(!findItem(window, "storageBanner")->isVisible());
        ChatController* chat = app.chat();
        chat->setSaveInterval(100);
        QVERIFY(chat->sendTo(chat->newConversation(), QStringLiteral("Tell me everything about rivers")));
        app.storage()->setPageLimitForTesting(1);
        QQuickItem* banner = findItem(window, "saveProblemBanner");
        QTRY_VERIFY_WITH_TIMEOUT(banner->isVisible(), 30000);
        QVERIFY(banner->property("text").toString().contains(QStringLiteral("disk is full")));
        QTRY_VERIFY(anyVisible(window, "notSavedLabel"));
        QVERIFY(!saveScreenshot(window, shots_, QStringLiteral("storage-disk-full")).isEmpty());
        app.storage()->setPageLimitForTesting(0);
        QTRY_VERIFY_WITH_TIMEOUT(!banner->isVisible(), 30000);
        QTRY_VERIFY(!anyVisible(window, "notSavedLabel"));
        chat->stopAll();
        QTRY_VERIFY_WITH_TIMEOUT(chat->generatingCount() == 0, 30000);
    }
};

QTEST_MAIN(StorageBannerTest)
#include "storage_banner_test.moc"
