// ania/agent/agent.hpp -- basic_agent<Traits>: one conversation, and every rule of a turn (SPEC §1–§2, §5).
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <ania/agent/chat.hpp>
#include <ania/agent/concepts.hpp>
#include <ania/agent/traits.hpp>
#include <ania/concepts.hpp>
#include <ania/context/maybe_compress.hpp>
#include <ania/context/token_window.hpp>
#include <ania/error.hpp>
#include <ania/history/background_writer.hpp>
#include <ania/history/persist.hpp>
#include <ania/log.hpp>
#include <ania/message.hpp>
#include <ania/text/utf8.hpp>
#include <ania/transcript.hpp>

namespace ania {

/// One conversation (a session: a group or a private chat) of an agent type composed from `Traits`.
///
/// `chat()` runs one turn and owns its rules: the history is loaded on first use through the writer (so queued
/// appends are seen) and repaired; the window compresses before the round when due (on the estimate when no
/// request has been measured yet, so a restart with an oversized history compresses before it sends); the
/// request is the base prompt, the history (not copied: a view) and this turn's user message with its
/// injections; the tool loop runs the model's calls in order; the last call's prompt tokens become the
/// context size; and the turn is committed in one place, which derives the window copy (original text,
/// images) and the stored copy (original text, `[图片 <hash>]` markers) and writes both.
///
/// Shared parts come in by reference (the background_writer: one writer thread for every session of a
/// store), stateful ones through `parts` (the client, a compression client, the image policy, hooks,
/// tools), stateless ones cost no space. Not thread-safe: one turn at a time per agent (a session cache
/// holds the session's lock while it responds). The writer must outlive the agent.
template <class Traits = default_agent_traits>
class basic_agent : private detail::agent_slot_checks<Traits> {
    using checked = detail::checked_agent_traits<Traits>;

public:
    using traits = Traits;
    using client_type = typename checked::client;
    using compressor_type = typename checked::compressor;
    /// store_type, token_counter_type, images_type, tools_type, hooks_type, events_type, log_type, clock_type:
    /// the slots of ANIA_AGENT_POLICY_SLOTS (traits.hpp), each as checked.
#define ANIA_SLOT_TYPE(slot, ...) using slot##_type = typename checked::slot;
    ANIA_AGENT_POLICY_SLOTS(ANIA_SLOT_TYPE)
#undef ANIA_SLOT_TYPE
    using counter_type = token_counter_type;
    using writer_type = background_writer<store_type>;
    using window_type = token_window<counter_type>;

    /// The stateful parts. `client` is required; the rest have defaults:
    /// `{.client = c}`, `{.client = c, .compression_client = cheap, .hooks = h}`.
    struct parts {
        client_type client;
        /// SPEC §1: the cheaper compression-only model (`compressor.*`); none = the main client.
        std::optional<client_type> compression_client{};
        /// A compressor other than the spec's (Traits::compressor); none = built from the clients (the spec's)
        /// or default-constructed.
        std::optional<compressor_type> compressor{};
        images_type images{};
        tools_type tools{};
        hooks_type hooks{};
        events_type events{};
        log_type log{};
        clock_type clock{};
    };

    /// One session (`session`: its key in the store, e.g. "g:<group id>") with options of its own (kept in one
    /// heap copy): `agent(writer, {.client = c}, "g:1", {.system_prompt = "..."})`.
    basic_agent(writer_type& history, parts p, std::string session, agent_options opt = {})
        : basic_agent(history, std::move(p), std::make_shared<const agent_options>(std::move(opt)), std::move(session)) {}

