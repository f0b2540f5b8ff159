#pragma once
// A keyring for tests, in memory: it holds every call until the test answers
// it (answerNext, answerAll), so a test decides when "the keyring" replies and
// what it says: the stored secret, a failure, or nothing at all (then the
// vault's time limit ends the call). It counts the calls of each kind.
#include <QHash>
#include <QString>
#include <deque>
#include <memory>

#include "app/remote/keyring_backend.h"

namespace weir::test {

class FakeKeyring : public weir::remote::KeyringBackend {
public:
    enum class Kind { Read, Write, Erase };
    struct Call {
        Kind kind;
        QString key, secret;
        Done done;
    };
    // What the test sees and steers; it outlives the keyring the vault owns.
    struct State {
        QHash<QString, QString> stored;
        std::deque<Call> pending;
        int reads = 0, writes = 0, erases = 0;
        QString failWith;  // set: every answer is this failure

        // Answers the oldest call as a keyring would; false when none waits.
        bool answerNext() {
            if (pending.empty()) return false;
            Call c = std::move(pending.front());
            pending.pop_front();
            using weir::remote::KeyringReply;
            if (!failWith.isEmpty()) {
                c.done(KeyringReply::failed(failWith));
                return true;
            }
            switch (c.kind) {
            case Kind::Read:
                c.done(stored.contains(c.key) ? KeyringReply::ok(stored.value(c.key)) : KeyringReply::notFound());
                break;
            case Kind::Write:
                stored.insert(c.key, c.secret);
                c.done(KeyringReply::ok());
                break;
            case Kind::Erase:
                c.done(stored.remove(c.key) ? KeyringReply::ok() : KeyringReply::notFound());
                break;
            }
            return true;
        }
        int answerAll() {
            int n = 0;
            while (answerNext()) ++n;
            return n;
        }
    };

    explicit FakeKeyring(std::shared_ptr<State> state) : state_(std::move(state)) {}
    void read(const QString& key, Done done) override {
        ++state_->reads;
        state_->pending.push_back({Kind::Read, key, {}, std::move(done)});
    }
    void write(const QString& key, const QString& secret, Done done) override {
        ++state_->writes;
        state_->pending.push_back({Kind::Write, key, secret, std::move(done)});
    }
    void erase(const QString& key, Done done) override {
        ++state_->erases;
        state_->pending.push_back({Kind::Erase, key, {}, std::move(done)});
    }

private:
    std::shared_ptr<State> state_;
};

} // namespace weir::test
