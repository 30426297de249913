// ania/concepts.hpp -- the policy contracts: every concept a part of ania is written against, and nothing
// else. The types they speak of live with their owners: <ania/message.hpp>, <ania/chat_request.hpp> and
// <ania/completion.hpp> (a model call), <ania/compressor/compression.hpp>, <ania/session/resident.hpp> (what
// an eviction policy sees).
// SPDX-License-Identifier: MIT
//
// Each concept has an archetype: the least a type must have to model it (declared, never defined; for
// static_assert and tests). Every shipped policy and template is checked against them where it is defined,
// e.g. `static_assert(history_store<background_writer<history_store_archetype>>)`. The contracts of long-term
// memory are in <ania/memory/concepts.hpp>, included here; those of an agent's own slots (hooks, events,
// images, tools, log, clock) in <ania/agent/concepts.hpp>.
#pragma once

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>


#include <ania/chat_request.hpp>
#include <ania/completion.hpp>
#include <ania/compressor/compression.hpp>
#include <ania/history/archive.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/message.hpp>
#include <ania/session/resident.hpp>

namespace ania {

/// Persistent conversation history, keyed by session id (SPEC §2 HistoryStore).
///
/// - `load(session)` returns the session's messages in order (empty for an unknown session).
/// - `append(session, msgs)` adds messages after the stored ones (an ordinary turn); an empty span is a no-op.
/// - `replace(session, msgs)` overwrites the whole history (after compression or truncation).
/// - `clear(session)` forgets the session; clearing an unknown session is a no-op.
///
/// Failures are reported by throwing ania::error (errc::store_error); a store never returns a silently
/// shortened history. A store used directly therefore throws at its caller; the paths a conversation takes
/// (background_writer, maybe_compress, load_history) catch that, log it and let the conversation go on in
/// memory (SPEC §2: a persistence failure never affects the conversation). A store is handed messages as
/// they are to be kept: ania's write paths turn images into markers before they reach it. Session ids are arbitrary byte strings (NUL included). Every shipped store is safe to
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

/// Optional capability: non-destructive compaction (<ania/history/archive.hpp>). What a compaction removes is
/// kept in the session's archive, in the same transaction as the write that removes it, so that a crash
/// leaves either the old history or the new one with its archive, never a history whose removed part is
/// nowhere.
///
/// - `replace_archiving(session, msgs, batch)`: replace(session, msgs), and batch archived, atomically;
/// - `drop_front_archiving(session, k, batch)`: drop the first k stored messages, and batch archived;
/// - `read_archive(session, from, count)`: at most `count` archived messages with seq >= from, oldest first,
///   with where the archive stands (first_seq, next_seq) and the summaries of their compactions;
/// - `clear_archive(session)`: forgets the archived messages (seq numbers are never reused).
///
/// `clear(session)` clears the archive too unless the store is configured to keep it
/// (archive_options::keep_on_clear). A store bounds each session's archive (archive_options: the oldest go
/// first). Session ids are arbitrary byte strings, as for the history.
template <class S>
concept archiving_store = history_store<S> && requires(S& s, std::string_view session, std::span<const message> msgs,
                                                       const archive_batch& b, std::size_t k, std::int64_t from) {
    s.replace_archiving(session, msgs, b);
    s.drop_front_archiving(session, k, b);
    { s.read_archive(session, from, k) } -> std::same_as<archive_slice>;
    s.clear_archive(session);
};

/// Estimates the tokens one message adds to a prompt. `count` must be cheap, must be pure, and is required to
/// be `noexcept`: a window calls it once per message when the message enters and keeps the result, inside
/// operations that must not fail halfway.
template <class C>
concept token_counter = requires(const C& c, const message& m) {
    { c.count(m) } noexcept -> std::convertible_to<std::int64_t>;
};

/// A token_counter that learns from reported usage: `observe(estimated, reported)` after a call whose
/// prompt size was reported, `scale(raw)` to turn a sum of counts into a calibrated estimate.
template <class C>
concept calibrating_token_counter = token_counter<C> && requires(C& c, const C& cc, std::int64_t n) {
    c.observe(n, n);
    { cc.scale(n) } -> std::convertible_to<std::int64_t>;
};

/// An LLM behind the OpenAI chat-completions protocol: a request in, the assistant message and its usage out.
/// `complete` blocks until the reply is there. Failures are values (see `completion`); an exception that
/// escapes anyway is caught by ania's callers and treated as a failure. Which model, endpoint and limits a
/// client uses is the client's own configuration (a compression client is a second client instance).
/// The request is a view, not a vector, so that sending a long history costs no copy (an agent turn stays
/// O(turn)); `request.messages.to_vector()` gives a copy to a client that needs one.
template <class C>
concept chat_client = requires(C& c, const chat_request& request) {
    { c.complete(request) } -> std::same_as<completion>;
};

/// Shrinks a history (SPEC §1). `compress` may call an LLM and so may block for seconds; it must not throw
/// for expected failures (return `compression_result::failure`). The result must be a valid transcript
/// whenever the input is (see ania/transcript.hpp); maybe_compress checks and repairs anyway.
template <class P>
concept compressor = requires(P& p, const compress_input& in) {
    { p.compress(in) } -> std::same_as<compression_result>;
};

/// Chooses, at each janitor tick, the sessions to evict. `select` appends its choices (each index at most
/// once) to `out`; it is called on the janitor's thread with a snapshot, and a chosen session is evicted only
/// if it is still idle, unqueued and unchanged when the cache re-checks it under its lock. A policy is built
/// from the cache's limits. Write your own (e.g. evict the sessions with the most messages first) against
/// this concept.
template <class P>
concept eviction_policy = std::constructible_from<P, const session_limits&> &&
                          requires(const P& p, std::span<const resident_session> s, std::int64_t now, std::vector<eviction_choice>& out) {
                              p.select(s, now, out);
                          };

/// An eviction policy that can also tell, from the resident count and a lower bound of the oldest activity
/// (ns, as `resident_session::last_active`), that it would choose nothing: a janitor tick then skips the scan
/// (O(shards) instead of O(sessions)). `may_select` must not return false when `select` could choose.
template <class P>
concept prescreening_eviction_policy = eviction_policy<P> && requires(const P& p, std::size_t resident, std::int64_t oldest, std::int64_t now) {
    { p.may_select(resident, oldest, now) } -> std::convertible_to<bool>;
};

// ---- archetypes ----------------------------------------------------------------------------------------

struct history_store_archetype {
    std::vector<message> load(std::string_view);
    void append(std::string_view, std::span<const message>);
    void replace(std::string_view, std::span<const message>);
    void clear(std::string_view);
};
struct prefix_dropping_store_archetype : history_store_archetype {
    void drop_front(std::string_view, std::size_t);
};
struct archiving_store_archetype : history_store_archetype {
    void replace_archiving(std::string_view, std::span<const message>, const archive_batch&);
    void drop_front_archiving(std::string_view, std::size_t, const archive_batch&);
    archive_slice read_archive(std::string_view, std::int64_t, std::size_t);
    void clear_archive(std::string_view);
};
struct token_counter_archetype {
    std::int64_t count(const message&) const noexcept;
};
struct calibrating_token_counter_archetype : token_counter_archetype {
    void observe(std::int64_t estimated, std::int64_t reported);
    std::int64_t scale(std::int64_t raw) const;
};
struct chat_client_archetype {
    completion complete(const chat_request&);
};
struct compressor_archetype {
    compression_result compress(const compress_input&);
};
struct eviction_policy_archetype {
    explicit eviction_policy_archetype(const session_limits&);
    void select(std::span<const resident_session>, std::int64_t now, std::vector<eviction_choice>& out) const;
};
struct prescreening_eviction_policy_archetype : eviction_policy_archetype {
    using eviction_policy_archetype::eviction_policy_archetype;
    bool may_select(std::size_t resident, std::int64_t oldest, std::int64_t now) const;
};

static_assert(history_store<history_store_archetype> && !prefix_dropping_store<history_store_archetype>);
static_assert(prefix_dropping_store<prefix_dropping_store_archetype>);
static_assert(archiving_store<archiving_store_archetype> && !archiving_store<history_store_archetype>);
static_assert(token_counter<token_counter_archetype> && !calibrating_token_counter<token_counter_archetype>);
static_assert(calibrating_token_counter<calibrating_token_counter_archetype>);
static_assert(chat_client<chat_client_archetype>);
static_assert(compressor<compressor_archetype>);
static_assert(eviction_policy<eviction_policy_archetype> && !prescreening_eviction_policy<eviction_policy_archetype>);
static_assert(prescreening_eviction_policy<prescreening_eviction_policy_archetype>);

} // namespace ania
