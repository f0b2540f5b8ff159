#include "dialogs/FileDialogFlows.h"

#include <QChildEvent>
#include <QDir>
#include <QFileInfo>
#include <QQuickItem>
#include <QQuickWindow>
#include <QTimer>

namespace weir::desktop {

namespace {

// Qt Quick's dialog reports a typed name as a URL without the file scheme;
// both forms name a local path here.
QString localPath(const QUrl& url) {
    if (url.isLocalFile()) return url.toLocalFile();
    return url.scheme().isEmpty() ? url.path() : QString();
}

QObject* objectProperty(QObject* object, const char* name) {
    return object ? object->property(name).value<QObject*>() : nullptr;
}

bool sameFolder(const QString& a, const QString& b) {
    return !a.isEmpty() && QDir::cleanPath(a) == QDir::cleanPath(b);
}

} // namespace

// One Qt Quick file dialog and the parts of it that take part in the flows
// (Qt's FileDialog.qml names them on its FileDialogImpl attached object).
// Connected by signal name: these are Qt's private classes, with no headers
// to include, and a part that is missing in some Qt version is skipped.
class MendedFileDialog : public QObject {
    Q_OBJECT
public:
    MendedFileDialog(QObject* dialog, QObject* attached) : QObject(dialog), dialog_(dialog) {
        list_ = qobject_cast<QQuickItem*>(objectProperty(attached, "fileDialogListView"));
        nameField_ = qobject_cast<QQuickItem*>(objectProperty(attached, "fileNameTextField"));
        buttons_ = qobject_cast<QQuickItem*>(objectProperty(attached, "buttonBox"));
        connect(dialog, SIGNAL(currentFolderChanged(QUrl)), this, SLOT(nameChanged()));
        connect(dialog, SIGNAL(selectedFileChanged(QUrl)), this, SLOT(settle()));
        connect(dialog, SIGNAL(visibleChanged()), this, SLOT(settle()));
        if (list_) {
            connect(list_, SIGNAL(currentIndexChanged()), this, SLOT(settle()));
            connect(list_, SIGNAL(countChanged()), this, SLOT(settle()));
        }
        if (nameField_) {
            connect(nameField_, SIGNAL(textChanged()), this, SLOT(nameChanged()));
            // Enter in the name field means "save": the dialog turns the name
            // into its selection on the same key, so click accept after that.
            connect(nameField_, SIGNAL(accepted()), this, SLOT(acceptSoon()));
        }
        settle();
    }

private slots:
    void settle() { mend(false); }
    // An edited name, or a new folder, wins over a folder selected in the list.
    void nameChanged() { mend(true); }

    void acceptSoon() {
        QTimer::singleShot(0, this, [this] {
            settle();
            if (QQuickItem* accept = acceptButton(); accept && accept->isEnabled())
                QMetaObject::invokeMethod(accept, "clicked");
        });
    }

private:
    void mend(bool nameFirst) {
        if (settling_ || !dialog_->property("visible").toBool()) return;
        settling_ = true;
        if (saving()) typedNameWins(nameFirst);
        else highlightIsSelection();
        settling_ = false;
    }

    // The name field shows only when the dialog saves.
    bool saving() const { return nameField_ && nameField_->isVisible(); }
    QString folder() const { return localPath(dialog_->property("currentFolder").toUrl()); }
    QString selected() const { return localPath(dialog_->property("selectedFile").toUrl()); }

    void select(const QString& path) {
        if (path != selected()) dialog_->setProperty("selectedFile", QUrl::fromLocalFile(path));
    }

    // Save: the name in the field, in the folder shown (or the path typed, if
    // it is absolute). A folder clicked in the list keeps its selection until
    // the name is edited again, so that the accept button still enters it.
    void typedNameWins(bool nameFirst) {
        const QString name = nameField_->property("text").toString().trimmed();
        if (name.isEmpty() || folder().isEmpty()) return;
        const QFileInfo current(selected());
        if (!nameFirst && current.isDir() && sameFolder(current.path(), folder())) return;
        select(QDir(folder()).absoluteFilePath(name));
    }

    // Open: the highlighted entry, once the list shows the current folder,
    // unless something in this folder is already selected.
    void highlightIsSelection() {
        if (!list_) return;
        const QString current = selected();
        if (!current.isEmpty() && sameFolder(QFileInfo(current).path(), folder())) return;
        auto* item = list_->property("currentItem").value<QQuickItem*>();
        const QString highlighted = item ? localPath(item->property("file").toUrl()) : QString();
        if (!highlighted.isEmpty() && sameFolder(QFileInfo(highlighted).path(), folder())) select(highlighted);
    }

    // The button with the accept role (DialogButtonBox.AcceptRole is 0).
    QQuickItem* acceptButton() const {
        if (!buttons_) return nullptr;
        for (QQuickItem* button : buttons_->findChildren<QQuickItem*>()) {
            for (QObject* child : button->children())
                if (child->inherits("QQuickDialogButtonBoxAttached") && child->property("buttonRole").toInt() == 0)
                    return button;
        }
        return nullptr;
    }

    QObject* dialog_;
    QQuickItem* list_ = nullptr;
    QQuickItem* nameField_ = nullptr;
    QQuickItem* buttons_ = nullptr;
    bool settling_ = false;
};

FileDialogFlows::FileDialogFlows(QQuickWindow* window) : QObject(window), window_(window) {
    window->installEventFilter(this);
}

bool FileDialogFlows::eventFilter(QObject* watched, QEvent* event) {
    // A dialog is still being built when it is added; look once it is whole.
    if (watched == window_ && event->type() == QEvent::ChildAdded && !scanQueued_) {
        scanQueued_ = true;
        QTimer::singleShot(0, this, [this] {
            scanQueued_ = false;
            if (!window_) return;
            for (QObject* child : window_->children())
                if (child->inherits("QQuickFileDialogImpl") && !child->findChild<MendedFileDialog*>(QString(), Qt::FindDirectChildrenOnly))
                    adopt(child);
        });
    }
    return QObject::eventFilter(watched, event);
}

void FileDialogFlows::adopt(QObject* dialog) {
    for (QObject* child : dialog->children())
        if (child->inherits("QQuickFileDialogImplAttached")) {
            new MendedFileDialog(dialog, child);
            return;
        }
}

} // namespace weir::desktop

#include "FileDialogFlows.moc"
