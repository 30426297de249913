// ania/memory/traits.hpp -- the named policies of a memory manager, and their defaults.
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/memory/entry.hpp>
#include <ania/memory/ram_backend.hpp>
#include <ania/memory/similarity.hpp>
#include <ania/memory/tokenize.hpp>

namespace ania::memory {

/// The policies a memory manager is made of, by name. Override only what you need:
///
///     struct my_memory : ania::memory::default_memory_traits {
///         using backend = ania::memory::sqlite_backend;
///         using embedder = my_embedder;
///     };
///     ania::memory::basic_manager<my_memory> memory(backend, options, {.embedder = my_embedder{...}});
struct default_memory_traits {
    using backend = ram_backend;               ///< memory_backend (versioned_memory_backend: shared safely)
    using embedder = no_embedder;              ///< memory::embedder
    using tokenizer = cjk_bigram_tokenizer;    ///< memory_tokenizer (cjk_bigram_compatible: the fused path)
    using clock = system_wall_clock;           ///< wall_clock, for created_at
    using similarity = dice_similarity;        ///< similarity_policy of the near-duplicate check
};

/// The stateless-or-small policies of a manager, as values (the backend is shared, by reference): designated
/// initialisers pick the ones to set, `{.embedder = e, .clock = c}`.
template <class Traits>
struct memory_policies {
    typename Traits::embedder embedder{};
    typename Traits::tokenizer tokenizer{};
    typename Traits::clock clock{};
    typename Traits::similarity similarity{};
};

template <class Traits>
class basic_manager;  // memory/manager.hpp

} // namespace ania::memory
