// ania/detail/concurrency_limit.hpp -- at most N holders at once, the others wait: a session cache's
// max_concurrent_replies, the console's busy_threads. Not API.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <semaphore>

namespace ania::detail {

/// `limit` holders at once (0: no limit, nothing is counted). Hold one with `held` for as long as the work runs.
/// A limit above what the semaphore can count (libstdc++: INT_MAX) is no limit either: no process has that
/// many threads, and the cast would make the semaphore's initial count negative.
class concurrency_limit {
public:
    explicit concurrency_limit(std::size_t limit)
        : limit_(limit <= static_cast<std::size_t>(std::counting_semaphore<>::max()) ? limit : 0),
          slots_(static_cast<std::ptrdiff_t>(limit_ > 0 ? limit_ : 1)) {}
    [[nodiscard]] std::size_t limit() const noexcept { return limit_; }
    struct held {
        concurrency_limit& s;
        explicit held(concurrency_limit& limit) : s(limit) {
            if (s.limit_ > 0) s.slots_.acquire();
        }
        ~held() {
            if (s.limit_ > 0) s.slots_.release();
        }
        held(const held&) = delete;
        held& operator=(const held&) = delete;
    };

private:
    std::size_t limit_;
    std::counting_semaphore<> slots_;
};

} // namespace ania::detail