    /// The sessions of one bot sharing its options: `opt` is read, never copied (10,000 sessions keep one copy
    /// of the system prompt and the texts, not 10,000, and no agent allocates one). Null `opt` is an error.
    /// What a session cache's factory does: `std::make_unique<bot>(writer, bot::parts{.client = c}, shared, key)`.
    basic_agent(writer_type& history, parts p, std::shared_ptr<const agent_options> opt, std::string session)
        : writer_(history),
          opt_(opt ? std::move(opt) : throw error(errc::invalid_argument, "basic_agent: the shared agent_options are null")),
          session_(std::move(session)),
          log_(std::move(p.log)),
          log_sink_([l = log_](log_level level, std::string_view text) { l(level, text); }),
          client_(p.client),
          compressor_(make_compressor(p, *opt_)),
          images_(std::move(p.images)),
          tools_(std::move(p.tools)),
          hooks_(std::move(p.hooks)),
          events_(std::move(p.events)),
          clock_(std::move(p.clock)),
          window_(opt_->window) {
        if (opt_->max_iterations < 1) throw error(errc::invalid_argument, "agent_options::max_iterations must be at least 1");
    }

    basic_agent(const basic_agent&) = delete;
    basic_agent& operator=(const basic_agent&) = delete;

    /// Runs one turn. Never throws for what a conversation meets (a failing client, store, tool or hook):
    /// those end in `chat_result` and the log. Cancelling through `stop` ends the turn at the next boundary
    /// (before a call, between tools); unanswered calls are answered "[cancelled]".
    ///
    /// What is committed: the turn, once the model has answered at least once (a text, or calls — their tools
    /// may have had effects the history must remember). A turn whose first call fails, or that is cancelled or
    /// blocked before it, leaves window and store as they were: the user can send it again.
    chat_result chat(user_input input, const chat_options& copt = {}, std::stop_token stop = {}) {
        const auto started = clock_.now();
        chat_result res;
        start();
        const prompt_decision d = guarded("UserPromptSubmit", prompt_decision{},
                                          [&] { return hooks_.user_prompt_submit({session_, input.text}); });
        if (d.block) {
            res.end = turn_end::blocked;
            res.error = d.reason;
            finish(res, started);
            return res;
        }
        compress_if_due(res, false);

        message kept = user_message(std::move(input));
        images_.prepare_user(kept, log_sink_);
        std::string injected = join_injections(copt, kept, d.context);
        turn_.clear();
        turn_.push_back(injected.empty() ? kept : with_injections(kept, injected));
        run_loop(res, copt, stop);
        commit(res, std::move(kept));
        finish(res, started);
        return res;
    }

    /// Forgets the conversation: the window, and the stored history (through the writer).
    void clear() {
        start();
        window_.clear();
        writer_.clear(session_);
        aligned_ = true;
    }

    /// Tools of this session, added at run time (they shadow the agent's static tools of the same name).
    void add_tool(tool t) {
        tools_.add(std::move(t));
        tools_changed_ = true;
    }
    bool remove_tool(std::string_view name) {
        tools_changed_ = true;
        return tools_.remove(name);
    }

    /// This agent's key (the history's).
    [[nodiscard]] const std::string& session() const noexcept { return session_; }
    /// The options, maybe shared with the bot's other sessions.
    [[nodiscard]] const agent_options& options() const noexcept { return *opt_; }
    [[nodiscard]] const std::shared_ptr<const agent_options>& shared_options() const noexcept { return opt_; }
    /// The history as the model sees it (loaded on first use).
    [[nodiscard]] const window_type& window() {
        start();
        return window_;
    }
    [[nodiscard]] bool loaded() const noexcept { return started_; }
    [[nodiscard]] const tools_type& tools() const noexcept { return tools_; }
    [[nodiscard]] client_type& client() noexcept { return client_; }
    [[nodiscard]] compressor_type& compressor() noexcept { return compressor_; }
    [[nodiscard]] images_type& images() noexcept { return images_; }
    [[nodiscard]] hooks_type& hooks() noexcept { return hooks_; }
    [[nodiscard]] events_type& events() noexcept { return events_; }
    [[nodiscard]] writer_type& writer() noexcept { return writer_; }

private:

