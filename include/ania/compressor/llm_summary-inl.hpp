// ania/compressor/llm_summary-inl.hpp -- the definitions of <ania/compressor/llm_summary.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/compressor/llm_summary-inl.hpp> defines; include <ania/compressor/llm_summary.hpp>");
#endif

#include <cctype>

#include <ania/compressor/llm_summary.hpp>
#include <ania/text/unicode.hpp>

namespace ania {

ANIA_INLINE summary_options english_summary_options() {
    summary_options o;
    o.prompt = shared_text::literal(summary_prompt_en);
    o.prefix = shared_text::literal(summary_prefix_en);
    o.empty_summary = shared_text::literal("[conversation summary] (no content)");
    o.user_label = "user";
    o.assistant_label = "assistant";
    o.system_label = "system";
    o.summary_label = "summary";
    return o;
}

ANIA_INLINE std::string strip_think(std::string_view s) {
    static constexpr std::string_view open = "<think>", close = "</think>";
    std::string out;
    if (const auto lone = s.find(close); lone != std::string_view::npos && s.substr(0, lone).find(open) == std::string_view::npos)
        s.remove_prefix(lone + close.size());
    while (!s.empty()) {
        const auto o = s.find(open);
        out.append(s.substr(0, o));
        if (o == std::string_view::npos) break;
        const auto c = s.find(close, o + open.size());
        if (c == std::string_view::npos) break;
        s.remove_prefix(c + close.size());
    }
    return std::string(text::trim(out));
}

namespace detail {

/// Where the verbatim tail starts (keep_last_turns), or h.size() when everything is summarised.
[[nodiscard]] inline std::size_t summary_keep_from(std::span<const message> h, const summary_options& opt) noexcept {
    if (opt.keep_last_turns == 0) return h.size();
    std::size_t turns = 0;
    for (std::size_t i = h.size(); i-- > 0;) {
        const bool starts_turn = h[i].role == role::user && (i == 0 || h[i - 1].role != role::user);
        if (starts_turn && ++turns == opt.keep_last_turns) return i;
    }
    return 0;
}

/// One request to the model: the prompt as the system message, the transcript as the user message.
inline std::optional<std::string> summary_request(summary_call call, const summary_options& opt, const std::string& transcript,
                                                  usage& used, std::string& error) {
    const std::vector<message> request{message::system(opt.prompt.str()), message::user(transcript)};
    completion c;
    try {
        c = call.complete(call.self, chat_request{std::span<const message>(request)});
    } catch (const std::exception& e) {
        error = std::string("llm_summary: the client threw: ") + e.what();
        return std::nullopt;
    } catch (...) {
        error = "llm_summary: the client threw";
        return std::nullopt;
    }
    used += c.used;
    if (!c.ok) {
        error = "llm_summary: " + c.error;
        return std::nullopt;
    }
    std::string summary = strip_think(c.reply.text());
    if (summary.empty()) {
        error = "llm_summary: the model returned an empty summary";
        return std::nullopt;
    }
    return summary;
}

/// One call for the whole transcript, or (chunk_tokens) rounds of chunk summaries until they fit in one.
inline std::optional<std::string> summarise_lines(summary_call call, const summary_options& opt,
                                                  std::vector<std::string> lines, usage& used, std::string& error) {
    const auto join = [](const std::vector<std::string>& ls, std::size_t b, std::size_t e) {
        std::string out;
        for (std::size_t i = b; i < e; ++i) {
            if (!out.empty()) out.push_back('\n');
            out += ls[i];
        }
        return out;
    };
    if (opt.chunk_tokens <= 0) return summary_request(call, opt, join(lines, 0, lines.size()), used, error);
    const std::int64_t limit = opt.chunk_tokens;
    for (std::size_t round = 0; round < opt.max_rounds; ++round) {
        std::int64_t total = 0;
        for (std::string& l : lines) {
            if (char_class_counter::text_tokens(l) > limit)  // one line alone too big: cut it (>= 0.1 token/rune)
                l = std::string(text::truncate_runes(l, static_cast<std::size_t>(limit)));
            total += char_class_counter::text_tokens(l) + 1;
        }
        if (total <= limit) return summary_request(call, opt, join(lines, 0, lines.size()), used, error);
        std::vector<std::string> summaries;
        std::size_t b = 0;
        while (b < lines.size()) {
            std::size_t e = b;
            std::int64_t t = 0;
            while (e < lines.size() && (e == b || t + char_class_counter::text_tokens(lines[e]) + 1 <= limit))
                t += char_class_counter::text_tokens(lines[e++]) + 1;
            std::optional<std::string> s = summary_request(call, opt, join(lines, b, e), used, error);
            if (!s) return std::nullopt;
            summaries.push_back("[" + opt.summary_label + "]: " + *s);
            b = e;
        }
        lines = std::move(summaries);
    }
    error = "llm_summary: the summaries still exceed chunk_tokens after max_rounds rounds";
    return std::nullopt;
}

} // namespace detail

ANIA_INLINE std::vector<std::string> detail::summary_transcript_lines(std::span<const message> h,
                                                                      const summary_options& opt) {
    std::vector<std::string> lines;
    for (const message& m : h) {
        if (m.role == role::tool || (m.role == role::assistant && m.has_tool_calls())) continue;
        const std::string t = m.text();
        const std::string_view body = text::trim(t);
        if (body.empty()) continue;
        std::string line = "[";
        line += m.role == role::user ? opt.user_label : m.role == role::assistant ? opt.assistant_label : opt.system_label;
        line += "]: ";
        line += body;
        lines.push_back(std::move(line));
    }
    return lines;
}

namespace detail {

/// (CJK runes, ASCII letters) in s.
[[nodiscard]] inline std::pair<std::size_t, std::size_t> script_counts(std::string_view s) noexcept {
    std::size_t cjk = 0, latin = 0;
    for (std::size_t pos = 0; pos < s.size();) {
        const text::decoded_rune r = text::decode_rune(s, pos);
        pos += r.length ? r.length : 1;
        if (r.value < 0x80) latin += ((r.value | 0x20) >= 'a' && (r.value | 0x20) <= 'z');
        else cjk += text::is_cjk(r.value);
    }
    return {cjk, latin};
}
/// CJK when CJK runes are at least a fifth of the letters (a CJK rune carries about a word).
[[nodiscard]] inline bool mostly_cjk(std::pair<std::size_t, std::size_t> c) noexcept { return c.first * 5 >= c.first + c.second && c.first > 0; }

} // namespace detail

ANIA_INLINE std::string summary_rejection(std::string_view summary, std::int64_t transcript_tokens, std::string_view transcript,
                                         const summary_options& opt) {
    if (opt.max_ratio > 0 && transcript_tokens > 0) {
        const std::int64_t t = char_class_counter::text_tokens(summary);
        if (static_cast<double>(t) > opt.max_ratio * static_cast<double>(transcript_tokens))
            return "the summary (" + std::to_string(t) + " tokens) is not shorter than " + std::to_string(opt.max_ratio) +
                   " x its transcript (" + std::to_string(transcript_tokens) + " tokens)";
    }
    const std::string_view head = text::trim(summary);
    for (const std::string& p : opt.refusal_prefixes) {
        if (p.empty() || head.size() < p.size()) continue;
        bool same = true;
        for (std::size_t i = 0; i < p.size() && same; ++i) {
            const auto a = static_cast<unsigned char>(head[i]), b = static_cast<unsigned char>(p[i]);
            same = a == b || (a < 0x80 && b < 0x80 && std::tolower(a) == std::tolower(b));
        }
        if (same) return "the summary is a refusal (starts with \"" + p + "\")";
    }
    if (opt.same_script) {
        const auto in = detail::script_counts(transcript);
        if (in.first + in.second >= 20) {
            const bool cjk_in = detail::mostly_cjk(in), cjk_out = detail::mostly_cjk(detail::script_counts(summary));
            if (cjk_in != cjk_out)
                return std::string("the summary is in another script than its transcript (") + (cjk_in ? "CJK" : "Latin") +
                       " expected)";
        }
    }
    return {};
}

ANIA_INLINE compression_result detail::summarise(const compress_input& in, const summary_options& opt,
                                                 summary_call call) {
    const auto h = in.history;
    const std::size_t cut = summary_keep_from(h, opt);
    if (opt.keep_last_turns > 0 && cut == 0)
        return compression_result::failure("llm_summary: nothing older than the newest " +
                                           std::to_string(opt.keep_last_turns) + " turns to summarise");
    // Stacked summaries (a sticky cut): the head's earlier summaries are kept as they are, unless the head is
    // full or nothing follows them to summarise; then everything is folded into one.
    std::size_t head = 0;
    if (opt.stack_summaries > 0) {
        const std::string_view prefix = opt.prefix.view();
        while (head < cut && h[head].role == role::user && h[head].form == content_form::text &&
               std::string_view(h[head].content).starts_with(prefix))
            ++head;
        if (head >= opt.stack_summaries) head = 0;
    }
    std::vector<std::string> lines = summary_transcript_lines(h.subspan(head, cut - head), opt);
    if (head > 0 && lines.empty()) {
        head = 0;
        lines = summary_transcript_lines(h.first(cut), opt);
    }
    compression_result r;
    r.keep_from = cut;
    r.prefix.assign(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(head));
    std::string summary;
    if (lines.empty()) {
        summary = opt.empty_summary.str();
    } else {
        if (opt.breaker && !opt.breaker->allow()) {
            const auto ms = opt.breaker->retry_in().count();
            return compression_result::failure("llm_summary: skipped, the breaker is open after " +
                                               std::to_string(opt.breaker->consecutive_failures()) +
                                               " failures in a row (next trial in " + std::to_string(ms) + " ms)");
        }
        const bool checks = opt.max_ratio > 0 || !opt.refusal_prefixes.empty() || opt.same_script;
        std::int64_t transcript_tokens = 0;
        std::string sample;  // the script check's view of the transcript: its first 4 KB suffice
        if (checks) {
            for (const std::string& l : lines) {
                transcript_tokens += char_class_counter::text_tokens(l) + 1;
                if (opt.same_script && sample.size() < 4096) sample.append(l).push_back('\n');
            }
        }
        std::optional<std::string> s = summarise_lines(call, opt, std::move(lines), r.used, r.error);
        if (s && checks) {
            if (std::string why = summary_rejection(*s, transcript_tokens, sample, opt); !why.empty()) {
                r.error = "llm_summary: rejected: " + why;
                s.reset();
            }
        }
        if (opt.breaker) opt.breaker->record(s.has_value());
        if (!s) return compression_result::failure(std::move(r.error), r.used);
        summary = std::move(*s);
    }
    r.ok = true;
    r.prefix.push_back(message::user(opt.prefix.str() + summary));
    return r;
}

} // namespace ania

