// ania/history/background_writer.hpp -- persisting on a thread of its own, so that a cancelled request
// (/stop) never loses the turn it just produced, and a slow disk never blocks a reply (SPEC §2).
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include <ania/concepts.hpp>
#include <ania/detail/linkage.hpp>
#include <ania/store/ram_store.hpp>
#include <ania/error.hpp>
#include <ania/history/persist.hpp>
#include <ania/log.hpp>
#include <ania/message.hpp>

namespace ania {

/// A write the background writer gave up on (after its retries): what it was, and why.
struct dropped_write {
    enum class kind : std::uint8_t { append, replace, clear, drop_front, replace_archiving, drop_front_archiving, clear_archive } op;
    std::string_view session;
    std::span<const message> messages;  ///< what was to be written (empty for clear and drop_front)
    std::string_view error;             ///< the last failure
    int attempts;
    std::span<const message> archived = {};  ///< what was to be archived (the *_archiving kinds)
};

struct background_writer_options {
    /// Jobs waiting at most. When the queue is full, submitting blocks until the writer has taken one: the
    /// back-pressure reaches the producer instead of growing memory without bound or dropping history.
    std::size_t max_queued = 1024;
    log_sink log = stderr_log_sink();  ///< every failed write is reported here, never thrown
    /// A transient failure (is_transient: a lock held past the store's busy timeout, an I/O error the store
    /// reopens after) is retried this many times more, after 50 ms, 100 ms, 200 ms, ... (capped at
    /// max_backoff), before the write is given up. The queue waits meanwhile: order is kept.
    int retries = 6;
    std::chrono::milliseconds first_backoff{50};
    std::chrono::milliseconds max_backoff{2000};
    /// Called (on the thread that wrote: the writer's, or one in flush()) for every write given up: after its
    /// retries, or at once for a failure that is not transient. Exceptions from it are caught and logged.
    std::function<void(const dropped_write&)> on_dropped;
    /// SPEC §2: a store never holds images. Whatever reaches the writer (a turn, a compression's replace)
    /// is written with image parts as this marker (see degrade_images).
    std::string image_marker{default_image_marker};
    /// flush() (and load(), read_archive()) writes the queued jobs on the calling thread while the writer
    /// thread is not writing one: on a busy machine a caller then does not wait for the thread to get a core
    /// twice (to take the job, then to wake the caller). On an idle one it gives up the overlap of the write
    /// with what the caller did after submitting it. False: flush() only waits for the writer thread.
    bool flush_writes = true;
    /// Linux: the writer thread runs under SCHED_BATCH: the same share of the CPU, but its wake-ups never
    /// preempt the running thread, so a turn that hands it a write keeps its core instead of being switched
    /// out for the writer and back (measured: docs/console.md, "Under load"). False: the default policy.
    bool batch_scheduling = true;
};

/// One writer thread in front of a history_store. Jobs run in submission order, one at a time (so each
/// session's order is kept), and are not tied to any request's std::stop_token: once submitted, a write happens
/// even if the request that produced it is cancelled. `flush()` waits for everything submitted before it,
/// writing the queued jobs itself while the thread is not (`flush_writes`: so a write, its retries, `log` and
/// `on_dropped` may run on a thread that called flush(), load() or read_archive(), never two at once); the destructor
/// drains the queue, then joins. A transient failure is retried with back-off (see the options), holding the
/// queue so that order is kept; a write finally given up is logged, counted and handed to `on_dropped`;
/// later writes still run. All members are thread-safe. The store must outlive the writer.
template <history_store S>
class background_writer {
public:
    explicit background_writer(S& store, background_writer_options opt = {})
        : store_(store), opt_(std::move(opt)), worker_([this](std::stop_token stop) { run(stop); }) {}

    background_writer(const background_writer&) = delete;
    background_writer& operator=(const background_writer&) = delete;

    /// Writes everything queued, then stops (the library's worker idiom: the jthread's stop token wakes it).
    ~background_writer() {
        worker_.request_stop();
        worker_.join();
    }

