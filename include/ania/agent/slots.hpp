// ania/agent/slots.hpp -- the named-slot form of an agent type: policies in any order, defaults for the rest.
// SPDX-License-Identifier: MIT
//
//     using bot = ania::agent_of<ania::slot::client<my_client>, ania::slot::store<ania::sqlite_store>>;
//
// is basic_agent over default_agent_traits with those two slots replaced. A slot given twice, or an argument
// that is not a slot, is a compile-time error that says so. (A plain type list, looked up with fold
// expressions: Hana's map cost every file that includes <ania/ania.hpp> 0.07 s at g++ -O0.)
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

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
ANIA_AGENT_SLOT(client);
ANIA_AGENT_SLOT(compressor);
#define ANIA_SLOT_NAME(slot, ...) ANIA_AGENT_SLOT(slot);
ANIA_AGENT_POLICY_SLOTS(ANIA_SLOT_NAME)  // the rest of the slot list (traits.hpp)
#undef ANIA_SLOT_NAME
#undef ANIA_AGENT_SLOT

} // namespace slot

namespace detail {

template <class S, bool = std::is_base_of_v<slot::slot_base, S>>
struct slot_entry {  // not a slot: a key of its own, so that the lookup still works after the assertion
    using key = S;
    using type = S;
};
template <class S>
struct slot_entry<S, true> {
    using key = typename S::key;
    using type = typename S::type;
};

/// How many of `Keys` are `K`.
template <class K, class... Keys>
inline constexpr std::size_t key_count = (std::size_t{std::is_same_v<K, Keys>} + ... + 0);

template <class... Slots>
struct slot_list_checks {  // a base of its own: see agent_slot_checks (traits.hpp)
    static_assert((std::is_base_of_v<slot::slot_base, Slots> && ...),
                  "ania::agent_of: every argument must be a slot: ania::slot::client<C>, ania::slot::store<S>, "
                  "ania::slot::compressor<P>, ... (see ania/agent/slots.hpp)");
    static_assert(((key_count<typename slot_entry<Slots>::key, typename slot_entry<Slots>::key...> == 1) && ...),
                  "ania::agent_of: a slot is given twice");
};

/// The type of the first entry whose key is `Key`, else `Default` (the first: a duplicate adds no second error).
template <class Key, class Default, class... Entries>
struct pick_slot {
    using type = Default;
};
template <class Key, class Default, class Entry, class... Rest>
struct pick_slot<Key, Default, Entry, Rest...>
    : std::conditional_t<std::is_same_v<typename Entry::key, Key>, std::type_identity<typename Entry::type>,
                         pick_slot<Key, Default, Rest...>> {};

} // namespace detail

/// default_agent_traits with the given slots replaced (see agent_of).
template <class... Slots>
struct slot_traits : private detail::slot_list_checks<Slots...> {
private:
    template <template <class> class Slot, class Default>
    using pick = typename detail::pick_slot<Slot<void>, Default, detail::slot_entry<Slots>...>::type;
    using d = default_agent_traits;

public:
    using client = pick<slot::client, d::client>;
    using compressor = pick<slot::compressor, d::compressor>;
#define ANIA_SLOT_PICK(slot_, ...) using slot_ = pick<slot::slot_, d::slot_>;
    ANIA_AGENT_POLICY_SLOTS(ANIA_SLOT_PICK)
#undef ANIA_SLOT_PICK
};

/// The agent type with these slots, in any order; every other slot has its default.
template <class... Slots>
using agent_of = basic_agent<slot_traits<Slots...>>;

} // namespace ania
