#include "storage/StorageCheckpointer.h"

#include <chrono>

#include "storage/Storage.h"

namespace weir::desktop {

StorageCheckpointer::StorageCheckpointer(Storage* storage, int intervalMs)
    : storage_(storage), intervalMs_(intervalMs), thread_([this] { run(); }) {}

StorageCheckpointer::~StorageCheckpointer() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void StorageCheckpointer::requestNow() {
    {
        std::lock_guard lock(mutex_);
        requested_ = true;
    }
    wake_.notify_all();
}

void StorageCheckpointer::requestBackup() {
    {
        std::lock_guard lock(mutex_);
        backupRequested_ = true;
    }
    wake_.notify_all();
}

void StorageCheckpointer::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait_for(lock, std::chrono::milliseconds(intervalMs_),
                       [this] { return requested_ || backupRequested_ || stop_; });
        const bool last = stop_;
        const bool backup = backupRequested_ && !stop_;
        requested_ = backupRequested_ = false;
        lock.unlock();
        if (backup) {
            storage_->backUp();
            ++backupsDone_;
        }
        storage_->checkpoint();
        ++completed_;
        lock.lock();
        if (last) break;
    }
    lock.unlock();
    storage_->closeThreadConnection();
}

} // namespace weir::desktop
