#include "app/logging/rotating_log_file.h"

#include <QDir>
#include <QFileInfo>
#include <QMutexLocker>
#include <atomic>

namespace weir::logging {

RotatingLogFile::RotatingLogFile(const QString& path, Limits limits)
    : path_(QFileInfo(path).absoluteFilePath()), limits_{std::max<qint64>(limits.maxBytes, 256), std::max(limits.files, 1)} {}

RotatingLogFile::~RotatingLogFile() { uninstallLogFileHandler(this); }

bool RotatingLogFile::open(QString* error) {
    QMutexLocker lock(&mutex_);
    if (file_.isOpen()) return true;
    const QString dir = QFileInfo(path_).absolutePath();
    if (!QDir().mkpath(dir)) {
        if (error) *error = QStringLiteral("cannot create the log folder %1").arg(dir);
        return false;
    }
    file_.setFileName(path_);
    if (!file_.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Text)) {
        if (error) *error = QStringLiteral("cannot open the log file %1: %2").arg(path_, file_.errorString());
        return false;
    }
    return true;
}

void RotatingLogFile::append(const QString& line) {
    QByteArray bytes = line.toUtf8();
    if (bytes.size() + 1 > limits_.maxBytes) {
        // Cut on a character boundary: drop UTF-8 continuation bytes at the cut.
        qsizetype cut = limits_.maxBytes - 1;
        while (cut > 0 && (uchar(bytes[cut]) & 0xC0) == 0x80) --cut;
        bytes.truncate(cut);
    }
    bytes.append('\n');
    QMutexLocker lock(&mutex_);
    if (!file_.isOpen()) return;
    if (file_.size() > 0 && file_.size() + bytes.size() > limits_.maxBytes) rotateLocked();
    if (!file_.isOpen()) return;
    file_.write(bytes);
    file_.flush();  // a crash must not take the last lines with it
}

void RotatingLogFile::rotateLocked() {
    file_.close();
    QFile::remove(numbered(limits_.files - 1));
    for (int n = limits_.files - 2; n >= 0; --n)
        if (QFile::exists(numbered(n))) QFile::rename(numbered(n), numbered(n + 1));
    if (limits_.files == 1) QFile::remove(path_);
    file_.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Text);
}

QStringList RotatingLogFile::existingFiles() const {
    QMutexLocker lock(&mutex_);
    QStringList out;
    for (int n = 0; n < limits_.files; ++n)
        if (QFile::exists(numbered(n))) out << numbered(n);
    return out;
}

QString formatLogLine(QtMsgType type, const char* category, const QString& message, const QDateTime& when) {
    const char* level = "debug";
    switch (type) {
    case QtDebugMsg: level = "debug"; break;
    case QtInfoMsg: level = "info"; break;
    case QtWarningMsg: level = "warning"; break;
    case QtCriticalMsg: level = "critical"; break;
    case QtFatalMsg: level = "fatal"; break;
    }
    return QStringLiteral("%1 %2 %3: %4")
        .arg(when.toString(Qt::ISODateWithMs), QLatin1String(level),
             QLatin1String(category && *category ? category : "default"), message);
}

namespace {

std::atomic<RotatingLogFile*> installedFile{nullptr};
QtMessageHandler previousHandler = nullptr;
std::atomic<bool> handlerInstalled{false};

void writeToFileAndPassOn(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (RotatingLogFile* f = installedFile.load())
        f->append(formatLogLine(type, context.category, message, QDateTime::currentDateTime()));
    // Qt returns its default handler (stderr, QT_MESSAGE_PATTERN) when none was installed.
    if (previousHandler) previousHandler(type, context, message);
}

} // namespace

void uninstallLogFileHandler(RotatingLogFile* file) {
    // Only when it is still the installed one: a newer file stays installed.
    RotatingLogFile* expected = file;
    installedFile.compare_exchange_strong(expected, nullptr);
}

void installLogFileHandler(RotatingLogFile* file) {
    installedFile.store(file);
    if (file && !handlerInstalled.exchange(true)) previousHandler = qInstallMessageHandler(writeToFileAndPassOn);
}

} // namespace weir::logging
