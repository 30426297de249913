// ania/detail/timestamp.hpp -- fixed-width UTC timestamps whose text order is time order.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace ania::detail {

/// "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ" (30 characters) for a point in time, always UTC.
[[nodiscard]] inline std::string utc_timestamp(std::chrono::system_clock::time_point t) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
    std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
    long long frac = ns % 1'000'000'000;
    if (frac < 0) {
        frac += 1'000'000'000;
        --secs;
    }
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
    return buf;
}

[[nodiscard]] inline std::string utc_now() { return utc_timestamp(std::chrono::system_clock::now()); }

} // namespace ania::detail
