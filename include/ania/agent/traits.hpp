// ania/agent/traits.hpp -- the slots an agent type is composed from, their defaults, and the checks that
// name the concept a policy misses.
// SPDX-License-Identifier: MIT
#pragma once

#include <type_traits>

#include <ania/agent/concepts.hpp>
#include <ania/compressor/default_compressor.hpp>
#include <ania/concepts.hpp>
#include <ania/context/token_counter.hpp>
#include <ania/store/ram_store.hpp>

namespace ania {

/// Tag for the `compressor` slot: the spec's (default_compressor<client>: a summary by the compression
/// client, else the main one, falling back to truncate_oldest_half).
struct spec_compressor {};
/// Tag for the `client` slot of default_agent_traits: there is no default model; a Traits must name one.
struct no_client {};

/// The slots and their defaults. Override by name:
/// `struct my_traits : ania::default_agent_traits { using store = ania::sqlite_store; using client = my_client; };`
/// or with the named-slot form `ania::agent_of<ania::slot::store<ania::sqlite_store>, ania::slot::client<my_client>>`.
struct default_agent_traits {
    using token_counter = char_class_counter;  ///< token_counter: the window's estimate (SPEC §1)
    using compressor = spec_compressor;        ///< compressor, or spec_compressor
    using store = ram_store;                ///< history_store behind the agent's background_writer
    using client = no_client;                  ///< chat_client: the main model (required)
    using images = multimodal;                 ///< image_policy: multimodal, or describe_images<Vision>
    using tools = tool_registry;               ///< tool_source: static tools + tools added at run time
    using hooks = hook_set;                    ///< agent_hooks: in-process hooks (no_hooks: none at all)
    using events = no_events;                  ///< event_sink: typed context events (no_events: compiled out)
    using log = stderr_log;                    ///< log_policy
    using clock = steady_clock_policy;         ///< agent_clock: a turn's duration
};

namespace detail {

// One static_assert per slot, at the first use of basic_agent<Traits>, naming the concept. The assertions
// live in a base class of their own and a failing slot is replaced by its archetype in checked_agent_traits,
// so the assertion is the only error the user reads (no backtrace through the agent's members; clang marks
// a class whose static_assert failed as invalid, hence two classes).
template <class Traits>
struct agent_slot_checks {
    using raw_client = typename Traits::client;
    static constexpr bool spec_compression = std::is_same_v<typename Traits::compressor, spec_compressor>;
    static_assert(!std::is_same_v<raw_client, no_client>,
                  "ania::basic_agent: Traits::client is not set; name your model client: "
                  "struct my_traits : ania::default_agent_traits { using client = my_client; };");
    static_assert(std::is_same_v<raw_client, no_client> || chat_client<raw_client>,
                  "ania::basic_agent: Traits::client does not model ania::chat_client "
                  "(completion complete(const chat_request&)); see ania/concepts.hpp");

    static_assert(history_store<typename Traits::store>,
                  "ania::basic_agent: Traits::store does not model ania::history_store "
                  "(load, append, replace, clear); see ania/concepts.hpp");

    static_assert(token_counter<typename Traits::token_counter>,
                  "ania::basic_agent: Traits::token_counter does not model ania::token_counter "
                  "(std::int64_t count(const message&) const noexcept); see ania/concepts.hpp");
    static_assert(spec_compression || ania::compressor<typename Traits::compressor>,
                  "ania::basic_agent: Traits::compressor does not model ania::compressor "
                  "(compression_result compress(const compress_input&)); see ania/concepts.hpp");

    static_assert(image_policy<typename Traits::images>,
                  "ania::basic_agent: Traits::images does not model ania::image_policy "
                  "(prepare_user, from_tool); see ania/agent/concepts.hpp");

    static_assert(tool_source<typename Traits::tools>,
                  "ania::basic_agent: Traits::tools does not model ania::tool_source "
                  "(tools, run, add, remove); see ania/agent/concepts.hpp");

    static_assert(agent_hooks<typename Traits::hooks>,
                  "ania::basic_agent: Traits::hooks does not model ania::agent_hooks "
                  "(session_start, user_prompt_submit, pre_tool_use, post_tool_use, stop, pre_compact); see ania/agent/concepts.hpp");

    static_assert(event_sink<typename Traits::events>,
                  "ania::basic_agent: Traits::events does not model ania::event_sink "
                  "(callable with compression_event, repair_event, persistence_event); see ania/agent/concepts.hpp");

    static_assert(log_policy<typename Traits::log>,
                  "ania::basic_agent: Traits::log does not model ania::log_policy "
                  "(void operator()(log_level, std::string_view) const); see ania/agent/concepts.hpp");

    static_assert(agent_clock<typename Traits::clock>,
                  "ania::basic_agent: Traits::clock does not model ania::agent_clock (now()); see ania/agent/concepts.hpp");
};

/// The slots of `Traits`, each one its archetype (or default) when it fails its concept.
template <class Traits>
struct checked_agent_traits {
    using raw_client = typename Traits::client;
    using client = std::conditional_t<chat_client<raw_client>, raw_client, chat_client_archetype>;
    using store = std::conditional_t<history_store<typename Traits::store>, typename Traits::store, history_store_archetype>;
    using counter = std::conditional_t<token_counter<typename Traits::token_counter>, typename Traits::token_counter,
                                       token_counter_archetype>;

    static constexpr bool spec_compression = std::is_same_v<typename Traits::compressor, spec_compressor>;
    using compressor = std::conditional_t<spec_compression, default_compressor<client>,
                                          std::conditional_t<ania::compressor<typename Traits::compressor>,
                                                             typename Traits::compressor, compressor_archetype>>;
    using images = std::conditional_t<image_policy<typename Traits::images>, typename Traits::images, image_policy_archetype>;
    using tools = std::conditional_t<tool_source<typename Traits::tools>, typename Traits::tools, tool_registry>;
    using hooks = std::conditional_t<agent_hooks<typename Traits::hooks>, typename Traits::hooks, no_hooks>;
    using events = std::conditional_t<event_sink<typename Traits::events>, typename Traits::events, no_events>;
    using log = std::conditional_t<log_policy<typename Traits::log>, typename Traits::log, stderr_log>;
    using clock = std::conditional_t<agent_clock<typename Traits::clock>, typename Traits::clock, steady_clock_policy>;
};

} // namespace detail
} // namespace ania