    static compressor_type make_compressor(parts& p, const agent_options& opt) {
        if (p.compressor) return std::move(*p.compressor);
        if constexpr (checked::spec_compression) {
            using summary_arg = typename llm_summary<client_type>::options_arg;
            const summary_arg summary = opt.summary ? summary_arg(opt.summary) : summary_arg();
            if (p.compression_client)
                return compressor_type(opt.clear_tool_results, p.client, std::move(*p.compression_client), summary);
            return compressor_type(opt.clear_tool_results, p.client, summary);
        } else if constexpr (std::is_default_constructible_v<compressor_type>) {
            return compressor_type{};
        } else {
            throw error(errc::invalid_argument, "basic_agent: Traits::compressor is not default-constructible: pass parts::compressor");
        }
    }

    template <class R, class F>
    R guarded(std::string_view what, R fallback, F&& f) noexcept {
        try {
            return f();
        } catch (const std::exception& e) {
            log_to(log_sink_, log_level::warn, std::string(what) + " hook threw: " + e.what());
        } catch (...) {
            log_to(log_sink_, log_level::warn, std::string(what) + " hook threw");
        }
        return fallback;
    }
    template <class F>
    void notify(std::string_view what, F&& f) noexcept {
        guarded(what, 0, [&] {
            f();
            return 0;
        });
    }
    template <class E>
    void emit(const E& e) noexcept {
        if constexpr (!std::is_same_v<events_type, no_events> && std::is_invocable_v<events_type&, const E&>)
            notify("event sink", [&] { events_(e); });
    }

    /// First use: load through the writer (queued writes are seen), repair, SessionStart, the base prompt.
    void start() {
        if (started_) return;
        started_ = true;
        std::vector<message> h;
        try {
            h = writer_.load(session_);
        } catch (const std::exception& e) {
            log_to(log_sink_, log_level::error, std::string("loading the history failed (continuing without it): ") + e.what());
            emit(persistence_event{session_, e.what()});
        } catch (...) {
            log_to(log_sink_, log_level::error, "loading the history failed (continuing without it)");
            emit(persistence_event{session_, "unknown exception"});
        }
        const repair_report r = repair_transcript(h, opt_->repair);
        aligned_ = !r.changed();  // the store holds exactly what the window will: a cut may drop_front
        if (r.changed()) {
            log_to(log_sink_, log_level::warn, "repaired the stored transcript of " + session_);
            emit(repair_event{session_, repair_event::site::load, r, 0});
        }
        window_.assign(std::move(h));
        start_context_ = guarded("SessionStart", std::string(),
                                 [&] { return std::string(hooks_.session_start({session_, window_.size()})); });
        tools_changed_ = true;
    }

    /// What the base prompt and the tool schemas add to every request, for the window's estimate.
    void update_overhead() {
        if (!tools_changed_) return;
        tools_changed_ = false;
        std::int64_t raw = has_system() ? window_.counter().count(system_message()) : 0;
        if (!tools_.tools().empty()) raw += window_.counter().count(message::system(definitions_text(tools_.tools())));
        window_.set_overhead_tokens(raw);
        const bool over = window_.fixed_over_threshold();
        if (over && !fixed_over_) {  // said once, not every turn: a configuration to fix, not an incident
            const fixed_context_event e{session_, window_.fixed_tokens(), window_.threshold(),
                                        window_.options().max_context_tokens, window_.history_budget()};
            log_to(log_sink_, log_level::warn,
                   "the base prompt and tool schemas alone (~" + std::to_string(e.fixed_tokens) +
                       " tokens) exceed the compression threshold (" + std::to_string(e.threshold) + " of " +
                       std::to_string(e.max_context_tokens) + "): compressing cannot help; the history of " + session_ +
                       " is compressed only past " + std::to_string(e.history_budget) + " tokens");
            emit(e);
        }
        fixed_over_ = over;
    }

    void compress_if_due(chat_result& res, bool in_loop) {
        update_overhead();
        if (!compression_due(window_, compressor_)) return;
        const bool measured = window_.last_prompt_tokens() > 0;
        compress(res, in_loop ? compression_event::trigger::tool_loop
                              : measured ? compression_event::trigger::usage : compression_event::trigger::estimate);
    }

