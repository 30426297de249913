// ania/log.hpp -- the pluggable log sink: where ania reports what it degrades or skips instead of throwing.
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string_view>
#include <utility>

namespace ania {

enum class log_level : std::uint8_t { debug, info, warn, error };

[[nodiscard]] constexpr std::string_view to_string(log_level l) noexcept {
    switch (l) {
    case log_level::debug: return "debug";
    case log_level::info: return "info";
    case log_level::warn: return "warn";
    case log_level::error: return "error";
    }
    return "info";
}

/// Receives one log line. Must be callable from any thread; exceptions it throws are swallowed.
using log_sink = std::function<void(log_level, std::string_view)>;

/// Writes "ania [level] text" lines to stderr (warn and above).
[[nodiscard]] ANIA_INLINE log_sink stderr_log_sink(log_level min = log_level::warn);

/// Calls `sink` if set; logging never throws into the caller (spdlog's stance).
ANIA_INLINE void log_to(const log_sink& sink, log_level l, std::string_view text) noexcept;

/// The default log policy: "ania [level] text" lines on stderr, warn and above.
struct stderr_log {
    log_level min = log_level::warn;
    void operator()(log_level l, std::string_view text) const {
        if (l < min) return;
        std::fprintf(stderr, "ania [%.*s] %.*s\n", static_cast<int>(to_string(l).size()), to_string(l).data(),
                     static_cast<int>(text.size()), text.data());
    }
};

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/log-inl.hpp>
#endif
