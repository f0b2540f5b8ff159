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

// Frame and event-loop timing while something runs: the longest frame
// (beforeFrameBegin -> afterFrameEnd), the longest gap between frames, and
// the longest stall of the GUI event loop (a 4 ms timer arriving late).
class FrameMeter : public QObject {
public:
    explicit FrameMeter(QQuickWindow* window) : window_(window) {
        connect(window, &QQuickWindow::beforeFrameBegin, this, [this] { frameClock_.start(); }, Qt::DirectConnection);
        connect(window, &QQuickWindow::afterFrameEnd, this, [this] {
            if (!frameClock_.isValid()) return;
            const double ms = frameClock_.nsecsElapsed() / 1e6;
            std::lock_guard lock(mutex_);
            longestFrameMs_ = std::max(longestFrameMs_, ms);
            if (lastFrameEnd_.isValid()) longestGapMs_ = std::max(longestGapMs_, lastFrameEnd_.nsecsElapsed() / 1e6);
            lastFrameEnd_.start();
            ++frames_;
        }, Qt::DirectConnection);
        ticker_.setInterval(4);
        ticker_.setTimerType(Qt::PreciseTimer);
        connect(&ticker_, &QTimer::timeout, this, [this] {
            if (tickClock_.isValid()) longestStallMs_ = std::max(longestStallMs_, tickClock_.nsecsElapsed() / 1e6 - 4.0);
            tickClock_.start();
            // Keep the scene animating so frames are produced all the time.
            window_->update();
        });
        ticker_.start();
    }
    double longestFrameMs() const { std::lock_guard lock(mutex_); return longestFrameMs_; }
    double longestGapMs() const { std::lock_guard lock(mutex_); return longestGapMs_; }
    double longestStallMs() const { return longestStallMs_; }
    int frames() const { std::lock_guard lock(mutex_); return frames_; }

private:
    QQuickWindow* window_;
    mutable std::mutex mutex_;
    QElapsedTimer frameClock_, lastFrameEnd_, tickClock_;
    QTimer ticker_;
    double longestFrameMs_ = 0, longestGapMs_ = 0, longestStallMs_ = 0;
    int frames_ = 0;
};

} // namespace weir::desktop::testing