    /// Compresses now (`context_length`: although not due). True when the history was compressed.
    bool compress(chat_result& res, compression_event::trigger why) {
        const std::int64_t tokens_before = window_.context_tokens();
        compress_options ch;
        ch.pre_compact = [this](const pre_compact_event& e) { notify("PreCompact", [&] { hooks_.pre_compact(e); }); };
        ch.log = log_sink_;
        ch.repair = opt_->repair;
        ch.image_marker = opt_->persist.image_marker;
        ch.drop_front_when_possible = aligned_;
        ch.force = why == compression_event::trigger::context_length;
        ch.archive = opt_->archive;
        compress_report rep = maybe_compress(window_, compressor_, writer_, session_, res.stats, ch);
        if (rep.status == compress_status::not_due) return false;
        const bool done = rep.status == compress_status::compressed;
        if (done) aligned_ = true;  // replace/drop_front: the store is the window again
        emit(compression_event{session_, why, rep.status, tokens_before, window_.estimated_tokens(), rep.before, rep.after,
                               rep.dropped, rep.prefix, done && !rep.error.empty(), rep.error, rep.used, rep.edited,
                               rep.steps});
        if (res.compressions++ == 0) res.compression = std::move(rep);
        return done;
    }

    [[nodiscard]] static message user_message(user_input in) {
        message m;
        if (in.images.empty()) {
            m = message::user(std::move(in.text));
        } else {
            std::vector<content_part> parts;
            if (!in.text.empty()) parts.push_back(content_part::make_text(std::move(in.text)));
            for (std::string& url : in.images) parts.push_back(content_part::make_image(std::move(url)));
            m = message::user(std::move(parts));
        }
        if (in.name) m.name = text::repair_utf8(*in.name);
        return m;
    }

    std::string join_injections(const chat_options& copt, const message& kept, const std::string& hook_context) {
        std::string out;
        const auto add = [&](std::string_view s) {
            if (s.empty()) return;
            if (!out.empty()) out += "\n\n";
            out += s;
        };
        for (const std::string& s : copt.injections) add(s);
        if (opt_->auto_inject) {
            const std::string text = kept.text();
            add(guarded("auto_inject", std::string(), [&] { return opt_->auto_inject(session_, text); }));
        }
        add(hook_context);
        return out;
    }

    /// The user message as sent: the injections, a blank line, then what the user wrote (images after).
    [[nodiscard]] static message with_injections(const message& kept, const std::string& injected) {
        message m = kept;
        if (m.form == content_form::parts) {
            if (!m.parts.empty() && m.parts.front().type == content_part::kind::text)
                m.parts.front().text = injected + "\n\n" + m.parts.front().text;
            else
                m.parts.insert(m.parts.begin(), content_part::make_text(injected));
        } else {
            m.content = m.content.empty() ? injected : injected + "\n\n" + m.content;
        }
        return m;
    }

    /// The base prompt and what SessionStart added to it. Built for each turn, not kept: a bot's sessions share
    /// the prompt (often kilobytes), and one copy per turn is nothing beside a model call.
    [[nodiscard]] bool has_system() const noexcept { return !opt_->system_prompt.empty() || !start_context_.empty(); }
    [[nodiscard]] message system_message() const {
        const std::string& prompt = opt_->system_prompt;
        if (start_context_.empty()) return message::system(prompt);
        return message::system(prompt.empty() ? start_context_ : prompt + "\n\n" + start_context_);
    }

