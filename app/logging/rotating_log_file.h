#pragma once
// The app's log file, capped in size: lines go to FILE (e.g. DATA/logs/weir.log)
// until the next one would take it past maxBytes; then FILE.N-2 becomes
// FILE.N-1, ..., FILE becomes FILE.1 and a new FILE starts. At most `files`
// files are kept (FILE and FILE.1 .. FILE.<files-1>); the oldest is dropped.
// Safe from any thread: Qt messages arrive from the engine's and server's
// threads as well as the UI's.
#include <QDateTime>
#include <QFile>
#include <QMutex>
#include <QString>
#include <QStringList>
#include <QtGlobal>

namespace weir::logging {

class RotatingLogFile {
public:
    struct Limits {
        qint64 maxBytes = 1024 * 1024;  // per file
        int files = 5;                  // the current one included
    };

    RotatingLogFile(const QString& path, Limits limits);
    ~RotatingLogFile();
    RotatingLogFile(const RotatingLogFile&) = delete;
    RotatingLogFile& operator=(const RotatingLogFile&) = delete;

    // Creates the folder and opens FILE for appending (what an earlier run
    // wrote stays). False, with the reason in `error`, when it cannot.
    bool open(QString* error = nullptr);
    QString path() const { return path_; }
    Limits limits() const { return limits_; }
    // Appends `line` and a newline; a line longer than a whole file is cut.
    void append(const QString& line);
    // The files that exist, the current one first, then the older ones.
    QStringList existingFiles() const;

private:
    void rotateLocked();
    QString numbered(int n) const { return n == 0 ? path_ : path_ + QLatin1Char('.') + QString::number(n); }

    const QString path_;
    const Limits limits_;
    mutable QMutex mutex_;
    QFile file_;
};

// "2026-12-03T19:30:01.123 info weir.server: POST /v1/completions 200 ..."
QString formatLogLine(QtMsgType type, const char* category, const QString& message, const QDateTime& when);

// Sends every Qt message (all categories) to `file` as well as to the handler
// installed before (stderr by default). nullptr stops writing to a file. The
// file must outlive its installation.
void installLogFileHandler(RotatingLogFile* file);
// Stops writing to `file` if it is the one installed (a RotatingLogFile does
// this when it is destroyed).
void uninstallLogFileHandler(RotatingLogFile* file);

} // namespace weir::logging
