// ania/concepts.hpp -- the policy contracts: every concept a part of ania is written against.
// SPDX-License-Identifier: MIT
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <ania/message.hpp>

namespace ania {

/// Persistent conversation history, keyed by session id (SPEC §2 HistoryStore).
///
/// - `load(session)` returns the session's messages in order (empty for an unknown session).
/// - `append(session, msgs)` adds messages after the stored ones (an ordinary turn); an empty span is a no-op.
/// - `replace(session, msgs)` overwrites the whole history (after compression or truncation).
/// - `clear(session)` forgets the session; clearing an unknown session is a no-op.
///
/// Failures are reported by throwing ania::error (errc::store_error); a store never returns a silently
/// shortened history. Session ids are arbitrary byte strings (NUL included). Every shipped store is safe to
/// call from several threads at once; a user store used from several threads must be too.
template <class S>
concept history_store = requires(S& s, std::string_view session, std::span<const message> msgs) {
    { s.load(session) } -> std::same_as<std::vector<message>>;
    s.append(session, msgs);
    s.replace(session, msgs);
    s.clear(session);
};

/// Optional capability: drop the first `k` stored messages faster than `replace` with the rest
/// (used after a truncation whose result is a suffix of what is stored).
template <class S>
concept prefix_dropping_store = history_store<S> && requires(S& s, std::string_view session, std::size_t k) {
    s.drop_front(session, k);
};

} // namespace ania
