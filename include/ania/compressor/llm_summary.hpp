// ania/compressor/llm_summary.hpp -- compress the history into one summary written by an LLM (SPEC §1).
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/concepts.hpp>
#include <ania/compressor/summary_breaker.hpp>
#include <ania/context/token_counter.hpp>
#include <ania/error.hpp>
#include <ania/message.hpp>
#include <ania/text/shared_text.hpp>
#include <ania/text/utf8.hpp>

namespace ania {

/// The original compression prompt: keep key information, user intent, conclusions and important context;
/// omit tool-call details and intermediate reasoning.
inline constexpr std::string_view summary_prompt_zh =
    "请将以下对话压缩为一段简洁的摘要。要求：保留关键信息、用户意图、讨论结论和重要上下文，"
    "省略工具调用细节和中间推理过程。只输出摘要正文。";
inline constexpr std::string_view summary_prompt_en =
    "Compress the following conversation into one concise summary. Keep the key information, the users' "
    "intent, the conclusions reached and important context; omit tool-call details and intermediate "
    "reasoning. Output only the summary.";
/// The summary message starts with this (SPEC §1: "以下是之前的对话摘要：\n<summary>").
inline constexpr std::string_view summary_prefix_zh = "以下是之前的对话摘要：\n";
inline constexpr std::string_view summary_prefix_en = "Here is a summary of the earlier conversation:\n";

/// How llm_summary frames its request and its answer. The defaults are the original's (Chinese);
/// english_summary_options() is the same in English. Keep the prompt, labels and texts in one language: the
/// model answers in the language it is addressed in.
struct summary_options {
    // The long texts are shared_text: every agent copies its compressor's options (text/shared_text.hpp).
    shared_text prompt = shared_text::literal(summary_prompt_zh);  ///< sent as the system message of the compression request
    shared_text prefix = shared_text::literal(summary_prefix_zh);  ///< the summary message starts with this
    shared_text empty_summary = shared_text::literal("[对话摘要]（无内容）");  ///< the summary of a transcript with nothing to summarise
    std::string user_label = "用户";        ///< transcript lines are `[label]: text`
    std::string assistant_label = "助手";
    std::string system_label = "系统";      ///< system and developer messages kept in the history
    std::string summary_label = "摘要";     ///< a chunk's summary in a summary-of-summaries round (chunk_tokens)
    /// Opt-in: keep the newest K turns verbatim (a turn starts at a user message, so no tool exchange is
    /// split) and summarise only what is older. 0 = the spec: summarise everything.
    std::size_t keep_last_turns = 0;
    /// Opt-in: the compression model's own context, in estimated tokens. A transcript larger than this is
    /// summarised in chunks, then the summaries are summarised. 0 = one call, whatever the size.
    std::int64_t chunk_tokens = 0;
    std::size_t max_rounds = 4;  ///< bound on summary-of-summaries rounds when chunking
    /// Opt-in, for providers' prompt caches (a sticky cut): the summaries at the head of the history (user
    /// messages that start with `prefix`) stay there byte for byte, and only what follows them is summarised
    /// into one more, appended after them; the request's prefix up to the last of them is then the same
    /// across compactions (token_window::stable_prefix; Anthropic's cache_control goes there). Once the head
    /// holds this many, the next compaction folds them all into one (the spec's behaviour). 0 = off.
    std::size_t stack_summaries = 0;