    void run_loop(chat_result& res, const chat_options& copt, const std::stop_token& stop) {
        const int max_iterations = copt.max_iterations > 0 ? copt.max_iterations : opt_->max_iterations;
        bool length_retried = false;
        const bool with_system = has_system();
        const message system = with_system ? system_message() : message{};
        const std::span<const message> system_part(&system, with_system ? 1u : 0u);
        while (true) {
            if (stop.stop_requested()) {
                res.end = turn_end::cancelled;
                return;
            }
            if (res.stats.iterations >= max_iterations) {
                res.end = turn_end::max_iterations;
                return;
            }
            check_turn(res);
            update_overhead();
            const chat_request request{{system_part, window_.messages(), turn_}, tools_.tools(), stop, window_.stable_prefix(),
                                       window_.wire()};
            completion c;
            try {
                c = client_.complete(request);
            } catch (const std::exception& e) {
                c = completion::failure(std::string("the client threw: ") + e.what());
            } catch (...) {
                c = completion::failure("the client threw");
            }
            res.stats.record_call(c.used);
            if (!c.ok && stop.stop_requested()) {  // the client gave up because the turn was cancelled
                res.end = turn_end::cancelled;
                res.error = std::move(c.error);
                return;
            }
            // The provider says the prompt does not fit: the estimate was wrong. Compress the history (not
            // this turn: it is not in the window yet) and try the call once more, instead of failing the turn.
            if (!c.ok && c.cause.kind == failure_kind::context_length_exceeded && !length_retried) {
                length_retried = true;
                log_to(log_sink_, log_level::warn, "the prompt is too long for the model: compressing and retrying once");
                if (compress(res, compression_event::trigger::context_length)) continue;
            }
            if (!c.ok) {
                res.end = turn_end::failed;
                res.failure = c.cause;
                res.error = c.error.empty() ? "the client failed without saying why" : std::move(c.error);
                log_to(log_sink_, log_level::error, "chat call failed: " + res.error);
                return;
            }
            c.reply.role = role::assistant;
            res.ids_assigned += assign_call_ids(c.reply, res.stats.iterations);
            const std::size_t from = turn_.size();
            turn_.push_back(std::move(c.reply));
            ++replies_;
            if (!turn_.back().has_tool_calls()) {
                res.end = turn_end::replied;
                res.reply = turn_.back().text();
                return;
            }
            run_tools(stop);
            if (copt.steer && !stop.stop_requested()) steer(copt);
            if (window_.note_tool_round(c.used.prompt_tokens.value_or(0), std::span<const message>(turn_).subspan(from)))
                compress_if_due(res, true);
        }
    }

    /// Calls without a usable id (empty, invalid UTF-8) or with the id of an earlier call of the same reply
    /// get a fresh one, so each call is run once and answered once. Returns how many were renamed.
    static std::size_t assign_call_ids(message& reply, int iteration) {
        std::vector<tool_call>& calls = reply.tool_calls;
        std::vector<std::size_t> bad;
        {
            const detail::call_index index(calls);  // the transcript check's lookup: O(n log n) for many calls
            for (std::size_t k = 0; k < calls.size(); ++k)
                if (!detail::id_ok(calls[k].id) || index.first(calls[k].id) != k) bad.push_back(k);
        }  // the index points into the ids: renamed only after it is gone
        for (const std::size_t k : bad) calls[k].id = "call_ania_" + std::to_string(iteration) + "_" + std::to_string(k);
        return bad.size();
    }

    /// The calls of the newest reply, in order, each answered by one tool message right after it.
    void run_tools(const std::stop_token& stop) {
        const std::size_t at = turn_.size() - 1;
        const std::size_t n = turn_[at].tool_calls.size();
        turn_.reserve(turn_.size() + n + 1);
        std::vector<message> next_round;
        bool complete = true;
        for (std::size_t k = 0; k < n; ++k) {
            if (stop.stop_requested()) {  // the rest are answered "[cancelled]" at commit
                complete = false;
                break;
            }
            const tool_call& call = turn_[at].tool_calls[k];
            std::string result;
            if (k >= opt_->max_tool_calls_per_reply) {
                result = opt_->tool_replies.too_many_calls;
            } else {
                tool_decision d = guarded("PreToolUse", tool_decision{}, [&] { return hooks_.pre_tool_use({session_, call}); });
                if (d.block) {
                    result = d.reason.empty() ? std::string("blocked") : std::move(d.reason);
                } else {
                    tool_output out = tools_.run(call, opt_->tool_replies);
                    result = std::move(out.text);
                    if (!out.images.empty()) {
                        tool_images ti = images_.from_tool(std::move(out.images), log_sink_);
                        result += ti.result_suffix;
                        if (ti.next_round) next_round.push_back(std::move(*ti.next_round));
                    }
                }
                const std::string_view seen = text::truncate_runes(result, opt_->post_tool_use_runes);
                notify("PostToolUse", [&] { hooks_.post_tool_use({session_, call, seen}); });
            }
            turn_.push_back(message::tool_result(call.id, std::move(result)));
        }
        if (complete)
            for (message& m : next_round) turn_.push_back(std::move(m));
    }

