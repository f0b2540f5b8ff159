#pragma once
// Ways a database file goes bad, for the storage tests: bytes overwritten in
// the middle (of the messages, or of an index only), a truncated file, a file that is not SQLite at all, and a file
// this process may not write (chmod, or for root, which ignores permission
// bits, the immutable attribute).
#include <QFile>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <unistd.h>

#include "storage/Records.h"
#include "storage/Storage.h"

namespace weir::desktop::testing {

inline QByteArray fileBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A database in `dir` with one conversation titled `title` and `messages`
// messages of 500 characters (many pages), closed so the file holds it all.
inline qint64 writeDatabase(const QString& dir, const QString& title, int messages) {
    Storage s(dir);
    if (!s.open()) return 0;
    const qint64 id = s.createConversation(title);
    for (int i = 0; i < messages; ++i) {
        MessageRecord m;
        m.conversationId = id;
        m.role = i % 2 ? QStringLiteral("assistant") : QStringLiteral("user");
        m.content = QString(500, QChar(u'a' + i % 26));
        s.appendMessage(m);
    }
    return id;  // closing the last connection moves the log into the file
}

enum class Damage { OverwrittenInTheMiddle, IndexPage, Truncated, NotADatabase };

// The page number of the root of `index` in the database at `path` (0 if none).
inline qint64 rootPageOf(const QString& path, const QString& index) {
    qint64 page = 0;
    {
        QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("damage-lookup"));
        d.setDatabaseName(path);
        d.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY"));
        if (d.open()) {
            QSqlQuery q(d);
            q.prepare(QStringLiteral("SELECT rootpage FROM sqlite_master WHERE name = ?"));
            q.addBindValue(index);
            if (q.exec() && q.next()) page = q.value(0).toLongLong();
        }
        d.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("damage-lookup"));
    return page;
}

// Damages the file at `path` in place; false if it could not.
inline bool damage(const QString& path, Damage kind) {
    QFile f(path);
    if (!f.open(QIODevice::ReadWrite)) return false;
    const qint64 size = f.size();
    switch (kind) {
    case Damage::OverwrittenInTheMiddle: {
        // One whole page in the middle of the messages, page-aligned.
        const qint64 page = 4096;
        const qint64 at = (size / page / 2) * page;
        return f.seek(at) && f.write(QByteArray(page, char(0xAB))) == page;
    }
    case Damage::IndexPage: {
        // Only an index: every row is still there, and a write that scans the
        // table (as opening once did) does not notice.
        const qint64 root = rootPageOf(path, QStringLiteral("messages_by_conversation"));
        return root > 1 && f.seek((root - 1) * 4096) && f.write(QByteArray(2000, char(0xAB))) == 2000;
    }
    case Damage::Truncated: return f.resize(size / 2);
    case Damage::NotADatabase:
        return f.resize(0) && f.write(QByteArray("These are not the droppings of SQLite.\n").repeated(200)) > 0;
    }
    return false;
}

inline bool writable(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadWrite);
}

// Makes `path` unwritable for this process; false if that is not possible here.
// Undo with makeWritable (QTemporaryDir cannot remove an immutable file).
inline bool makeReadOnly(const QString& path) {
    QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::ReadGroup | QFileDevice::ReadOther);
    if (!writable(path)) return true;
    if (::geteuid() == 0) QProcess::execute(QStringLiteral("chattr"), {QStringLiteral("+i"), path});
    return !writable(path);
}

inline void makeWritable(const QString& path) {
    if (::geteuid() == 0) QProcess::execute(QStringLiteral("chattr"), {QStringLiteral("-i"), path});
    QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
}

// Whether a file can be created in `dir`.
inline bool canCreateIn(const QString& dir) {
    QFile probe(dir + QStringLiteral("/.weir-write-probe"));
    if (!probe.open(QIODevice::WriteOnly)) return false;
    probe.close();
    probe.remove();
    return true;
}

// Makes the folder `dir` and the database in it unwritable for this process,
// as on a read-only mount: nothing can be created beside the file (chmod, or
// for root the immutable attribute on the folder). False if not possible here.
// Undo with makeWritableFolder.
inline bool makeReadOnlyFolder(const QString& dir, const QString& database) {
    if (!makeReadOnly(database)) return false;
    QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::ExeOwner);
    if (canCreateIn(dir)) {
        if (::geteuid() == 0) QProcess::execute(QStringLiteral("chattr"), {QStringLiteral("+i"), dir});
    }
    return !canCreateIn(dir);
}

inline void makeWritableFolder(const QString& dir, const QString& database) {
    if (::geteuid() == 0) QProcess::execute(QStringLiteral("chattr"), {QStringLiteral("-i"), dir});
    QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    makeWritable(database);
}

} // namespace weir::desktop::testing
