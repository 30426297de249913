// tests/unit/concepts.cpp -- the contracts reject the near misses they promise to reject, at compile time.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string_view>

#include <ania/concepts.hpp>
#include <ania/context/token_counter.hpp>
#include <ania/memory/similarity.hpp>
#include <ania/memory/tokenize.hpp>

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
