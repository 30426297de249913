// ania/agent/traits.hpp -- the slots an agent type is composed from, their defaults, and the checks that
// name the concept a policy misses.
// SPDX-License-Identifier: MIT
#pragma once

#include <type_traits>

#include <ania/agent/concepts.hpp>
#include <ania/compressor/default_compressor.hpp>
#include <ania/concepts.hpp>
#include <ania/context/token_counter.hpp>
#include <ania/agent/clock.hpp>
#include <ania/log.hpp>
#include <ania/store/ram_store.hpp>

namespace ania {

/// Tag for the `compressor` slot: the spec's (default_compressor<client>: a summary by the compression
/// client, else the main one, falling back to truncate_oldest_half).
struct spec_compressor {};
/// Tag for the `client` slot of default_agent_traits: there is no default model; a Traits must name one.
struct no_client {};

/// The slot list, written once: every place that needs the slots (the defaults below, the checks, the
/// checked traits, the agent's type names, the named-slot form of slots.hpp) expands it, so a new slot is one
/// line here (and, if it holds state, a member of basic_agent::parts). Each entry:
/// X(slot, default, concept it must model, what replaces it when it does not (so that the failed assertion is
///   the only error), what the concept asks, the header of the concept).
/// `client` and `compressor` are not in it: the client has no default, the compressor's default is built from
/// the clients (spec_compressor).
#define ANIA_AGENT_POLICY_SLOTS(X)                                                                                   \
    X(token_counter, char_class_counter, token_counter, token_counter_archetype,                                   \
      "std::int64_t count(const message&) const noexcept", "ania/concepts.hpp")                                    \
    X(store, ram_store, history_store, history_store_archetype, "load, append, replace, clear", "ania/concepts.hpp") \
    X(images, multimodal, image_policy, image_policy_archetype, "prepare_user, from_tool", "ania/agent/concepts.hpp") \
    X(tools, tool_registry, tool_source, tool_registry, "tools, run, add, remove", "ania/agent/concepts.hpp")      \
    X(hooks, hook_set, agent_hooks, no_hooks,                                                                       \
      "session_start, user_prompt_submit, pre_tool_use, post_tool_use, stop, pre_compact", "ania/agent/concepts.hpp") \
    X(events, no_events, event_sink, no_events, "callable with compression_event, repair_event, persistence_event", \
      "ania/agent/concepts.hpp")                                                                                    \
    X(log, stderr_log, log_policy, stderr_log, "void operator()(log_level, std::string_view) const",              \
      "ania/agent/concepts.hpp")                                                                                    \
    X(clock, steady_clock_policy, agent_clock, steady_clock_policy, "now()", "ania/agent/concepts.hpp")

/// The slots and their defaults. Override by name:
/// `struct my_traits : ania::default_agent_traits { using store = ania::sqlite_store; using client = my_client; };`
/// or with the named-slot form `ania::agent_of<ania::slot::store<ania::sqlite_store>, ania::slot::client<my_client>>`.
/// token_counter: the window's estimate (SPEC §1); store: the history_store behind the agent's
/// background_writer; images: multimodal, or describe_images<Vision>; tools: static tools + tools added at run
/// time; hooks: in-process hooks (no_hooks: none at all); events: typed context events (no_events: compiled
/// out); log: a log_policy; clock: a turn's duration.
struct default_agent_traits {
    using client = no_client;                  ///< chat_client: the main model (required)
    using compressor = spec_compressor;        ///< compressor, or spec_compressor
#define ANIA_SLOT_DEFAULT(slot, dflt, ...) using slot = dflt;
    ANIA_AGENT_POLICY_SLOTS(ANIA_SLOT_DEFAULT)
#undef ANIA_SLOT_DEFAULT
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

    static_assert(spec_compression || ania::compressor<typename Traits::compressor>,
                  "ania::basic_agent: Traits::compressor does not model ania::compressor "
                  "(compression_result compress(const compress_input&)); see ania/concepts.hpp");
#define ANIA_SLOT_CHECK(slot, dflt, concept_, fallback, asks, where)                                             \
    static_assert(::ania::concept_<typename Traits::slot>, "ania::basic_agent: Traits::" #slot                     \
                                                           " does not model ania::" #concept_ " (" asks "); see " where);
    ANIA_AGENT_POLICY_SLOTS(ANIA_SLOT_CHECK)
#undef ANIA_SLOT_CHECK
};

/// The slots of `Traits`, each one its archetype (or default) when it fails its concept.
template <class Traits>
struct checked_agent_traits {
    using raw_client = typename Traits::client;
    using client = std::conditional_t<chat_client<raw_client>, raw_client, chat_client_archetype>;
#define ANIA_SLOT_CHECKED(slot, dflt, concept_, fallback, ...) \
    using slot = std::conditional_t<::ania::concept_<typename Traits::slot>, typename Traits::slot, fallback>;
    ANIA_AGENT_POLICY_SLOTS(ANIA_SLOT_CHECKED)
#undef ANIA_SLOT_CHECKED

    static constexpr bool spec_compression = std::is_same_v<typename Traits::compressor, spec_compressor>;
    using compressor = std::conditional_t<spec_compression, default_compressor<client>,
                                          std::conditional_t<ania::compressor<typename Traits::compressor>,
                                                             typename Traits::compressor, compressor_archetype>>;
};

} // namespace detail
} // namespace ania
