// ania/agent/slots.hpp -- the named-slot form of an agent type: policies in any order, defaults for the rest.
// SPDX-License-Identifier: MIT
//
//     using bot = ania::agent_of<ania::slot::client<my_client>, ania::slot::store<ania::sqlite_store>>;
//
// is basic_agent over default_agent_traits with those two slots replaced. A slot given twice, or an argument
// that is not a slot, is a compile-time error that says so.
#pragma once

#include <type_traits>
#include <utility>

#include <boost/hana/find.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/set.hpp>
#include <boost/hana/core/to.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

#include <ania/agent/agent.hpp>
#include <ania/agent/traits.hpp>

namespace ania {
namespace slot {

/// What every slot derives from (an argument of agent_of that does not is rejected).
struct slot_base {};

#define ANIA_AGENT_SLOT(name)                \
    template <class T>                       \
    struct name : slot_base {                \
        using type = T;                      \
        using key = name<void>;              \
    }
ANIA_AGENT_SLOT(token_counter);
ANIA_AGENT_SLOT(compressor);
ANIA_AGENT_SLOT(store);
ANIA_AGENT_SLOT(client);
ANIA_AGENT_SLOT(images);
ANIA_AGENT_SLOT(tools);
ANIA_AGENT_SLOT(hooks);
ANIA_AGENT_SLOT(events);
ANIA_AGENT_SLOT(log);
ANIA_AGENT_SLOT(clock);
ANIA_AGENT_SLOT(eviction);
#undef ANIA_AGENT_SLOT

} // namespace slot

namespace detail {

template <class S, bool = std::is_base_of_v<slot::slot_base, S>>
struct slot_entry {  // not a slot: a key of its own, so that the map is still well-formed after the assertion
    using key = S;
    using type = S;
};
template <class S>
struct slot_entry<S, true> {
    using key = typename S::key;
    using type = typename S::type;
};

template <class... Slots>
struct slot_list_checks {  // a base of its own: see agent_slot_checks (traits.hpp)
    static_assert((std::is_base_of_v<slot::slot_base, Slots> && ...),
                  "ania::agent_of: every argument must be a slot: ania::slot::client<C>, ania::slot::store<S>, "
                  "ania::slot::compressor<P>, ... (see ania/agent/slots.hpp)");
    static constexpr auto keys = boost::hana::make_tuple(boost::hana::type_c<typename slot_entry<Slots>::key>...);
    static_assert(decltype(boost::hana::length(boost::hana::to_set(keys)) == boost::hana::length(keys))::value,
                  "ania::agent_of: a slot is given twice");
};

} // namespace detail

/// default_agent_traits with the given slots replaced (see agent_of).
template <class... Slots>
struct slot_traits : private detail::slot_list_checks<Slots...> {
private:
    // to_map keeps one value per key, so a duplicate does not add a second error to the one above.
    using map_type = decltype(boost::hana::to_map(boost::hana::make_tuple(boost::hana::make_pair(
        boost::hana::type_c<typename detail::slot_entry<Slots>::key>, boost::hana::type_c<typename detail::slot_entry<Slots>::type>)...)));
    template <template <class> class Slot, class Default>
    using pick = typename std::remove_cvref_t<decltype(boost::hana::find(std::declval<map_type>(), boost::hana::type_c<Slot<void>>)
                                                           .value_or(boost::hana::type_c<Default>))>::type;
    using d = default_agent_traits;

public:
    using token_counter = pick<slot::token_counter, d::token_counter>;
    using compressor = pick<slot::compressor, d::compressor>;
    using store = pick<slot::store, d::store>;
    using client = pick<slot::client, d::client>;
    using images = pick<slot::images, d::images>;
    using tools = pick<slot::tools, d::tools>;
    using hooks = pick<slot::hooks, d::hooks>;
    using events = pick<slot::events, d::events>;
    using log = pick<slot::log, d::log>;
    using clock = pick<slot::clock, d::clock>;
    using eviction = pick<slot::eviction, d::eviction>;
};

/// The agent type with these slots, in any order; every other slot has its default.
template <class... Slots>
using agent_of = basic_agent<slot_traits<Slots...>>;

} // namespace ania
