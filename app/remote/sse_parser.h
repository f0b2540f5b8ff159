#pragma once
// An incremental parser for server-sent events (the WHATWG "event stream"
// rules), fed whatever bytes a read brought: lines end in LF, CRLF or CR (a CR
// at the end of one read and the LF at the start of the next are one line
// end); a line starting with ':' is a comment; "field: value" drops one space
// after the colon; several data lines join with '\n'; a blank line dispatches
// the event, and an event with no data is dropped. A UTF-8 byte-order mark at
// the very start is skipped. Bytes are kept until a line is complete, so a
// character split across reads is never decoded in halves.
#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

namespace weir::remote {

struct SseEvent {
    QString type;     // "message" unless the event said otherwise
    QByteArray data;  // the data lines joined with '\n', without the final one
    QString id;       // the last event id seen (carried across events, as the rules say)
};

class SseParser {
public:
    // Parses what arrived; returns the events it completed.
    QList<SseEvent> feed(QByteArrayView bytes);
    // The reconnection time the stream asked for ("retry:"), or -1.
    int retryMs() const { return retryMs_; }
    // True when bytes of an unfinished event are held (the stream ended mid-event).
    bool hasPartialEvent() const { return !pending_.isEmpty() || !data_.isEmpty() || dataSeen_; }

private:
    void line(QByteArrayView l, QList<SseEvent>& out);

    QByteArray pending_;   // an incomplete line
    bool started_ = false, lastWasCr_ = false;
    QByteArray data_, type_;
    bool dataSeen_ = false;
    QString lastId_;
    int retryMs_ = -1;
};

} // namespace weir::remote
