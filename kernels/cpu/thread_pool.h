#pragma once
// A fixed set of worker threads for data-parallel kernels. parallelFor splits
// [0, n) into chunks (one item each when n is below twice the threads, else
// about n / (8 x threads) items) and gives every thread a contiguous share
// of them, the same share for the same n on every call, so a thread tends to
// read the same weight rows step after step. A thread claims its own chunks
// first; when they are gone it claims what is left of the others' shares,
// so a thread the system pauses (a busy desktop) holds up a chunk, not a
// whole share.
//
// A decode step calls parallelFor a few hundred times, each for a few to tens
// of microseconds of work, so the hand-off must cost far less than that:
// - the caller takes part (thread 0) and publishes a job with one store;
// - workers spin (with a pause instruction) on that store for a short while
//   before they block; the caller spins the same way for the workers'
//   slots (one cache line each, no shared counter to fight over);
// - once every chunk is claimed, the caller waits only for the workers that
//   took part: one the system has not run yet (a busy desktop, a core
//   shared with compilers) is left out of the job instead of holding up
//   the step until the scheduler gets round to it;
// - a blocked thread is woken through the kernel only when one is asleep:
//   neither side takes a lock while the other is spinning;
// - each share's claim counter sits in its own cache line, written by its
//   owner unless someone steals from it.
// An idle engine still sleeps.
//
// Contract:
// - One job at a time. parallelFor called while another parallelFor of the
//   same pool runs (nested from inside fn, or from a second thread) throws
//   std::logic_error at once and runs nothing.
// - fn may throw. parallelFor still waits for every range to finish (no
//   thread is left inside a job whose fn no longer exists), then rethrows the
//   first exception on the calling thread. The pool stays usable.
// - Which thread runs which range is not fixed: fn must give the same result
//   whatever the split (the kernels compute each item on its own).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace weir::kernels {

class ThreadPool {
public:
    // threads <= 0 picks the number of physical cores this process may run on
    // (cpu_topology.h). Throws std::runtime_error when the system refuses to
    // start that many.
    explicit ThreadPool(int threads = 0);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return threads_; }

    // fn(begin, end, threadIndex) is called for disjoint ranges covering [0, n).
    // The calling thread takes part. See the contract above.
    void parallelFor(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn);

    // Counts over every pool of the process since it started (relaxed: read
    // them between steps). A round trip is one synchronisation point: the
    // caller hands a job to the workers and waits for all of them.
    struct Counters {
        uint64_t roundTrips = 0;    // parallelFor calls that ran on the workers too
        uint64_t inlineCalls = 0;   // parallelFor calls the caller ran alone (one item, or a pool of one)
        uint64_t chunks = 0;        // ranges handed out by those round trips
        uint64_t stolenChunks = 0;  // of those, run by a thread outside whose share they were
        uint64_t leftOut = 0;       // workers a round trip did not wait for: every chunk was taken before they came
    };
    static Counters processCounters();

    // Where the round trips' time goes, over every pool of the process, while
    // timing is on (setTiming; off by default: it reads the clock around
    // every chunk). Nanoseconds, summed over round trips:
    struct Timing {
        uint64_t roundTrips = 0;   // timed round trips
        uint64_t wallNs = 0;       // the caller's view: job published -> every thread done
        uint64_t threadNs = 0;     // wallNs x the pool's threads: the thread time the jobs held
        uint64_t busyNs = 0;       // of it, inside fn (every thread, the caller's included)
        uint64_t wakeNs = 0;       // a worker's wait from the publish to its first chunk
        uint64_t wakes = 0;        //   the workers that ran a chunk (wakeNs / wakes: one wake-up)
        uint64_t tailNs = 0;       // the caller's wait, from its own last chunk to the last worker's done-flag
    };
    static void setTiming(bool on);
    static Timing processTiming();

private:
    // One thread's share of the current job: its chunks are claimed through
    // `next`, which holds the job's generation (high bits, so a value left by
    // an earlier job is recognised) and the next chunk (low bits).
    // 128 bytes apart: Intel cores fetch cache lines in pairs, so neighbours
    // 64 bytes apart would still contend.
    struct alignas(128) Share {
        std::atomic<uint64_t> next{0};
    };
    // A worker's part in the jobs: the generation of the last job it took
    // part in or was left out of, above what happened (kEntered, kDone,
    // kLeftOut). A worker enters a job before it reads it; once the caller
    // has claimed every chunk, it leaves out every worker that has not
    // entered (a compare-exchange on this word), so a worker the system
    // has not run yet holds up no round trip it has nothing left to do in.
    struct alignas(128) WorkerSlot {
        std::atomic<uint64_t> state{0};
    };

    void workerLoop(int index);
    void stopWorkers();
    void runShares(int self, uint64_t generation);
    void keepFirstError(std::exception_ptr e);

    int threads_ = 1;
    std::vector<std::thread> workers_;
    std::unique_ptr<Share[]> shares_;
    std::unique_ptr<WorkerSlot[]> slots_;

    // The job: written by the caller before generation_ (release), read by
    // the workers after it (acquire); one cache line, written once per job.
    struct alignas(128) Job {
        const std::function<void(int64_t, int64_t, int)>* fn = nullptr;
        int64_t size = 0;    // items
        int64_t chunk = 1;   // items per chunk
        int64_t chunks = 0;  // ceil(size / chunk)
        bool timed = false;       // Timing is on for this job
        int64_t publishNs = 0;    // when it was published (steady clock), if timed
        std::atomic<uint64_t> generation{0};  // a new job (or stop): the caller bumps it
        std::atomic<bool> stop{false};        // set before the generation that announces it
    } job_;

    // Sleeping: rare, so apart from the hot lines above.
    alignas(128) std::atomic<int> sleepers_{0};      // workers blocked (or about to block) on wake_
    std::atomic<bool> callerSleeping_{false};        // the caller blocked on finished_
    std::mutex mutex_;                               // only for blocking and waking
    std::condition_variable wake_;
    std::condition_variable finished_;

    std::atomic<bool> busy_{false};  // a parallelFor is in progress
    std::mutex errorMutex_;
    std::exception_ptr firstError_;  // under errorMutex_: the job's first exception
};

} // namespace weir::kernels
