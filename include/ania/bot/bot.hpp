// ania/bot/bot.hpp -- basic_bot<Traits>: the spec's chat plugin (SPEC §3, "pluginaichat") as one type.
// SPDX-License-Identifier: MIT
//
//     ania::bot bot(ania::load_config_file("bot.json"), {.system_prompt = "你是 Ania。", .database = "bot.db"});
//     auto r = bot.respond("g:100", "[nickname:小明] 你好");
//
// The composition root: from one configuration and a few options it builds and owns every part — the
// history store and its writer, long-term memory on the same database, the main client (`llm.*`), the
// compression client (`compressor.*`, else the main one), the vision client (`ocr.*`, when the main model is
// not `multimodal`), the agents' shared options and the session cache (`session.*`) — and binds each
// session's `memory_*` tools and auto-inject to `memory::scope::from(session)`, once, here. Every part logs
// to one sink. The parts stay public (`sessions()`, `memory()`, `writer()`, `store()`): what the bot does
// not do, do with them.
//
// Thread safety: respond, stop, clear and the accessors may be called from any number of threads at once.
// Destruction stops the janitor and flushes every acknowledged turn to the store before it returns.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/admin/starter.hpp>
#include <ania/admin/views.hpp>
#include <ania/agent/agent.hpp>
#include <ania/agent/chat.hpp>
#include <ania/agent/traits.hpp>
#include <ania/bot/database.hpp>
#include <ania/bot/images.hpp>
#include <ania/bot/options.hpp>
#include <ania/config.hpp>
#include <ania/context/token_counter.hpp>
#include <ania/history/archive_search.hpp>
#include <ania/history/background_writer.hpp>
#include <ania/log.hpp>
#include <ania/memory/inject.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/scope.hpp>
#include <ania/memory/tools.hpp>
#include <ania/session/eviction.hpp>
#include <ania/session/session_cache.hpp>
#include <ania/store/ram_store.hpp>

namespace ania {

/// How a bot builds its clients from the configuration. Specialized for openai::client in
/// <ania/bot/openai.hpp>; for another client, specialize it (members `main`, `compression`, `vision`, as
/// there) or pass the clients: `basic_bot(cfg, opt, {.client = c})`.
template <class Client>
struct bot_clients;

/// An agent's log policy that writes to one log_sink (the bot's).
struct sink_log {
    log_sink sink;
    void operator()(log_level l, std::string_view text) const { log_to(sink, l, text); }
};

/// The slots of a bot and their defaults; `bot_traits<Client, Store>` names the two that matter most.
/// <ania/bot/default_bot.hpp> has default_bot_traits (openai::client over one SQLite file) and `ania::bot`.
struct bot_defaults {
    using token_counter = char_class_counter;  ///< the window's estimate
    using events = no_events;                  ///< every agent's event sink (a value of it goes in parts)
    using eviction = idle_then_lru;            ///< what the session cache evicts (session.*)
    using clock = steady_clock_policy;         ///< the session cache's clock (idle eviction)
};
template <class Client, class Store = ram_store>
struct bot_traits : bot_defaults {
    using client = Client;
    using store = Store;
};

namespace detail {
/// The agent type of a bot: its client and store, the run-time image policy, the bot's log sink.
template <class Traits>
struct bot_agent_traits : default_agent_traits {
    using client = typename Traits::client;
    using store = typename Traits::store;
    using token_counter = typename Traits::token_counter;
    using events = typename Traits::events;
    using images = bot_images<typename Traits::client>;
    using log = sink_log;
};
} // namespace detail

template <class Traits>
class basic_bot {
public:
    using traits = Traits;
    using client_type = typename Traits::client;
    using store_type = typename Traits::store;
    using database_type = bot_database<store_type>;
    using memory_type = memory::basic_manager<typename database_type::memory_traits>;
    using agent_type = basic_agent<detail::bot_agent_traits<Traits>>;
    using writer_type = background_writer<store_type>;
    using clock_type = typename Traits::clock;
    using sessions_type = session_cache<agent_type, typename Traits::eviction, clock_type>;

    /// The stateful parts a bot is given instead of building them (a scripted client in a test, a client of
    /// your own): the compression client (none: the main one) and the vision client (none: images become
    /// markers unless `multimodal`).
    struct parts {
        client_type client;
        std::optional<client_type> compression_client{};
        std::optional<client_type> vision_client{};
        typename Traits::events events{};
        clock_type clock{};
    };