    /// Messages that arrived during the tool batch join the turn before the next call.
    void steer(const chat_options& copt) {
        std::vector<user_input> more = guarded("steer", std::vector<user_input>(), [&] { return copt.steer(); });
        for (user_input& in : more) {
            message m = user_message(std::move(in));
            images_.prepare_user(m, log_sink_);
            turn_.push_back(std::move(m));
        }
    }

    /// The transcript check before sending. The window is valid by construction (repaired at load, after a
    /// compression; every turn is repaired when committed) and a turn starts at a user message, so the turn
    /// alone is checked: a request costs O(turn), not O(history).
    void check_turn(chat_result& res) {
        if (is_valid_transcript(turn_)) return;
        const repair_report r = repair_transcript(turn_, opt_->repair);
        res.repaired.results_dropped += r.results_dropped;
        res.repaired.results_added += r.results_added;
        res.repaired.calls_dropped += r.calls_dropped;
        res.repaired.messages_dropped += r.messages_dropped;
        log_to(log_sink_, log_level::warn, "repaired the model's tool calls before sending");
        emit(repair_event{session_, repair_event::site::reply, r, res.ids_assigned});
    }

    /// The one place a turn is written: both copies derived together, the stored one through the writer.
    void commit(chat_result& res, message kept) {
        if (replies_ == 0) return;
        replies_ = 0;
        turn_copies copies = make_turn_copies(turn_, std::move(kept), opt_->persist);
        res.messages = copies.window;
        writer_.append(session_, std::move(copies.stored));
        window_.append(std::move(copies.window));
        window_.record_request(res.stats);
    }

    void finish(chat_result& res, typename clock_type::time_point started) {
        turn_.clear();
        notify("Stop", [&] { hooks_.stop({session_, res.reply, res.end}); });
        res.elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.now() - started);
    }

    writer_type& writer_;
    std::shared_ptr<const agent_options> opt_;  // never null; maybe shared by the bot's sessions
    std::string session_;
    [[no_unique_address]] log_type log_;
    log_sink log_sink_;  // log_ for the parts that take a log_sink
    client_type client_;
    compressor_type compressor_;
    [[no_unique_address]] images_type images_;
    tools_type tools_;
    [[no_unique_address]] hooks_type hooks_;
    [[no_unique_address]] events_type events_;
    [[no_unique_address]] clock_type clock_;
    window_type window_;
    std::string start_context_;  // what SessionStart added to the base prompt (usually nothing)
    std::vector<message> turn_;  // this turn, from its user message as sent; reused between turns
    std::size_t replies_ = 0;    // model replies in turn_
    bool started_ = false, aligned_ = false, tools_changed_ = true;
    bool fixed_over_ = false;  // the fixed part was over the threshold at the last update_overhead (said once)
};

/// The default traits with a client (and a store): `ania::agent<my_client>`, `ania::agent<my_client, ania::sqlite_store>`.
template <class Client, class Store = ram_store>
struct client_traits : default_agent_traits {
    using client = Client;
    using store = Store;
};
template <class Client, class Store = ram_store>
using agent = basic_agent<client_traits<Client, Store>>;

} // namespace ania
