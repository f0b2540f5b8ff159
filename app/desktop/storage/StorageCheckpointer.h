#pragma once
// Runs Storage::checkpoint() on a thread of its own, every so often and when
// asked, so that the one SQLite step that waits for the disk (copying the
// write-ahead log into the database, with an fsync) never blocks the GUI.
// The backup copy taken at start-up runs here too, for the same reason.
#include <QString>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace weir::desktop {

class Storage;

class StorageCheckpointer {
public:
    // `storage` must outlive the checkpointer.
    explicit StorageCheckpointer(Storage* storage, int intervalMs = 30000);
    ~StorageCheckpointer();  // one last checkpoint, then the thread ends
    StorageCheckpointer(const StorageCheckpointer&) = delete;
    StorageCheckpointer& operator=(const StorageCheckpointer&) = delete;

    void requestNow();
    // Writes a backup copy (Storage::backUp) on this thread, soon.
    void requestBackup();
    int completed() const { return completed_.load(); }  // checkpoints run so far
    int backupsDone() const { return backupsDone_.load(); }  // backups attempted so far

private:
    void run();

    Storage* storage_;
    int intervalMs_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool requested_ = false, backupRequested_ = false, stop_ = false;
    std::atomic<int> completed_{0}, backupsDone_{0};
    std::thread thread_;
};

} // namespace weir::desktop
