#pragma once
// Mends how Qt Quick's own file dialog (the one drawn when the desktop offers
// no native dialog: no xdg-desktop-portal or GTK platform theme) behaves, so
// its flows match what the dialog shows:
//  - Save: the name typed in the name field is the file saved, also after
//    moving to another folder (Qt 6.4 keeps the old selection, or makes a URL
//    without the file scheme, and Export then does nothing or writes elsewhere).
//    Enter in the name field accepts.
//  - Open: the highlighted entry is the selection (Qt 6.4 highlights the first
//    entry but leaves the selection empty, so Open stays disabled).
// Native dialogs are untouched: there is no Qt Quick dialog item to mend then.
#include <QObject>
#include <QPointer>
#include <QUrl>

class QQuickItem;
class QQuickWindow;

namespace weir::desktop {

class FileDialogFlows : public QObject {
    Q_OBJECT
public:
    // Watches `window` for the Qt Quick file dialogs created in it (they are
    // made the first time a FileDialog opens).
    explicit FileDialogFlows(QQuickWindow* window);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void adopt(QObject* dialog);

    QPointer<QQuickWindow> window_;
    bool scanQueued_ = false;
};

} // namespace weir::desktop
