// tests/unit/concepts.cpp -- the contracts reject the near misses they promise to reject, at compile time, and
// every template compiles whole over the archetypes (it uses nothing its contract does not promise).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <ania/agent/agent.hpp>
#include <ania/agent/slots.hpp>
#include <ania/compressor/budget_trim.hpp>
#include <ania/compressor/default_compressor.hpp>
#include <ania/compressor/llm_summary.hpp>
#include <ania/compressor/with_fallback.hpp>
#include <ania/concepts.hpp>
#include <ania/config.hpp>
#include <ania/config/io.hpp>  // reflectable_archetype
#include <ania/context/maybe_compress.hpp>
#include <ania/context/token_counter.hpp>
#include <ania/context/token_window.hpp>
#include <ania/history/background_writer.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/manager-inl.hpp>  // managers over the test traits (compiled mode: the library has the shipped ones)
#include <ania/memory/ram_backend.hpp>
#include <ania/memory/similarity.hpp>
#include <ania/memory/tokenize.hpp>
#include <ania/store/ram_store.hpp>

namespace {

struct counter_ok {
    std::int64_t count(const ania::message&) const noexcept { return 1; }
};
struct counter_may_throw {  // a window calls count() where it must not fail: noexcept is part of the contract
    std::int64_t count(const ania::message&) const { return 1; }
};

struct dice_like {
    double threshold = 0.5;
    static constexpr bool weighted = false;
    static double weight(std::size_t, std::size_t) { return 1; }
    static double score(double, double, double, bool) { return 0; }
};
struct without_weighted {  // the manager reads P::weighted to choose its counting
    double threshold = 0.5;
    static double weight(std::size_t, std::size_t) { return 1; }
    static double score(double, double, double, bool) { return 0; }
};

struct tokenizer_ok {
    template <class Emit>
    void operator()(std::string_view lowered, Emit&& emit) const { emit(lowered); }
};
struct tokenizer_for_function_pointers_only {  // the manager passes a lambda, not a function pointer
    void operator()(std::string_view lowered, void (*emit)(std::string_view)) const { emit(lowered); }
};

} // namespace

TEST_CASE("token_counter requires a noexcept count", "[concepts]") {
    STATIC_REQUIRE(ania::token_counter<counter_ok>);
    STATIC_REQUIRE(ania::token_counter<ania::char_class_counter>);
    STATIC_REQUIRE(ania::token_counter<ania::half_char_counter>);
    STATIC_REQUIRE(ania::token_counter<ania::calibrated_counter<>>);
    STATIC_REQUIRE_FALSE(ania::token_counter<counter_may_throw>);
}

TEST_CASE("similarity_policy requires the weighted constant the manager reads", "[concepts]") {
    STATIC_REQUIRE(ania::memory::similarity_policy<dice_like>);
    STATIC_REQUIRE(ania::memory::similarity_policy<ania::memory::dice_similarity>);
    STATIC_REQUIRE(ania::memory::similarity_policy<ania::memory::idf_similarity>);
    STATIC_REQUIRE_FALSE(ania::memory::similarity_policy<without_weighted>);
}

TEST_CASE("memory_tokenizer is checked against the callback the manager passes", "[concepts]") {
    STATIC_REQUIRE(ania::memory::memory_tokenizer<tokenizer_ok>);
    STATIC_REQUIRE(ania::memory::memory_tokenizer<ania::memory::cjk_bigram_tokenizer>);
    STATIC_REQUIRE_FALSE(ania::memory::memory_tokenizer<tokenizer_for_function_pointers_only>);
}

// ---- a near miss for every contract ----------------------------------------------------------------------

namespace {

struct store_without_clear {  // everything but clear
    std::vector<ania::message> load(std::string_view);
    void append(std::string_view, std::span<const ania::message>);
    void replace(std::string_view, std::span<const ania::message>);
};
struct store_loading_a_list {  // load must return std::vector<message>, not something convertible
    std::span<const ania::message> load(std::string_view);
    void append(std::string_view, std::span<const ania::message>);
    void replace(std::string_view, std::span<const ania::message>);
    void clear(std::string_view);
};
struct calibrating_without_scale : ania::token_counter_archetype {
    void observe(std::int64_t, std::int64_t);
};
struct client_returning_a_message {  // failures are values: complete returns a completion
    ania::message complete(const ania::chat_request&);
};
struct compressor_taking_a_vector {  // compress takes a compress_input
    ania::compression_result compress(const std::vector<ania::message>&);
};
struct backend_without_scopes {
    bool enabled();
    std::vector<ania::memory::entry> load(const ania::memory::scope&);
    void insert(const ania::memory::scope&, const ania::memory::entry&);
    void update(const ania::memory::scope&, const ania::memory::entry&);
    void erase(const ania::memory::scope&, std::string_view);
};
struct versioned_without_insert_if : ania::memory::memory_backend_archetype {
    std::uint64_t version(const ania::memory::scope&);
};
struct embedder_returning_a_vector {  // nullopt is how an embedder says "unavailable"
    std::vector<float> embed(std::string_view);
};
struct clock_without_const_now {  // now() is called on a const clock
    std::chrono::system_clock::time_point now();
};
struct tokenizer_claiming_fusion_falsely {  // declares the constant false: no fused path
    static constexpr bool cjk_bigram_tokens = false;
    template <class Emit>
    void operator()(std::string_view lowered, Emit&& emit) const { emit(lowered); }
};
struct not_reflected {
    int member;
};

} // namespace