    // The writer is itself a history_store: hand it, not the store behind it, to everything that writes
    // (maybe_compress's replace included), so that every write of a session is in one queue, in order.
    void append(std::string_view session, std::vector<message>&& msgs) { submit({op::append, std::string(session), std::move(msgs)}); }
    void append(std::string_view session, std::span<const message> msgs) {
        submit({op::append, std::string(session), std::vector<message>(msgs.begin(), msgs.end())});
    }
    void replace(std::string_view session, std::vector<message>&& msgs) { submit({op::replace, std::string(session), std::move(msgs)}); }
    void replace(std::string_view session, std::span<const message> msgs) {
        submit({op::replace, std::string(session), std::vector<message>(msgs.begin(), msgs.end())});
    }
    void clear(std::string_view session) { submit({op::clear, std::string(session), {}}); }
    /// Queued like every other write, so a truncation's drop_front lands after the appends before it. Only
    /// when the store can drop a prefix: then the writer is a prefix_dropping_store too.
    void drop_front(std::string_view session, std::size_t k)
        requires prefix_dropping_store<S>
    {
        submit({op::drop_front, std::string(session), {}, k});
    }
    /// archiving_store, when the store is one: queued like every other write (a compaction's archive lands
    /// with its replace, after the appends before it), read after the writes already queued.
    void replace_archiving(std::string_view session, std::span<const message> msgs, archive_batch batch)
        requires archiving_store<S>
    {
        submit({op::replace_archiving, std::string(session), std::vector<message>(msgs.begin(), msgs.end()), 0, std::move(batch)});
    }
    void replace_archiving(std::string_view session, std::vector<message>&& msgs, archive_batch batch)
        requires archiving_store<S>
    {
        submit({op::replace_archiving, std::string(session), std::move(msgs), 0, std::move(batch)});
    }
    void drop_front_archiving(std::string_view session, std::size_t k, archive_batch batch)
        requires archiving_store<S>
    {
        submit({op::drop_front_archiving, std::string(session), {}, k, std::move(batch)});
    }
    void clear_archive(std::string_view session)
        requires archiving_store<S>
    {
        submit({op::clear_archive, std::string(session), {}});
    }
    [[nodiscard]] archive_slice read_archive(std::string_view session, std::int64_t from, std::size_t count)
        requires archiving_store<S>
    {
        flush();
        // (if constexpr, not a bare call: clang's explicit instantiation of the class reaches this body even
        // when the constraint is not met)
        if constexpr (archiving_store<S>) return store_.read_archive(session, from, count);
        else return {};
    }

    /// Waits for the writes already queued, then loads from the store: a load sees every earlier write.
    [[nodiscard]] std::vector<message> load(std::string_view session) {
        flush();
        return store_.load(session);
    }

    /// Returns once every job submitted before the call has been written (or has failed and been logged).
    /// While no job is being written, the calling thread writes the queued ones itself, in order
    /// (background_writer_options::flush_writes).
    void flush() {
        std::unique_lock lock(mutex_);
        const std::uint64_t target = submitted_;
        while (done_ < target) {
            if (opt_.flush_writes && !writing_ && !queue_.empty()) write_front(lock);
            else idle_.wait(lock);
        }
    }

    /// Writes that failed since construction.
    [[nodiscard]] std::size_t failures() const {
        std::lock_guard lock(mutex_);
        return failures_;
    }
    /// Jobs waiting (not counting the one being written).
    [[nodiscard]] std::size_t queued() const {
        std::lock_guard lock(mutex_);
        return queue_.size();
    }

private:
    using op = dropped_write::kind;
    struct job {
        op kind;
        std::string session;
        std::vector<message> msgs;
        std::size_t count = 0;  // drop_front
        archive_batch batch{};  // the *_archiving kinds
    };

    void submit(job j) {
        std::unique_lock lock(mutex_);
        space_.wait(lock, [&] { return queue_.size() < opt_.max_queued; });
        queue_.push_back(std::move(j));
        ++submitted_;
        lock.unlock();
        wake_worker_.notify_one();
    }

    void run(std::stop_token stop) {
#if defined(__linux__)
        if (opt_.batch_scheduling) {
            const sched_param normal{};  // SCHED_BATCH takes priority 0 and no privilege
            (void)::pthread_setschedparam(::pthread_self(), SCHED_BATCH, &normal);
        }
#endif
        std::unique_lock lock(mutex_);
        while (true) {
            wake_worker_.wait(lock, stop, [&] { return !queue_.empty() && !writing_; });
            if (writing_ || queue_.empty()) {  // stopping: a flush may still be writing; then drain what is left
                idle_.wait(lock, [&] { return !writing_; });
                if (queue_.empty()) return;
            }
            write_front(lock);
        }
    }

