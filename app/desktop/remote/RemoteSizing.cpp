#include "RemoteSizing.h"

#include <QLocale>

#include <algorithm>
#include <QStringList>

namespace weir::desktop {

namespace {
QString number(qint64 n) { return QLocale().toString(n); }
QString conversationsText(qint64 n) {
    return n == 1 ? QStringLiteral("1 conversation") : QStringLiteral("%1 conversations").arg(number(n));
}
} // namespace

RemoteSizingAdvice adviseRemoteSizing(const RemoteSizingInput& in) {
    RemoteSizingAdvice a;
    if (in.conversations < 1) {
        a.text = QStringLiteral("The number of conversations at once must be at least 1 (it is %1).").arg(in.conversations);
        return a;
    }
    // Zero or less from a server means it did not say (0 below: not known).
    const qint64 context = std::max<qint64>(in.contextLength.value_or(0), 0);
    const qint64 capacity = std::max<qint64>(in.kvCapacityTokens.value_or(0), 0);
    const qint64 maxRunning = std::max<qint64>(in.maxRunning.value_or(0), 0);

    QStringList said;
    const QString n = conversationsText(in.conversations);
    if (maxRunning) {
        a.checked = true;
        if (in.conversations > maxRunning) {
            a.queues = true;
            said << QStringLiteral("%1 at once is more than the %2 requests the server runs at once: %3 would wait in its queue.")
                        .arg(n, number(maxRunning), number(in.conversations - maxRunning));
        }
    }
    // llama.cpp's slots say what each holds (all of a cache they share);
    // else slots split the cache evenly.
    const qint64 perSlot = std::max<qint64>(in.slotContextTokens.value_or(maxRunning ? capacity / maxRunning : 0), 0);
    if (capacity && context) {
        a.checked = true;
        a.fitAtFullContext = capacity / context;
    }
    if (context && maxRunning && perSlot && perSlot < context) {
        // A conversation stops growing at its slot's end.
        a.checked = true;
        a.preempts = true;
        said << QStringLiteral("Each of its %1 slots holds %2 tokens, less than the model's context of %3: a longer "
                               "conversation does not fit its slot.")
                    .arg(number(maxRunning), number(perSlot), number(context));
    } else if (capacity && context && !maxRunning && qint64(in.conversations) * context > capacity) {
        a.preempts = true;
        said << QStringLiteral("Its KV cache holds %1 tokens, room for %2 at the model's full context of %3 tokens: "
                               "with %4 at once, long ones would be preempted (paused and recomputed) or held back.")
                    .arg(number(capacity), conversationsText(*a.fitAtFullContext), number(context), n);
    }
    if (a.warns()) {
        a.text = said.join(u' ');
        return a;
    }
    const QString fit = in.conversations == 1 ? QStringLiteral("fits") : QStringLiteral("fit");
    if (!a.checked) {
        QStringList missing;
        if (!maxRunning) missing << QStringLiteral("how many requests it runs at once");
        if (!capacity) missing << QStringLiteral("its KV cache size");
        if (capacity && !context) missing << QStringLiteral("the model's context length");
        a.text = QStringLiteral("Cannot tell whether %1 at once %2: the server does not say %3.")
                     .arg(n, fit, missing.join(QStringLiteral(" or ")));
        return a;
    }
    if (capacity && context)
        a.text = QStringLiteral("%1 at once %2: its KV cache holds %3 tokens, room for %4 at the model's full context of %5 tokens.")
                     .arg(n, fit, number(capacity), conversationsText(*a.fitAtFullContext), number(context));
    else
        a.text = QStringLiteral("%1 at once run without waiting (it runs up to %2 requests at once); %3")
                     .arg(n, number(maxRunning),
                          capacity ? QStringLiteral("the model's context length is not listed, so its KV cache cannot be checked.")
                                   : QStringLiteral("its KV cache size is not exposed."));
    return a;
}

} // namespace weir::desktop