    // ---- verification (opt-in): a summary that fails a check is a failure, so the next rung (truncation) runs.
    /// Reject a summary longer than this share of the transcript it summarises, in estimated tokens (0.5: it
    /// must at least halve it). 0 = no check (the spec: any non-empty summary is kept).
    double max_ratio = 0;
    /// Reject a summary that starts with one of these (ASCII letters compared case-insensitively), the way
    /// models refuse: default_refusal_prefixes() has English and Chinese ones. Empty = no check.
    std::vector<std::string> refusal_prefixes;
    /// Reject a summary not in the transcript's script (CJK against Latin letters), when the transcript has at
    /// least 20 letters: a Chinese conversation summarised in English loses the users' own words.
    bool same_script = false;
    /// Stop calling the model after repeated failures (compressor/summary_breaker.hpp); shared by every
    /// session's compressor that shares these options. Null = none (the spec: every compression calls).
    std::shared_ptr<summary_breaker> breaker;
};

/// Openings of refusals in English and Chinese, for summary_options::refusal_prefixes.
[[nodiscard]] inline std::vector<std::string> default_refusal_prefixes() {
    return {"I'm sorry", "I am sorry", "Sorry,", "I can't", "I cannot", "I can not", "I won't", "I'm unable", "I am unable",
            "As an AI", "抱歉", "对不起", "很抱歉", "我无法", "我不能", "作为一个AI", "作为AI", "作为人工智能"};
}

/// Why a summary is rejected by the checks of `opt` (empty: it passes). `transcript_tokens` is the estimate
/// of what it summarises; `transcript` a sample of it for the script check.
[[nodiscard]] ANIA_INLINE std::string summary_rejection(std::string_view summary, std::int64_t transcript_tokens,
                                                       std::string_view transcript, const summary_options& opt);

/// summary_options in English: the English prompt and prefix, `[user]` / `[assistant]` labels.
[[nodiscard]] ANIA_INLINE summary_options english_summary_options();

/// Removes `<think>…</think>` blocks (an unclosed one runs to the end; a lone `</think>` drops what precedes
/// it, as reasoning models emit when the template opened the block), then trims.
[[nodiscard]] ANIA_INLINE std::string strip_think(std::string_view s);

namespace detail {

/// One completion of the summarising model, type-erased: what llm_summary<Client> passes to the
/// non-template summariser, so that a compressor over a user's client instantiates only the call.
struct summary_call {
    completion (*complete)(void* self, const chat_request& request);
    void* self;
};

/// llm_summary's work (SPEC §1), written once for every client: the transcript lines, the chunked
/// summary-of-summaries rounds, the client's failures and exceptions turned into a failed result.
[[nodiscard]] ANIA_INLINE compression_result summarise(const compress_input& in, const summary_options& opt,
                                                       summary_call call);
[[nodiscard]] ANIA_INLINE std::vector<std::string> summary_transcript_lines(std::span<const message> h,
                                                                           const summary_options& opt);

} // namespace detail

/// SPEC §1 "Compressor": formats the history as `[label]: text` lines (`[用户]` / `[助手]` by default; tool
/// messages and assistant tool-call messages skipped; the base prompt is not part of the history), asks the
/// compression client for a summary — the prompt as a system message, the transcript as a user message —
/// (the main client when no compression client is configured), and replaces the history by one **user**
/// message `prefix + summary`. An empty transcript gives `prefix + empty_summary` without a call.
/// An empty or whitespace-only summary, a failed call or an exception from the client is a failure; so is a
/// summary the opt-in checks reject (max_ratio, refusal_prefixes, same_script), and, with a breaker, a
/// compression while the breaker is open (no call is made).
/// `Client` is held by value: pass a cheap handle (a real client shares its connection pool).
///
/// The options are held by a shared pointer: every agent has its own compressor, and copies (a bot's
/// sessions) share one set. Without options of its own it points to the defaults (no allocation, no count).
template <chat_client Client>
class llm_summary {
public:
    static constexpr std::string_view name = "llm_summary";
    using shared_options = std::shared_ptr<const summary_options>;

    /// The options a constructor takes: none (the defaults: no allocation, no count), a set by value (one
    /// copy), or a set shared with other compressors (null is an error).
    class options_arg {
    public:
        options_arg() : p_(defaults()) {}
        options_arg(summary_options o) : p_(std::make_shared<const summary_options>(std::move(o))) {}  // NOLINT: implicit
        template <class P>  // a shared_ptr<const summary_options> or what converts to one (nullptr: an error)
            requires std::is_convertible_v<P, shared_options>
        options_arg(P&& p) : p_(checked(std::forward<P>(p))) {}  // NOLINT: implicit
    private:
        friend class llm_summary;
        shared_options p_;
    };

    explicit llm_summary(Client main, options_arg opt = {}) : main_(std::move(main)), opt_(std::move(opt.p_)) {}
    llm_summary(Client main, Client compression, options_arg opt = {})
        : main_(std::move(main)), compression_(std::move(compression)), opt_(std::move(opt.p_)) {}

    [[nodiscard]] compression_result compress(const compress_input& in) {
        return detail::summarise(in, *opt_, {&complete_with, this});
    }

    /// The client compression calls: the compression client if configured, else the main one.
    [[nodiscard]] Client& client() noexcept { return compression_ ? *compression_ : main_; }
    [[nodiscard]] const summary_options& options() const noexcept { return *opt_; }

    /// The transcript as the compressor sends it, one `[label]: text` line per message.
    [[nodiscard]] static std::vector<std::string> transcript_lines(std::span<const message> h,
                                                                   const summary_options& opt = {}) {
        return detail::summary_transcript_lines(h, opt);
    }

private:
    static completion complete_with(void* self, const chat_request& request) {
        return static_cast<llm_summary*>(self)->client().complete(request);
    }

    /// The default options, by a pointer that owns nothing (the aliasing constructor): copying it costs nothing.
    [[nodiscard]] static const shared_options& defaults() {
        static const summary_options def;
        static const shared_options p(shared_options(), &def);
        return p;
    }
    [[nodiscard]] static shared_options checked(shared_options p) {
        if (!p) throw error(errc::invalid_argument, "llm_summary: the shared summary_options are null");
        return p;
    }

    Client main_;
    std::optional<Client> compression_;
    shared_options opt_;  // never null

public:
    // Out of line on purpose: inlined into the destructor of a disengaged std::optional holding a compressor
    // (basic_agent::parts::compressor), g++ 12 at -O2 reports the shared pointer "maybe uninitialized" (the
    // std::optional false positive, GCC PR 80635) -- an error under -Werror in the user's build.
#if defined(__GNUC__) && !defined(__clang__)
    [[gnu::noinline]]
#endif
    ~llm_summary() {}
    llm_summary(const llm_summary&) = default;
    llm_summary(llm_summary&&) = default;
    llm_summary& operator=(const llm_summary&) = default;
    llm_summary& operator=(llm_summary&&) = default;
};

static_assert(compressor<llm_summary<chat_client_archetype>>);

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/compressor/llm_summary-inl.hpp>
#endif