TEST_CASE("every contract rejects its near miss and accepts its archetype", "[concepts]") {
    STATIC_REQUIRE(ania::history_store<ania::history_store_archetype>);
    STATIC_REQUIRE_FALSE(ania::history_store<store_without_clear>);
    STATIC_REQUIRE_FALSE(ania::history_store<store_loading_a_list>);
    STATIC_REQUIRE(ania::prefix_dropping_store<ania::prefix_dropping_store_archetype>);
    STATIC_REQUIRE_FALSE(ania::prefix_dropping_store<ania::history_store_archetype>);
    STATIC_REQUIRE(ania::calibrating_token_counter<ania::calibrating_token_counter_archetype>);
    STATIC_REQUIRE_FALSE(ania::calibrating_token_counter<calibrating_without_scale>);
    STATIC_REQUIRE(ania::chat_client<ania::chat_client_archetype>);
    STATIC_REQUIRE_FALSE(ania::chat_client<client_returning_a_message>);
    STATIC_REQUIRE(ania::compressor<ania::compressor_archetype>);
    STATIC_REQUIRE_FALSE(ania::compressor<compressor_taking_a_vector>);
    STATIC_REQUIRE(ania::memory::memory_backend<ania::memory::memory_backend_archetype>);
    STATIC_REQUIRE_FALSE(ania::memory::memory_backend<backend_without_scopes>);
    STATIC_REQUIRE(ania::memory::versioned_memory_backend<ania::memory::versioned_memory_backend_archetype>);
    STATIC_REQUIRE_FALSE(ania::memory::versioned_memory_backend<versioned_without_insert_if>);
    STATIC_REQUIRE(ania::memory::embedder<ania::memory::embedder_archetype>);
    STATIC_REQUIRE_FALSE(ania::memory::embedder<embedder_returning_a_vector>);
    STATIC_REQUIRE(ania::memory::wall_clock<ania::memory::wall_clock_archetype>);
    STATIC_REQUIRE_FALSE(ania::memory::wall_clock<clock_without_const_now>);
    STATIC_REQUIRE(ania::memory::cjk_bigram_compatible<ania::memory::cjk_bigram_tokenizer>);
    STATIC_REQUIRE(ania::memory::memory_tokenizer<tokenizer_claiming_fusion_falsely>);
    STATIC_REQUIRE_FALSE(ania::memory::cjk_bigram_compatible<tokenizer_claiming_fusion_falsely>);
    STATIC_REQUIRE(ania::reflectable<ania::reflectable_archetype>);
    STATIC_REQUIRE_FALSE(ania::reflectable<not_reflected>);
}

TEST_CASE("the shipped policies model their contracts", "[concepts]") {
    STATIC_REQUIRE(ania::prefix_dropping_store<ania::ram_store>);
    STATIC_REQUIRE(ania::history_store<ania::null_store>);
    STATIC_REQUIRE(ania::prefix_dropping_store<ania::background_writer<ania::ram_store>>);
    STATIC_REQUIRE(ania::compressor<ania::truncate_oldest_half>);
    STATIC_REQUIRE(ania::compressor<ania::budget_trim<>>);
    STATIC_REQUIRE(ania::memory::memory_backend<ania::memory::ram_backend>);
    STATIC_REQUIRE(ania::memory::embedder<ania::memory::no_embedder>);
    STATIC_REQUIRE(ania::memory::wall_clock<ania::memory::system_wall_clock>);
}

// ---- every template instantiated whole over archetypes: a template that uses more than its contract gives
// fails to compile here. The archetypes' members are defined in this file only, to link. ----------------------