    /// Builds every part from `cfg` (the clients through bot_clients<Client>). Throws ania::error when a
    /// part cannot be built (a store that cannot open is not one: it logs and goes on in memory, SPEC §2).
    explicit basic_bot(const config& cfg, bot_options opt = {}) : basic_bot(cfg, clients_from(cfg, opt.log), std::move(opt)) {}
    /// The same with the clients given.
    basic_bot(const config& cfg, bot_options opt, parts p) : basic_bot(cfg, std::move(p), std::move(opt)) {}

    basic_bot(const basic_bot&) = delete;
    basic_bot& operator=(const basic_bot&) = delete;
    ~basic_bot() = default;  // members in reverse: the sessions (flushing their turns), memory, the writer (drained), the store

    /// A message for `session` ("g:<group id>", "f:<user id>"). `addressed`: it is for the bot (a private
    /// message, an @-mention); only those run a turn. See session_cache::respond.
    respond_result respond(std::string_view session, user_input input, bool addressed = true, const chat_options& copt = {}) {
        return sessions_->respond(session, std::move(input), addressed, copt);
    }
    /// `/stop`: cancels the reply in progress and empties the queue; true when it was responding.
    bool stop(std::string_view session) { return sessions_->stop(session); }
    /// Forgets a session's conversation (window, stored history, run-time tools). Long-term memory stays.
    void clear(std::string_view session) { sessions_->clear(session); }

    [[nodiscard]] sessions_type& sessions() noexcept { return *sessions_; }
    [[nodiscard]] memory_type& memory() noexcept { return memory_; }
    /// The archive's search (history.archive.enabled over an archiving store), else null.
    [[nodiscard]] archive_index* archive() noexcept { return archive_.get(); }
    [[nodiscard]] writer_type& writer() noexcept { return writer_; }
    [[nodiscard]] store_type& store() noexcept { return db_.store; }
    [[nodiscard]] client_type& client() noexcept { return parts_.client; }
    [[nodiscard]] const config& configuration() const noexcept { return cfg_; }
    [[nodiscard]] const agent_options& agent_defaults() const noexcept { return *agent_opt_; }
    [[nodiscard]] const log_sink& log() const noexcept { return log_; }
    /// The port of the operator's console (admin.enabled), else -1.
    [[nodiscard]] int admin_port() const noexcept { return console_ ? console_->port() : -1; }
    /// Each session's recent turns (what the console's chart shows; recorded when admin.enabled).
    [[nodiscard]] const admin::turn_log& turns() const noexcept { return turns_; }
    [[nodiscard]] admin::turn_log& turns() noexcept { return turns_; }
    /// What images become for the main model (multimodal, described by the vision model, or markers).
    [[nodiscard]] typename bot_images<client_type>::mode image_mode() const noexcept { return images_.current(); }

private:
    static parts clients_from(const config& cfg, const log_sink& log) {
        using made = bot_clients<client_type>;
        return parts{made::main(cfg, log), made::compression(cfg, log), made::vision(cfg, log)};
    }

    basic_bot(const config& cfg, parts&& p, bot_options&& opt)
        : cfg_(cfg), opt_(std::move(opt)), log_(opt_.log ? opt_.log : log_sink([](log_level, std::string_view) {})),
          db_(cfg_, opt_, log_), writer_(db_.store, writer_options()), memory_(db_.memory, memory_options()),
          archive_(archive_from_config()), parts_(std::move(p)), images_(image_policy()), agent_opt_(agent_defaults_from_config()) {
        session_options so = from_config<session_options>(cfg_);
        so.log = log_;
        so.on_reply = opt_.on_reply;
        if (cfg_.admin.enabled)  // the console's chart: each session's recent turns, then the user's callback
            so.on_reply = [this](std::string_view key, const chat_result& r) {
                turns_.record(key, r);
                if (opt_.on_reply) opt_.on_reply(key, r);
            };
        if (opt_.adjust_sessions) opt_.adjust_sessions(so);
        if (cfg_.admin.enabled)  // every clear (bot.clear, the console's, the group auto-clear) starts the chart over
            so.on_evicted = [this, user = std::move(so.on_evicted)](std::string_view key, evict_reason why) {
                if (why == evict_reason::cleared) turns_.forget(key);
                if (user) user(key, why);
            };
        sessions_ = std::make_unique<sessions_type>([this](const std::string& key) { return make_agent(key); }, std::move(so),
                                                    parts_.clock);
        if (cfg_.admin.enabled) start_console();
    }

    /// admin.enabled: the operator's console over this bot's memory and sessions (<ania/admin/console.hpp>).
    void start_console() {
        const auto start = admin::detail::installed_console_starter();
        if (!start)
            throw error(errc::invalid_config, "admin.enabled: this program has no console: include <ania/admin/console.hpp> "
                                              "and link the ania-admin dependency (cpp-httplib)");
        memory_view_ = std::make_unique<admin::memory_view_of<memory_type>>(memory_);
        session_view_ = std::make_unique<admin::session_view_of<sessions_type, writer_type>>(*sessions_, writer_, &turns_);
        console_ = start(cfg_, admin::api_parts{memory_view_.get(), session_view_.get(), log_});
    }

