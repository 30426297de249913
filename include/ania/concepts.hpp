// ania/concepts.hpp -- the policy contracts: every concept a part of ania is written against.
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


#include <ania/defaults.hpp>

#include <ania/memory/concepts.hpp>
#include <ania/message.hpp>
#include <ania/usage.hpp>

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

/// Why a model call failed, as far as the client could tell. The agent acts on two of them:
/// `context_length_exceeded` (compress the window and retry the call once) and `cancelled`.
enum class failure_kind : std::uint8_t {
    other,                    ///< a client that does not say (the scripted ones, a user's own)
    network,                  ///< no connection, reset, DNS, TLS: nothing usable arrived
    timeout,                  ///< connect / total / stall timeout
    cancelled,                ///< the request's stop token was requested
    rate_limited,             ///< HTTP 429 that waiting cures (a rate limit, not the quota)
    quota_exceeded,           ///< the account is out of credit or over its quota (OpenAI insufficient_quota,
                              ///< Anthropic billing_error): not transient, never retried: add credit, do not wait
    server,                   ///< HTTP 5xx (529 overloaded too), or an error the server sent inside a 200 answer or stream
    auth,                     ///< HTTP 401 / 403
    bad_request,              ///< another 4xx
    context_length_exceeded,  ///< the prompt does not fit the model (recognised from the provider's error)
    malformed,                ///< an answer that is not the protocol (bad JSON, no choice, too large)
};

[[nodiscard]] constexpr std::string_view to_string(failure_kind k) noexcept {
    switch (k) {
    case failure_kind::other: return "other";
    case failure_kind::network: return "network";
    case failure_kind::timeout: return "timeout";
    case failure_kind::cancelled: return "cancelled";
    case failure_kind::rate_limited: return "rate_limited";
    case failure_kind::quota_exceeded: return "quota_exceeded";
    case failure_kind::server: return "server";
    case failure_kind::auth: return "auth";
    case failure_kind::bad_request: return "bad_request";
    case failure_kind::context_length_exceeded: return "context_length_exceeded";
    case failure_kind::malformed: return "malformed";
    }
    return "other";
}

/// The typed part of a failure: what a caller branches on (the readable text is completion::error).
struct call_failure {
    failure_kind kind = failure_kind::other;
    int http_status = 0;        ///< 0: no HTTP answer
    std::string type;           ///< the provider's error type ("invalid_request_error"), when it sent one
    std::string code;           ///< the provider's error code ("context_length_exceeded"), when it sent one
    bool retryable = false;     ///< worth another attempt later (429, 5xx, network); the client's own retries are spent
    int attempts = 1;           ///< HTTP attempts made, retries included
};

/// What one chat-completions call returned. A client reports failure as `ok == false` with a readable
/// `error` (network, HTTP status, malformed body, empty choice) and a typed `cause`, not by throwing;
/// `used` may hold tokens even on failure (a server that answered, but uselessly).
struct completion {
    bool ok = false;
    message reply;
    ania::usage used;
    std::string error;
    call_failure cause{};         ///< why, typed (meaningful when !ok)
    std::string finish_reason{};  ///< "stop", "tool_calls", "length", ... as the provider said (may be empty)

    [[nodiscard]] static completion success(message m, ania::usage u = {}) {
        completion c;
        c.ok = true;
        c.reply = std::move(m);
        c.used = u;
        return c;
    }
    [[nodiscard]] static completion failure_of(std::string why, call_failure f, ania::usage u = {}) {
        completion c;
        c.used = u;
        c.error = std::move(why);
        c.cause = std::move(f);
        return c;
    }
    [[nodiscard]] static completion failure(std::string why, ania::usage u = {}) {
        return failure_of(std::move(why), {}, u);
    }
};

struct tool;  // <ania/tool.hpp>: a request refers to the agent's tools, it does not need their definition here

/// The messages of a request as up to three contiguous segments, read in order: the base prompt, the
/// history (the window's own storage) and this turn. An agent sends a history of 10,000 messages without
/// copying it (SPEC §1 makes history the bulk of every request); a client walks it or serialises it once.
class message_sequence {
public:
    message_sequence() noexcept = default;
    message_sequence(std::span<const message> only) noexcept : seg_{only, {}, {}} {}  // NOLINT: a span is a sequence
    message_sequence(std::span<const message> a, std::span<const message> b, std::span<const message> c = {}) noexcept
        : seg_{a, b, c} {}