namespace ania {
std::vector<message> history_store_archetype::load(std::string_view) { return {}; }
void history_store_archetype::append(std::string_view, std::span<const message>) {}
void history_store_archetype::replace(std::string_view, std::span<const message>) {}
void history_store_archetype::clear(std::string_view) {}
void prefix_dropping_store_archetype::drop_front(std::string_view, std::size_t) {}
std::int64_t token_counter_archetype::count(const message&) const noexcept { return 1; }
completion chat_client_archetype::complete(const chat_request&) { return completion::failure("archetype"); }
compression_result compressor_archetype::compress(const compress_input&) { return compression_result::keep_suffix(0); }
} // namespace ania
namespace ania::memory {
bool memory_backend_archetype::enabled() { return true; }
std::vector<entry> memory_backend_archetype::load(const scope&) { return {}; }
std::vector<std::string> memory_backend_archetype::scopes() { return {}; }
void memory_backend_archetype::insert(const scope&, const entry&) {}
void memory_backend_archetype::update(const scope&, const entry&) {}
void memory_backend_archetype::erase(const scope&, std::string_view) {}
bool versioned_memory_backend_archetype::enabled() { return true; }
std::vector<entry> versioned_memory_backend_archetype::load(const scope&) { return {}; }
std::vector<std::string> versioned_memory_backend_archetype::scopes() { return {}; }
std::uint64_t versioned_memory_backend_archetype::version(const scope&) { return 0; }
std::optional<std::uint64_t> versioned_memory_backend_archetype::insert_if(const scope&, const entry&, std::uint64_t) { return 1; }
std::uint64_t versioned_memory_backend_archetype::insert(const scope&, const entry&) { return 1; }
std::uint64_t versioned_memory_backend_archetype::update(const scope&, const entry&) { return 1; }
std::uint64_t versioned_memory_backend_archetype::erase(const scope&, std::string_view) { return 1; }
std::optional<std::vector<float>> embedder_archetype::embed(std::string_view) { return std::nullopt; }
std::chrono::system_clock::time_point wall_clock_archetype::now() const { return {}; }
template <class Emit>
void memory_tokenizer_archetype::operator()(std::string_view, Emit&&) const {}
double similarity_policy_archetype::weight(std::size_t, std::size_t) const { return 1; }
double similarity_policy_archetype::score(double, double, double, bool) const { return 0; }

struct archetype_traits {
    using backend = memory_backend_archetype;
    using embedder = embedder_archetype;
    using tokenizer = memory_tokenizer_archetype;
    using clock = wall_clock_archetype;
    using similarity = similarity_policy_archetype;
};
struct versioned_archetype_traits : archetype_traits {
    using backend = versioned_memory_backend_archetype;
};
} // namespace ania::memory

namespace ania {
std::span<const tool> tool_source_archetype::tools() const { return {}; }
tool_output tool_source_archetype::run(const tool_call&, const tool_texts&) const { return {}; }
void tool_source_archetype::add(tool) {}
bool tool_source_archetype::remove(std::string_view) { return false; }
std::string agent_hooks_archetype::session_start(const session_start_event&) { return {}; }
prompt_decision agent_hooks_archetype::user_prompt_submit(const user_prompt_event&) { return {}; }
tool_decision agent_hooks_archetype::pre_tool_use(const tool_use_event&) { return {}; }
void agent_hooks_archetype::post_tool_use(const tool_result_event&) {}
void agent_hooks_archetype::stop(const stop_event&) {}
void agent_hooks_archetype::pre_compact(const pre_compact_event&) {}
void event_sink_archetype::operator()(const compression_event&) {}
void event_sink_archetype::operator()(const repair_event&) {}
void event_sink_archetype::operator()(const persistence_event&) {}
void image_policy_archetype::prepare_user(message&, const log_sink&) {}
tool_images image_policy_archetype::from_tool(std::vector<std::string>, const log_sink&) { return {}; }
void log_policy_archetype::operator()(log_level, std::string_view) const {}
agent_clock_archetype::time_point agent_clock_archetype::now() { return {}; }
eviction_policy_archetype::eviction_policy_archetype(const session_limits&) {}
void eviction_policy_archetype::select(std::span<const resident_session>, std::int64_t, std::vector<eviction_choice>&) const {}

/// Every slot of an agent an archetype: the agent uses nothing its slots' contracts do not promise.
struct archetype_agent_traits {
    using token_counter = token_counter_archetype;
    using compressor = compressor_archetype;
    using store = history_store_archetype;
    using client = chat_client_archetype;
    using images = image_policy_archetype;
    using tools = tool_source_archetype;
    using hooks = agent_hooks_archetype;
    using events = event_sink_archetype;
    using log = log_policy_archetype;
    using clock = agent_clock_archetype;
};
struct archetype_store_agent_traits : archetype_agent_traits {
    using store = prefix_dropping_store_archetype;
    using compressor = spec_compressor;
};
} // namespace ania

template class ania::basic_agent<ania::archetype_agent_traits>;
template class ania::basic_agent<ania::archetype_store_agent_traits>;
template class ania::background_writer<ania::history_store_archetype>;
template class ania::background_writer<ania::prefix_dropping_store_archetype>;
template class ania::token_window<ania::token_counter_archetype>;
template class ania::calibrated_counter<ania::token_counter_archetype>;
template struct ania::budget_trim<ania::token_counter_archetype>;
template class ania::llm_summary<ania::chat_client_archetype>;
template class ania::with_fallback<ania::compressor_archetype, ania::compressor_archetype>;
template class ania::default_compressor<ania::chat_client_archetype>;
template class ania::memory::basic_manager<ania::memory::archetype_traits>;
template class ania::memory::basic_manager<ania::memory::versioned_archetype_traits>;
template ania::compress_report ania::maybe_compress(ania::token_window<ania::token_counter_archetype>&, ania::compressor_archetype&,
                                                    ania::history_store_archetype&, std::string_view, ania::turn_stats&,
                                                    const ania::compress_options&);
template ania::compress_report ania::maybe_compress(ania::token_window<ania::token_counter_archetype>&, ania::compressor_archetype&,
                                                    ania::prefix_dropping_store_archetype&, std::string_view, ania::turn_stats&,
                                                    const ania::compress_options&);
