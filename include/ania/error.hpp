// ania/error.hpp -- the one exception type ania throws, with a machine-readable code.
// SPDX-License-Identifier: MIT
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <ania/version.hpp>

namespace ania {

/// What went wrong, for callers that branch on it; what() carries the human-readable details.
enum class errc {
    parse_error = 1,     ///< input is not valid JSON
    limit_exceeded,      ///< a parse limit (size, nesting depth) was hit
    invalid_message,     ///< JSON is valid but is not a chat message (wrong type, unknown role, ...)
    invalid_config,      ///< unknown key, wrong type or out-of-range value in a configuration
    invalid_argument,    ///< a caller passed a value outside the documented domain
    store_error,         ///< a history or memory store failed (SQLite message in what())
    not_found,           ///< the named entry does not exist (memory admin)
    store_busy,          ///< another connection held the lock past the busy timeout: retrying may succeed
    store_io,            ///< an I/O, disk-full or corruption error: the connection was closed, the next call reopens
    stale_writer,        ///< the write was fenced off: this process's lease on the session expired or was taken
};

/// Failures that a retry may cure (the background writer retries them with back-off).
[[nodiscard]] constexpr bool is_transient(errc c) noexcept { return c == errc::store_busy || c == errc::store_io; }

/// Short stable name of an error code ("parse_error", ...).
[[nodiscard]] constexpr std::string_view to_string(errc c) noexcept {
    switch (c) {
    case errc::parse_error: return "parse_error";
    case errc::limit_exceeded: return "limit_exceeded";
    case errc::invalid_message: return "invalid_message";
    case errc::invalid_config: return "invalid_config";
    case errc::invalid_argument: return "invalid_argument";
    case errc::store_error: return "store_error";
    case errc::not_found: return "not_found";
    case errc::store_busy: return "store_busy";
    case errc::store_io: return "store_io";
    case errc::stale_writer: return "stale_writer";
    }
    return "unknown";
}

/// Thrown for environment failures and bad input; what() is "ania: <code>: <details>".
class error : public std::runtime_error {
public:
    error(errc code, const std::string& details)
        : std::runtime_error("ania: " + std::string(to_string(code)) + ": " + details), code_(code) {}
    [[nodiscard]] errc code() const noexcept { return code_; }

private:
    errc code_;
};

namespace detail {
/// What the exception being handled says (inside a catch block): what() of a std::exception, else a fixed text.
[[nodiscard]] inline std::string describe_current_exception() {
    try {
        throw;
    } catch (const std::exception& ex) {
        return ex.what();
    } catch (...) {
        return "unknown exception";
    }
}
} // namespace detail

} // namespace ania