    class iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = message;
        using difference_type = std::ptrdiff_t;
        using pointer = const message*;
        using reference = const message&;
        iterator() noexcept = default;
        reference operator*() const noexcept { return s_->seg_[k_][i_]; }
        pointer operator->() const noexcept { return &**this; }
        iterator& operator++() noexcept {
            if (++i_ == s_->seg_[k_].size()) skip();
            return *this;
        }
        iterator operator++(int) noexcept {
            iterator t = *this;
            ++*this;
            return t;
        }
        friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.k_ == b.k_ && a.i_ == b.i_; }

    private:
        friend class message_sequence;
        iterator(const message_sequence* s, std::size_t k) noexcept : s_(s), k_(k) {
            if (k_ < 3 && s_->seg_[k_].empty()) skip();
        }
        void skip() noexcept {
            i_ = 0;
            while (++k_ < 3 && s_->seg_[k_].empty()) {}
        }
        const message_sequence* s_ = nullptr;
        std::size_t k_ = 3, i_ = 0;
    };

    [[nodiscard]] iterator begin() const noexcept { return {this, 0}; }
    [[nodiscard]] iterator end() const noexcept { return {this, 3}; }
    [[nodiscard]] std::size_t size() const noexcept { return seg_[0].size() + seg_[1].size() + seg_[2].size(); }
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }
    [[nodiscard]] const message& operator[](std::size_t i) const noexcept {
        for (const auto& s : seg_) {
            if (i < s.size()) return s[i];
            i -= s.size();
        }
        return seg_[2][i];  // out of range: as a span's operator[] (undefined)
    }
    [[nodiscard]] const message& front() const noexcept { return *begin(); }
    [[nodiscard]] const message& back() const noexcept {
        return !seg_[2].empty() ? seg_[2].back() : !seg_[1].empty() ? seg_[1].back() : seg_[0].back();
    }
    /// The segments (some may be empty), for a client that serialises span by span.
    [[nodiscard]] std::span<const std::span<const message>, 3> segments() const noexcept { return seg_; }
    /// A copy as one vector (tests, a client that must own the request).
    [[nodiscard]] std::vector<message> to_vector() const { return {begin(), end()}; }

private:
    std::span<const message> seg_[3];
};

/// One chat-completions request: the messages, the tools the model may call (empty: none) and the turn's
/// stop token (a client aborts a transfer when it is requested). Everything is borrowed for the call.
struct chat_request {
    message_sequence messages;
    std::span<const tool> tools{};
    std::stop_token stop{};
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

/// What a compressor is given: the history, and (when the caller has them) its cached token counts as prefix
/// sums, size `history.size() + 1` (or empty): `prefix_tokens[j] - prefix_tokens[i]` = tokens of
/// `history[i..j)`. `prefix_tokens[0]` need not be 0.
struct compress_input {
    std::span<const message> history;
    std::span<const std::int64_t> prefix_tokens;
};

/// A compressor's answer. The new history is `prefix` followed by `history[keep_from..]`, so a truncation
/// is just an offset (no message is copied) and a summary is one new message. On failure (`ok == false`)
/// the history is left as it was; `used` counts the tokens spent either way.
struct compression_result {
    bool ok = false;
    std::size_t keep_from = 0;
    std::vector<message> prefix;
    ania::usage used;
    std::string error;

    // Built member by member: a braced {true, from, {}, {}, {}} costs 5x more here (GCC 12 materialises
    // and moves the empty members), and truncation is on the hot path.
    [[nodiscard]] static compression_result keep_suffix(std::size_t from) noexcept {
        compression_result r;
        r.ok = true;
        r.keep_from = from;
        return r;
    }
    [[nodiscard]] static compression_result failure(std::string why, ania::usage u = {}) noexcept {
        compression_result r;
        r.used = u;
        r.error = std::move(why);
        return r;
    }
};

/// Shrinks a history (SPEC §1). `compress` may call an LLM and so may block for seconds; it must not throw
/// for expected failures (return `compression_result::failure`). The result must be a valid transcript
/// whenever the input is (see ania/transcript.hpp); maybe_compress checks and repairs anyway.
template <class P>
concept compressor = requires(P& p, const compress_input& in) {
    { p.compress(in) } -> std::same_as<compression_result>;
};

/// Why a session left the cache.
enum class evict_reason : std::uint8_t {
    idle,     ///< idle longer than session.max_idle_minutes
    lru,      ///< more than session.max_sessions resident: the least recently active went
    cleared,  ///< group auto-clear (session.group_auto_clear) or an explicit clear
};

[[nodiscard]] constexpr std::string_view to_string(evict_reason r) noexcept {
    switch (r) {
    case evict_reason::idle: return "idle";
    case evict_reason::lru: return "lru";
    case evict_reason::cleared: return "cleared";
    }
    return "idle";
}

/// What an eviction policy sees of one resident session at a tick. `last_active` counts the cache clock's
/// ticks (nanoseconds); only interactions addressed to the AI move it.
struct resident_session {
    std::string_view key;
    std::int64_t last_active;
    std::size_t messages;  ///< in the session's window (0 when its agent is not built yet)
    std::size_t bytes = 0; ///< about what its window holds in RAM (token_window::resident_bytes)
};

/// One choice of a policy: the index into the span it was given, and why.
struct eviction_choice {
    std::size_t index;
    evict_reason why;
};

/// The limits of SPEC §3, as the session cache and its eviction policies read them.
struct session_limits {
    std::chrono::nanoseconds max_idle = std::chrono::minutes(defaults::session_max_idle_minutes);  ///< 0 disables
    std::size_t max_sessions = static_cast<std::size_t>(defaults::session_max_sessions);          ///< 0 disables
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
static_assert(token_counter<token_counter_archetype> && !calibrating_token_counter<token_counter_archetype>);
static_assert(calibrating_token_counter<calibrating_token_counter_archetype>);
static_assert(chat_client<chat_client_archetype>);
static_assert(compressor<compressor_archetype>);
static_assert(eviction_policy<eviction_policy_archetype> && !prescreening_eviction_policy<eviction_policy_archetype>);
static_assert(prescreening_eviction_policy<prescreening_eviction_policy_archetype>);

} // namespace ania
