// Splitting replies into typed parts (text / code / thinking / quote), including the
// partial text seen while a reply streams, and the parts model's in-place
// updates.
#include <QSignalSpy>
#include <QTest>

#include "chat/MessageParts.h"
#include "chat/MessagePartsModel.h"

using namespace weir::desktop;

class MessagePartsTest : public QObject {
    Q_OBJECT
private slots:
    void plainTextIsOnePart() {
        const auto parts = splitMessage(QStringLiteral("Hello **world**.\n\nSecond paragraph."));
        QCOMPARE(parts.size(), 1);
        QCOMPARE(parts[0].kind, MessagePart::Text);
        QCOMPARE(parts[0].text, QStringLiteral("Hello **world**.\n\nSecond paragraph."));
    }

    void fencedCodeBetweenText() {
        const auto parts = splitMessage(QStringLiteral("Try this:\n\n```Python title\nprint(1)\n\nx = 2\n```\nDone."));
        QCOMPARE(parts.size(), 3);
        QCOMPARE(parts[0].text, QStringLiteral("Try this:"));
        QCOMPARE(parts[1].kind, MessagePart::Code);
        QCOMPARE(parts[1].language, QStringLiteral("python"));  // first word, lower case
        QCOMPARE(parts[1].text, QStringLiteral("print(1)\n\nx = 2"));
        QVERIFY(parts[1].closed);
        QCOMPARE(parts[2].text, QStringLiteral("Done."));
    }

    void tildeFenceAndLongerClosingFence() {
        const auto parts = splitMessage(QStringLiteral("~~~\na ``` b\n~~~~\n"));
        QCOMPARE(parts.size(), 1);
        QCOMPARE(parts[0].kind, MessagePart::Code);
        QCOMPARE(parts[0].text, QStringLiteral("a ``` b"));  // backticks inside a tilde fence are code
        QVERIFY(parts[0].language.isEmpty());
        QVERIFY(parts[0].closed);
    }

    void unclosedFenceWhileStreaming() {
        const auto parts = splitMessage(QStringLiteral("Code:\n```cpp\nint main() {\n  return"));
        QCOMPARE(parts.size(), 2);
        QCOMPARE(parts[1].kind, MessagePart::Code);
        QCOMPARE(parts[1].language, QStringLiteral("cpp"));
        QCOMPARE(parts[1].text, QStringLiteral("int main() {\n  return"));
        QVERIFY(!parts[1].closed);
    }

    void inlineBackticksAreNotFences() {
        const auto parts = splitMessage(QStringLiteral("Use ``` to fence, or `x` inline."));
        QCOMPARE(parts.size(), 1);
        QCOMPARE(parts[0].kind, MessagePart::Text);
    }

    void thinkingBlock() {
        const auto parts = splitMessage(QStringLiteral("<think>\nThe user wants X.\n</think>\nAnswer: X"));
        QCOMPARE(parts.size(), 2);
        QCOMPARE(parts[0].kind, MessagePart::Thinking);
        QCOMPARE(parts[0].text, QStringLiteral("The user wants X."));
        QVERIFY(parts[0].closed);
        QCOMPARE(parts[1].text, QStringLiteral("Answer: X"));

        const auto open = splitMessage(QStringLiteral("<think>\nStill thinking"));
        QCOMPARE(open.size(), 1);
        QVERIFY(!open[0].closed);
    }

    void blockQuoteIsAPartWithoutItsMarkers() {
        const auto parts = splitMessage(QStringLiteral("He said:\n> first line\n>second line\n>\n> - a list\nAfter."));
        QCOMPARE(parts.size(), 3);
        QCOMPARE(parts[0].text, QStringLiteral("He said:"));
        QCOMPARE(parts[1].kind, MessagePart::Quote);
        QCOMPARE(parts[1].text, QStringLiteral("first line\nsecond line\n\n- a list"));
        QCOMPARE(parts[2].kind, MessagePart::Text);
        QCOMPARE(parts[2].text, QStringLiteral("After."));

        MessagePartsModel model;
        model.setContent(QStringLiteral("> quoted"));
        QCOMPARE(model.data(model.index(0), MessagePartsModel::KindRole).toString(), QStringLiteral("quote"));
        // A '>' inside code or after other text on its line is not a quote.
        const auto code = splitMessage(QStringLiteral("```\n> not a quote\n```\na > b"));
        QCOMPARE(code.size(), 2);
        QCOMPARE(code[0].kind, MessagePart::Code);
        QCOMPARE(code[1].kind, MessagePart::Text);
    }

    void modelUpdatesInPlaceWhileStreaming() {
        MessagePartsModel model;
        model.setContent(QStringLiteral("Intro\n```js\nlet a"));
        QCOMPARE(model.rowCount(), 2);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);

        model.setContent(QStringLiteral("Intro\n```js\nlet a = 1;"));
        QCOMPARE(inserted.count(), 0);
        QCOMPARE(removed.count(), 0);
        QCOMPARE(changed.count(), 1);  // only the code row
        QCOMPARE(changed.first().at(0).toModelIndex().row(), 1);
        QCOMPARE(model.data(model.index(1), MessagePartsModel::TextRole).toString(), QStringLiteral("let a = 1;"));

        model.setContent(QStringLiteral("Intro\n```js\nlet a = 1;\n```\nAfter"));
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.data(model.index(1), MessagePartsModel::ClosedRole).toBool(), true);
        QCOMPARE(model.data(model.index(2), MessagePartsModel::KindRole).toString(), QStringLiteral("text"));
    }

    void kindChangeReplacesRows() {
        MessagePartsModel model;
        model.setContent(QStringLiteral("a\n```\ncode\n```\nb"));
        QCOMPARE(model.rowCount(), 3);
        model.setContent(QStringLiteral("a\nb"));  // edited: no code any more
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.data(model.index(0), MessagePartsModel::TextRole).toString(), QStringLiteral("a\nb"));
    }
};

QTEST_GUILESS_MAIN(MessagePartsTest)
#include "message_parts_test.moc"