    /// Writes the job at the front of the queue (under `lock`, which it releases meanwhile; the queue is not
    /// empty and nothing is being written): the writer thread's step, and a flushing caller's. One job at a
    /// time, in submission order, whichever thread writes it.
    void write_front(std::unique_lock<std::mutex>& lock) {
        job j = std::move(queue_.front());
        queue_.pop_front();
        writing_ = true;
        lock.unlock();
        space_.notify_one();
        const bool ok = write(j);
        lock.lock();
        writing_ = false;
        if (!ok) ++failures_;
        ++done_;
        idle_.notify_all();
        if (!queue_.empty()) wake_worker_.notify_one();  // a flush stops at its own target: the rest is the thread's
    }

    /// One job, with its retries; false when it was given up (logged and reported to on_dropped).
    bool write(job& j) noexcept {
        try {
            degrade_images_in_place(j.msgs, opt_.image_marker);
            degrade_images_in_place(j.batch.messages, opt_.image_marker);
        } catch (...) {  // only bad_alloc can get here: write what we have
        }
        std::string why;
        std::chrono::milliseconds backoff = opt_.first_backoff;
        int attempt = 0;
        for (;;) {
            ++attempt;
            bool transient = false;
            try {
                switch (j.kind) {
                case op::append: store_.append(j.session, j.msgs); break;
                case op::replace: store_.replace(j.session, j.msgs); break;
                case op::clear: store_.clear(j.session); break;
                case op::drop_front:
                    if constexpr (prefix_dropping_store<S>) store_.drop_front(j.session, j.count);
                    break;
                case op::replace_archiving:
                    if constexpr (archiving_store<S>) store_.replace_archiving(j.session, j.msgs, j.batch);
                    break;
                case op::drop_front_archiving:
                    if constexpr (archiving_store<S>) store_.drop_front_archiving(j.session, j.count, j.batch);
                    break;
                case op::clear_archive:
                    if constexpr (archiving_store<S>) store_.clear_archive(j.session);
                    break;
                }
                if (attempt > 1)
                    log_to(opt_.log, log_level::info, "background_writer: written after " + std::to_string(attempt) + " attempts");
                return true;
            } catch (const error& e) {
                why = e.what();
                transient = is_transient(e.code());
            } catch (const std::exception& e) {
                why = e.what();
            } catch (...) {
                why = "unknown exception";
            }
            if (!transient || attempt > opt_.retries) break;
            log_to(opt_.log, log_level::warn, "background_writer: transient failure, retrying in " + std::to_string(backoff.count()) +
                                                  " ms: " + why);
            std::this_thread::sleep_for(backoff);
            backoff = std::min(backoff * 2, opt_.max_backoff);
        }
        log_to(opt_.log, log_level::error, "background_writer: persisting failed after " + std::to_string(attempt) +
                                               " attempt(s), write dropped (the conversation goes on in memory): " + why);
        if (opt_.on_dropped) {
            try {
                opt_.on_dropped({j.kind, j.session, j.msgs, why, attempt, j.batch.messages});
            } catch (...) {
                log_to(opt_.log, log_level::error, "background_writer: on_dropped threw");
            }
        }
        return false;
    }

    S& store_;
    background_writer_options opt_;
    mutable std::mutex mutex_;
    std::condition_variable_any wake_worker_;  // woken by a job or by the stop token
    std::condition_variable space_, idle_;
    std::deque<job> queue_;
    std::uint64_t submitted_ = 0, done_ = 0;
    bool writing_ = false;  // a job is being written (by the thread or by a flush): the next waits
    std::size_t failures_ = 0;
    std::jthread worker_;  // last: starts after every other member exists
};

static_assert(history_store<background_writer<history_store_archetype>>);
static_assert(!prefix_dropping_store<background_writer<history_store_archetype>>);
static_assert(prefix_dropping_store<background_writer<prefix_dropping_store_archetype>>);
static_assert(archiving_store<background_writer<archiving_store_archetype>> && !archiving_store<background_writer<history_store_archetype>>);

#if !ANIA_HEADER_ONLY
extern template class background_writer<ram_store>;  // in the compiled library
#endif


} // namespace ania
