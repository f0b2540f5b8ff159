#pragma once
// Helpers for tests that drive the whole app window (the fake-engine window
// test and the end-to-end test): find items by objectName, click and type as
// a user would, switch pages, save screenshots, and measure frame times.
#include <QDir>
#include <QElapsedTimer>
#include <QGuiApplication>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTest>
#include <QTimer>
#include <algorithm>
#include <ctime>
#include <mutex>

namespace weir::desktop::testing {

// Items declared in the window's QML are QObject children of the window.
inline QQuickItem* findItem(QQuickWindow* window, const char* name) {
    QQuickItem* item = window->findChild<QQuickItem*>(QString::fromLatin1(name));
    if (!item) qWarning("no item named %s in the window", name);
    return item;
}

// Clicks the centre of a visible item.
inline bool clickItem(QQuickWindow* window, QQuickItem* item) {
    if (!item || !item->isVisible()) return false;
    const QPointF centre = item->mapToScene(QPointF(item->width() / 2, item->height() / 2));
    QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier, centre.toPoint());
    return true;
}

inline void typeText(QQuickWindow* window, const QString& text) {
    for (QChar c : text) QTest::keyClick(window, c.toLatin1());
}

// Writes the window as it is now to `dir`/`name`.png; returns the path ("" on failure).
inline QString saveScreenshot(QQuickWindow* window, const QString& dir, const QString& name) {
    QDir().mkpath(dir);
    // Let pending layout and painting settle before grabbing.
    for (int i = 0; i < 5; ++i) QTest::qWait(30);
    const QImage image = window->grabWindow();
    const QString path = QDir(dir).filePath(name + QStringLiteral(".png"));
    return !image.isNull() && image.save(path) ? path : QString();
}

// CPU time the calling thread has used, in ms. On a loaded machine wall time
// also counts time other processes held the cores; this does not.
inline double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Frame and event-loop timing while something runs: the longest frame
// (beforeFrameBegin -> afterFrameEnd), the longest gap between frames (the
// scene animates while replies stream, so frames keep coming), and the
// longest stall of the GUI event loop (a 4 ms timer arriving late).
class FrameMeter : public QObject {
public:
    explicit FrameMeter(QQuickWindow* window) : window_(window) {
        connect(window, &QQuickWindow::beforeFrameBegin, this, [this] {
            frameClock_.start();
            frameCpuStart_ = threadCpuMs();
        }, Qt::DirectConnection);
        connect(window, &QQuickWindow::afterFrameEnd, this, [this] {
            if (!frameClock_.isValid()) return;
            const double ms = frameClock_.nsecsElapsed() / 1e6;
            const double cpu = threadCpuMs() - frameCpuStart_;
            std::lock_guard lock(mutex_);
            longestFrameMs_ = std::max(longestFrameMs_, ms);
            longestFrameCpuMs_ = std::max(longestFrameCpuMs_, cpu);
            if (lastFrameEnd_.isValid()) longestGapMs_ = std::max(longestGapMs_, lastFrameEnd_.nsecsElapsed() / 1e6);
            lastFrameEnd_.start();
            ++frames_;
        }, Qt::DirectConnection);
        ticker_.setInterval(4);
        ticker_.setTimerType(Qt::PreciseTimer);
        connect(&ticker_, &QTimer::timeout, this, [this] {
            const double cpu = threadCpuMs();
            if (tickClock_.isValid()) {
                longestStallMs_ = std::max(longestStallMs_, tickClock_.nsecsElapsed() / 1e6 - 4.0);
                longestStallCpuMs_ = std::max(longestStallCpuMs_, cpu - tickCpu_);
            }
            tickClock_.start();
            tickCpu_ = cpu;
        });
        ticker_.start();
    }
    double longestFrameMs() const { std::lock_guard lock(mutex_); return longestFrameMs_; }
    double longestGapMs() const { std::lock_guard lock(mutex_); return longestGapMs_; }
    double longestStallMs() const { return longestStallMs_; }
    double longestFrameCpuMs() const { std::lock_guard lock(mutex_); return longestFrameCpuMs_; }
    double longestStallCpuMs() const { return longestStallCpuMs_; }
    QString summary() const {
        return QStringLiteral("%1 frames; longest frame %2 ms wall (%3 ms CPU); longest gap between frames %4 ms; "
                              "longest GUI event-loop stall %5 ms wall (%6 ms CPU)")
            .arg(frames()).arg(longestFrameMs(), 0, 'f', 1).arg(longestFrameCpuMs(), 0, 'f', 1)
            .arg(longestGapMs(), 0, 'f', 1).arg(longestStallMs(), 0, 'f', 1).arg(longestStallCpuMs(), 0, 'f', 1);
    }
    int frames() const { std::lock_guard lock(mutex_); return frames_; }

private:
    QQuickWindow* window_;
    mutable std::mutex mutex_;
    QElapsedTimer frameClock_, lastFrameEnd_, tickClock_;
    QTimer ticker_;
    double longestFrameMs_ = 0, longestGapMs_ = 0, longestStallMs_ = 0;
    double longestFrameCpuMs_ = 0, longestStallCpuMs_ = 0, frameCpuStart_ = 0, tickCpu_ = 0;
    int frames_ = 0;
};

} // namespace weir::desktop::testing