    [[nodiscard]] background_writer_options writer_options() const {
        background_writer_options w;
        w.log = log_;
        return w;
    }
    /// history.archive.enabled: the archive's search over the writer (queued compactions are seen).
    [[nodiscard]] std::unique_ptr<archive_index> archive_from_config() {
        if (!cfg_.history.archive.enabled) return nullptr;
        if constexpr (archiving_store<store_type>) {
            return std::make_unique<archive_index>(writer_);
        } else {
            log_to(log_, log_level::warn, "history.archive.enabled: this bot's store keeps no archive (not an archiving_store): "
                                          "compactions discard what they remove");
            return nullptr;
        }
    }
    [[nodiscard]] memory::manager_options memory_options() const {
        memory::manager_options m = from_config<memory::manager_options>(cfg_);
        m.log = log_;
        return m;
    }
    /// SPEC §5: images go to the main model when it is multimodal, else to the vision model when one is
    /// configured, else they become markers (said once, here).
    [[nodiscard]] bot_images<client_type> image_policy() {
        if (cfg_.multimodal) return bot_images<client_type>();
        if (!parts_.vision_client)
            log_to(log_, log_level::info, "images: multimodal is false and no vision model is configured (ocr.api_key): "
                                          "images become markers the model is told it cannot read");
        return bot_images<client_type>(std::move(parts_.vision_client));
    }
    [[nodiscard]] std::shared_ptr<const agent_options> agent_defaults_from_config() {
        agent_options o = from_config<agent_options>(cfg_);
        o.system_prompt = opt_.system_prompt;
        if (cfg_.memory.auto_inject && memory_.enabled()) {
            // SPEC §4: relevant memories of the session's own scope, for this request only.
            o.auto_inject = [m = &memory_](std::string_view session, std::string_view text) -> std::string {
                const std::optional<memory::scope> s = memory::scope::parse(session);
                return s ? memory::inject_block(*m, *s, text) : std::string();
            };
        }
        if (opt_.adjust_agents) opt_.adjust_agents(o);
        return std::make_shared<const agent_options>(std::move(o));
    }

    /// The session cache's factory: the bot's tools and this session's memory tools, bound to its scope.
    std::unique_ptr<agent_type> make_agent(const std::string& key) {
        std::vector<tool> tools = opt_.tools;
        if (memory_.enabled()) {
            if (const std::optional<memory::scope> s = memory::scope::parse(key)) {
                std::vector<tool> bound = memory::make_tools(memory_, *s);
                tools.insert(tools.end(), std::make_move_iterator(bound.begin()), std::make_move_iterator(bound.end()));
            } else if (!said_no_scope_.exchange(true)) {
                log_to(log_, log_level::warn, "session \"" + std::string(text::truncate_runes(key, 64)) +
                                                  "\" is not a memory scope (g:<digits> or f:<digits>): it gets no memory "
                                                  "tools (said once; the same holds for every such session)");
            }
        }
        if (archive_) {  // history_search / history_get over this session's own archive
            std::vector<tool> bound = make_archive_tools(*archive_, key);
            tools.insert(tools.end(), std::make_move_iterator(bound.begin()), std::make_move_iterator(bound.end()));
        }
        typename agent_type::parts p{.client = parts_.client,
                                     .compression_client = parts_.compression_client,
                                     .images = images_,
                                     .tools = tool_registry(std::move(tools)),
                                     .hooks = opt_.hooks,
                                     .events = parts_.events,
                                     .log = sink_log{log_}};
        return std::make_unique<agent_type>(writer_, std::move(p), agent_opt_, key);
    }

    config cfg_;
    bot_options opt_;
    log_sink log_;
    database_type db_;
    writer_type writer_;
    memory_type memory_;
    std::unique_ptr<archive_index> archive_;  // null unless history.archive.enabled over an archiving store
    parts parts_;
    bot_images<client_type> images_;
    std::shared_ptr<const agent_options> agent_opt_;
    std::atomic<bool> said_no_scope_{false};
    admin::turn_log turns_;                    // each session's recent turns, for the console's chart
    std::unique_ptr<sessions_type> sessions_;  // destroyed before everything it uses
    std::unique_ptr<admin::memory_view> memory_view_;   // the console's views (admin.enabled)
    std::unique_ptr<admin::session_view> session_view_;
    std::unique_ptr<admin::detail::running_console> console_;  // last: stopped first, while what it shows is alive
};

} // namespace ania
