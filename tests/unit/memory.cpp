// tests/unit/memory.cpp -- long-term memory: tokenizer, the golden dedup and search results, every save /
// update / search / forget rule, the tools (bound scope, bad arguments), embeddings, injection, storage, admin.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <cstdio>
#include <fstream>
#include <set>
#include <thread>

#include <ania/config.hpp>
#include <ania/detail/timestamp.hpp>

#include <ania/memory/admin.hpp>
#include <ania/memory/backfill.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/ram_backend.hpp>
#include <ania/memory/tools.hpp>
#ifdef ANIA_TEST_SQLITE
#include <ania/memory/sqlite_backend.hpp>
#include <sqlite3.h>
#endif

#include "bench_data.hpp"
#include "temp_dir.hpp"

using namespace ania::memory;
using ania::json;

namespace {

manager_options quiet_options() {
    manager_options o;
    o.log = [](ania::log_level, std::string_view) {};
    o.seed = 42;
    return o;
}

/// The shared memory_scopes data set, loaded into a backend in file order.
struct golden_memories {
    ram_backend backend;
    std::map<std::string, std::vector<std::string>> ids;  // scope -> ids in file order
    golden_memories() {
        for (const auto& line : ania_test::load_lines("memory_scopes")) {
            const json j = ania::parse_json(line);
            entry e;
            e.id = j.at("id").get<std::string>();
            e.user_id = j.at("user_id").get<std::string>();
            e.content = j.at("content").get<std::string>();
            for (const auto& t : j.at("tags")) e.tags.push_back(t.get<std::string>());
            const scope s = scope::from(j.at("scope").get<std::string>());
            // The reference semantics index a scope's entries in file order, which is not the order of the
            // data set's created_at values; ania keeps a scope oldest first, so the entries get fixed-width
            // times in file order.
            e.created_at = ania::detail::utc_timestamp(std::chrono::system_clock::time_point{} +
                                                       std::chrono::seconds(1'700'000'000 + ids[s.str()].size()));
            backend.insert(s, e);
            ids[s.str()].push_back(e.id);
        }
    }
};

std::vector<std::string> toks(std::string_view s) { return tokenize(s); }

} // namespace

TEST_CASE("the tokenizer follows the reference semantics", "[memory][tokenize]") {
    CHECK(toks("Hello, World! hello") == std::vector<std::string>{"hello", "world"});
    CHECK(toks("群规") == std::vector<std::string>{"群规", "群", "规"});
    CHECK(toks("里发链") == std::vector<std::string>{"里发", "发链", "里", "发", "链"});
    CHECK(toks("止在群里") == std::vector<std::string>{"止在", "在群", "群里"});
    CHECK(toks("猫") == std::vector<std::string>{"猫"});
    CHECK(toks("小明喜欢Python3和C++") == std::vector<std::string>{"小明", "明喜", "喜欢", "python3", "和", "c"});
    CHECK(toks("，。！？「」") .empty());
    CHECK(toks("Ünïcödé ΑΒΓ Привет") == std::vector<std::string>{"ünïcödé", "αβγ", "привет"});
    CHECK(toks("ｆｕｌｌ") == std::vector<std::string>{"ｆｕｌｌ"});  // full-width letters are letters, lower-cased
    CHECK(normalize_for_dedup("  Ｈｅｌｌｏ　 World ") == "Ｈｅｌｌｏ World");
    CHECK(normalize_for_dedup("  Ｈｅｌｌｏ　 World ", exact_duplicate_fold::width_and_case) == "hello world");
}

TEST_CASE("the dedup key is the hash of the normal form", "[memory][tokenize]") {
    // Reference: FNV-1a over the runes of the normal form (an invalid byte as 0x110000 + byte).
    const auto fnv = [](std::string_view s) {
        std::uint64_t h = 1469598103934665603ULL;
        for (std::size_t pos = 0; pos < s.size();) {
            const auto r = ania::text::decode_rune(s, pos);
            if (r.valid) h = (h ^ static_cast<std::uint32_t>(r.value)) * 1099511628211ULL;
            else
                for (std::size_t k = 0; k < r.length; ++k) h = (h ^ (0x110000u + static_cast<unsigned char>(s[pos + k]))) * 1099511628211ULL;
            pos += r.length;
        }
        return h;
    };
    std::mt19937 rng(17);
    const std::vector<std::string> pieces = {"A", "b", " ", "\t", "\xE3\x80\x80", "Ｚ", "ｑ", "中", "Ü", "\xFF", "😀", "  \n",
                                             "\xE4\xB8", "\x80", "\xF0\x9F"};
    for (int i = 0; i < 2000; ++i) {
        std::string s;
        for (int k = static_cast<int>(rng() % 12); k > 0; --k) s += pieces[rng() % pieces.size()];
        INFO(s);
        CHECK(dedup_key(s) == fnv(normalize_for_dedup(s)));
        const auto wide = exact_duplicate_fold::width_and_case;
        CHECK(dedup_key(s, wide) == fnv(normalize_for_dedup(s, wide)));
    }
}

namespace {
template <class Tokenizer>
struct tokenizer_traits : default_memory_traits {
    using tokenizer = Tokenizer;
};
template <class Similarity>
struct similarity_traits : default_memory_traits {
    using similarity = Similarity;
};

/// The reference tokenizer under another type: the manager then indexes through its generic tokenizer path
/// (the default one is fused into a single pass), and both must give the golden results.
struct wrapped_reference_tokenizer {
    template <class Emit>
    void operator()(std::string_view lowered, Emit&& emit) const {
        for_each_token_lowered(lowered, emit);
    }
};
} // namespace

TEMPLATE_TEST_CASE("near-duplicate checks equal golden/dedup_golden.jsonl", "[memory][golden]", cjk_bigram_tokenizer,
                   wrapped_reference_tokenizer) {
    golden_memories g;
    basic_manager<tokenizer_traits<TestType>> m(g.backend, quiet_options());
    const auto candidates = ania_test::load_lines("candidates");
    std::istringstream golden(ania_test::load_golden("dedup_golden.jsonl"));
    std::string line;
    std::size_t checked = 0;
    while (std::getline(golden, line)) {
        const json want = ania::parse_json(line);
        const json cand = ania::parse_json(candidates.at(want.at("i").get<std::size_t>()));
        const scope s = scope::from(want.at("scope").get<std::string>());
        const auto rep = m.near_duplicate(s, cand.at("content").get<std::string>());
        INFO("candidate " << want.at("i") << " " << cand.at("content"));
        REQUIRE(rep.best);
        CHECK(rep.best->id == want.at("best_id").get<std::string>());
        CHECK(g.ids[s.str()].at(rep.best->index) == rep.best->id);
        CHECK(rep.best->index == want.at("best_index").get<std::size_t>());
        CHECK(rep.best->score == Approx(want.at("dice").get<double>()).margin(1e-6));
        CHECK(rep.is_duplicate == want.at("is_dup").get<bool>());
        ++checked;
    }
    CHECK(checked == candidates.size());  // one golden line per candidate
}

TEMPLATE_TEST_CASE("keyword search equals golden/search_golden.jsonl", "[memory][golden]", cjk_bigram_tokenizer,
                   wrapped_reference_tokenizer) {
    golden_memories g;
    basic_manager<tokenizer_traits<TestType>> m(g.backend, quiet_options());
    const auto queries = ania_test::load_lines("queries");
    std::istringstream golden(ania_test::load_golden("search_golden.jsonl"));
    std::string line;
    std::size_t checked = 0;
    while (std::getline(golden, line)) {
        const json want = ania::parse_json(line);
        const json q = ania::parse_json(queries.at(want.at("i").get<std::size_t>()));
        const scope s = scope::from(want.at("scope").get<std::string>());
        const std::string query = q.at("query").get<std::string>();
        std::vector<std::string> terms;
        for (const auto& t : want.at("terms")) terms.push_back(t.get<std::string>());
        CHECK(tokenize(query) == terms);
        const auto hits = m.search(s, query);  // every hit
        std::vector<std::pair<std::size_t, double>> got, expected;
        for (const auto& h : hits) got.emplace_back(h.index, h.score);
        for (const auto& h : want.at("hits")) expected.emplace_back(h.at(0).get<std::size_t>(), h.at(1).get<double>());
        INFO("query " << want.at("i") << " " << query);
        CHECK(got == expected);
        ++checked;
    }
    CHECK(checked == queries.size());  // one golden line per query
}

namespace {

struct manual_clock {
    std::chrono::system_clock::time_point t = std::chrono::system_clock::time_point{} + std::chrono::seconds(1'750'000'000);
    std::chrono::system_clock::time_point now() const { return t; }
};

/// A SCRIPTED embedder: a bag-of-characters vector, or "unavailable" when switched off.
struct scripted_embedder {
    std::shared_ptr<bool> available = std::make_shared<bool>(true);
    std::shared_ptr<int> calls = std::make_shared<int>(0);
    std::optional<std::vector<float>> embed(std::string_view text) const {
        ++*calls;
        if (!*available) return std::nullopt;
        std::vector<float> v(16, 0.0f);
        for (const unsigned char c : text) v[c % 16] += 1.0f;
        return v;
    }
};
static_assert(embedder<scripted_embedder>);

struct manual_clock_traits : default_memory_traits {
    using clock = manual_clock;
};
using plain_manager = basic_manager<manual_clock_traits>;
struct scripted_traits : manual_clock_traits {
    using embedder = scripted_embedder;
};
#ifdef ANIA_TEST_SQLITE
struct sqlite_scripted_traits : default_memory_traits {
    using backend = sqlite_backend;
    using embedder = scripted_embedder;
};
#endif

const scope g1 = scope::from("g:1");
const scope g2 = scope::from("g:2");

} // namespace

TEST_CASE("scopes are g:<digits> or f:<digits> and nothing else", "[memory][scope]") {
    CHECK(scope::parse("g:123"));
    CHECK(scope::parse("f:0"));
    for (const char* bad : {"", "g:", "g:12a", "x:1", "G:1", "g:-1", "g:1 ", " g:1", "f:qq:1", "g:1;DROP", "g:../1", "g:１"})
        CHECK_FALSE(scope::parse(bad));
    CHECK_THROWS_WITH(scope::from("g:x"), Catch::Contains("expected g:<digits> or f:<digits>"));
    CHECK(scope::group("42").str() == "g:42");
    CHECK(scope::friend_("7").str() == "f:7");
}

TEST_CASE("save: trim, cap at 2000 runes, empty is an error", "[memory][save]") {
    ram_backend b;
    plain_manager m(b, quiet_options());
    auto r = m.save(g1, "  \n 小明喜欢美式咖啡 \t ");
    REQUIRE(r.status == save_status::saved);
    CHECK(r.saved.content == "小明喜欢美式咖啡");
    CHECK(r.saved.id.size() == 8);
    CHECK(r.saved.id.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(r.saved.created_at.size() == 30);
    std::string long_text;
    for (int i = 0; i < 2100; ++i) long_text += (i % 2 ? "字" : "😀");
    r = m.save(g1, long_text);
    REQUIRE(r.status == save_status::saved);
    CHECK(ania::text::rune_count(r.saved.content) == 2000);
    CHECK(ania::text::is_valid_utf8(r.saved.content));
    CHECK(m.save(g1, " \n\t\xE3\x80\x80 ").status == save_status::empty);
    CHECK(m.save(g1, "").status == save_status::empty);
}

TEST_CASE("save: exact duplicates after folding white space are not written (SPEC §4)", "[memory][save]") {
    ram_backend b;
    plain_manager m(b, quiet_options());
    const auto first = m.save(g1, "Alice likes  green tea");
    for (const char* same : {"Alice likes green tea", "  Alice\tlikes\n green   tea ", "Alice\xE3\x80\x80likes green tea"}) {
        const auto r = m.save(g1, same);
        INFO(same);
        CHECK(r.status == save_status::exact_duplicate);
        CHECK(r.saved.id == first.saved.id);
    }
    CHECK(m.list(g1).size() == 1);
    // Case and full-width forms are content: by default these are other memories (near duplicates).
    for (const char* other : {"alice likes green tea", "ALICE LIKES GREEN TEA", "Ａｌｉｃｅ likes green tea"}) {
        INFO(other);
        CHECK(m.save(g1, other).status != save_status::exact_duplicate);
    }
    CHECK(m.list(g1).size() == 4);
    CHECK(m.save(g2, "Alice likes green tea").status == save_status::saved);  // another scope is another memory
}

TEST_CASE("save: width_and_case folding (opt-in) also folds case and full-width forms", "[memory][save]") {
    ram_backend b;
    auto opt = quiet_options();
    opt.exact_fold = exact_duplicate_fold::width_and_case;
    plain_manager m(b, opt);
    const auto first = m.save(g1, "Alice likes  green tea");
    for (const char* same : {"alice likes green tea", "  ALICE\tLIKES\n green   TEA ", "Ａｌｉｃｅ　ｌｉｋｅｓ green tea"}) {
        const auto r = m.save(g1, same);
        INFO(same);
        CHECK(r.status == save_status::exact_duplicate);
        CHECK(r.saved.id == first.saved.id);
    }
    CHECK(m.list(g1).size() == 1);
    // The configuration key selects it.
    CHECK(ania::from_config<manager_options>(ania::parse_config(R"({"memory":{"fold_case_and_width":true}})")).exact_fold ==
          exact_duplicate_fold::width_and_case);
    CHECK(ania::from_config<manager_options>(ania::config{}).exact_fold == exact_duplicate_fold::white_space);
}

TEST_CASE("save: a near duplicate is written and reported with the similar entries", "[memory][save]") {
    ram_backend b;
    plain_manager m(b, quiet_options());
    const auto a = m.save(g1, "小明在杭州工作，是一名程序员，平时喜欢爬山。");
    const auto r = m.save(g1, "小明在杭州工作，是程序员，周末喜欢爬山。");
    REQUIRE(r.status == save_status::saved_near_duplicate);
    REQUIRE_FALSE(r.similar.empty());
    CHECK(r.similar[0].id == a.saved.id);
    CHECK(r.similar[0].score >= 0.55);
    CHECK(m.list(g1).size() == 2);
    const auto tools = make_tools(m, g1);
    const std::string reply = tools[0].handler(R"({"content":"小明在杭州工作，是一名程序员，喜欢爬山。"})");
    CHECK(reply.find("memory_update") != std::string::npos);
    CHECK(reply.find("memory_forget") != std::string::npos);
    CHECK(reply.find(a.saved.id) != std::string::npos);
}

TEST_CASE("save: a full scope refuses and tells the model to clean up or merge", "[memory][save]") {
    ram_backend b;
    auto opt = quiet_options();
    opt.max_entries = 5;
    plain_manager m(b, opt);
    for (int i = 0; i < 5; ++i) REQUIRE(m.save(g1, "fact number " + std::string(1, static_cast<char>('a' + i)) + " about topic " + std::to_string(i * 7919)).status != save_status::full);
    CHECK(m.save(g1, "one more fact").status == save_status::full);
    CHECK(m.save(g1, "fact number a about topic 0").status == save_status::exact_duplicate);  // still found
    const auto reply = make_tools(m, g1)[0].handler(R"({"content":"yet another"})");
    CHECK(reply.find("上限 5 条") != std::string::npos);
    CHECK(reply.find("memory_forget") != std::string::npos);
    CHECK(m.save(g2, "other scope has room").status == save_status::saved);
}

TEST_CASE("save: id collisions are retried, never overwritten", "[memory][save]") {
    ram_backend b;
    auto opt = quiet_options();
    opt.seed = 7;
    plain_manager probe(b, opt);
    const std::string first_id = probe.save(g1, "first").saved.id;  // what seed 7 draws first
    ram_backend b2;
    plain_manager m(b2, opt);
    entry planted;
    planted.id = first_id;
    planted.content = "planted before";
    planted.created_at = "2020-01-01T00:00:00.000000000Z";
    b2.insert(g1, planted);
    const auto r = m.save(g1, "new one");
    REQUIRE(r.status == save_status::saved);
    CHECK(r.saved.id != first_id);
    CHECK(m.get(g1, first_id)->content == "planted before");
}

TEST_CASE("update: absent fields kept, empty ones cleared, content change re-embeds, created_at kept", "[memory][update]") {
    ram_backend b;
    scripted_embedder emb;
    basic_manager<scripted_traits> m(b, quiet_options(), {.embedder = emb});
    const auto saved = m.save(g1, "Bob plays chess", "qq:1", {"hobby", "game"}).saved;
    REQUIRE_FALSE(saved.embedding.empty());
    auto r = m.update(g1, saved.id, std::nullopt, std::nullopt, std::nullopt);
    CHECK(r.status == update_status::updated);
    CHECK(r.updated == saved);
    r = m.update(g1, saved.id, std::string_view("Bob plays go"), std::nullopt, std::nullopt);
    CHECK(r.updated.content == "Bob plays go");
    CHECK(r.updated.user_id == "qq:1");
    CHECK(r.updated.tags == std::vector<std::string>{"hobby", "game"});
    CHECK(r.updated.embedding != saved.embedding);
    CHECK(r.updated.created_at == saved.created_at);
    r = m.update(g1, saved.id, std::nullopt, std::string_view(""), std::vector<std::string>{});
    CHECK(r.updated.user_id.empty());
    CHECK(r.updated.tags.empty());
    CHECK(m.update(g1, "deadbeef", std::string_view("x"), std::nullopt, std::nullopt).status == update_status::not_found);
    CHECK(m.update(g1, saved.id, std::string_view("   "), std::nullopt, std::nullopt).status == update_status::empty);
    CHECK(m.get(g1, saved.id)->content == "Bob plays go");
    // The index follows: the old word scores only by vector similarity (<= 40), the new one by keyword too.
    const auto chess = m.search(g1, "chess");
    REQUIRE(chess.size() == 1);
    CHECK(chess[0].score <= 40.0);
    const auto go = m.search(g1, "go");
    REQUIRE(go.size() == 1);
    CHECK(go[0].score > 10.0);
}

TEST_CASE("search: everything newest first without a query; scored, filtered, limited with one", "[memory][search]") {
    ram_backend b;
    manual_clock clock;
    plain_manager m(b, quiet_options(), {.clock = clock});
    const auto a = m.save(g1, "Carol likes coffee", "", {"drink"}).saved;
    const auto c = m.save(g1, "Dave likes tea").saved;
    const auto d = m.save(g1, "Coffee machine is broken", "", {"office", "coffee"}).saved;
    const auto all = m.search(g1, "");
    REQUIRE(all.size() == 3);
    CHECK(all[0].item.id == d.id);  // same clock: insertion order is still kept by the timestamps
    CHECK(all[2].item.id == a.id);
    const auto hits = m.search(g1, "coffee");
    REQUIRE(hits.size() == 2);
    CHECK(hits[0].item.id == d.id);  // content +10, tag "coffee" +20
    CHECK(hits[0].score == 30);
    CHECK(hits[1].score == 10);
    CHECK(m.search(g1, "coffee", 1).size() == 1);
    CHECK(m.search(g1, "", 2).size() == 2);
    CHECK(m.search(g1, "nothing matches").empty());
    CHECK(m.search(g1, "likes").size() == 2);  // substring of the content, not only a token
    (void)c;
}

TEST_CASE("the bigram table keeps values beyond its 22-bit slots and survives rehashing", "[memory][index]") {
    ania::memory::detail::code_point_pair_map map;
    std::map<std::pair<char32_t, char32_t>, std::uint32_t> want;
    std::mt19937 rng(3);
    for (std::uint32_t i = 0; i < 20000; ++i) {  // grows from empty through several rehashes
        const char32_t a = 0x4E00 + rng() % 2000, b = rng() % 2 ? 0x10FFFF - rng() % 50 : 0x3040 + rng() % 100;
        const std::uint32_t value = i % 3 == 0 ? (1u << 22) + i : i;  // every third beyond the slot's value bits
        const std::uint32_t got = map.find_or_insert({a, b}, [&] { return value; });
        want.try_emplace({a, b}, value);
        CHECK(got == want.at({a, b}));
    }
    for (const auto& [k, v] : want) REQUIRE(map.find({k.first, k.second}) == v);
    CHECK_FALSE(map.find({0x4E00, 0x4E00}).has_value());
    CHECK_FALSE(map.find({0x10FFFF, 0x10FFFF}).has_value());
}

TEST_CASE("the index: reindex and the automatic compaction keep every result", "[memory][index]") {
    ram_backend b;
    plain_manager m(b, quiet_options());
    const std::vector<std::string> facts = {
        "小明喜欢喝咖啡，每天早上一杯", "Carol works at the coffee shop", "群规：禁止在群里发链接", "小红的生日是5月4日",
        "Dave 的猫叫豆豆", "backup the wiki every Friday", "周末一起打羽毛球", "小周希望机器人称呼他为张三大人"};
    for (const auto& f : facts) REQUIRE(m.save(g1, f, "", {"标签", "tag"}).status == save_status::saved);
    const std::vector<std::string> probes = {"咖啡", "coffee", "群里", "生日", "猫", "wiki", "羽毛球", "张三", "小明喜欢喝咖啡"};
    const auto results = [&](plain_manager& mm) {
        std::vector<std::pair<std::vector<double>, std::string>> out;
        for (const auto& q : probes) {
            const auto rep = mm.near_duplicate(g1, q);
            out.emplace_back(mm.scores(g1, q), rep.best ? rep.best->id + std::to_string(rep.best->score) : "");
        }
        return out;
    };
    const auto before = results(m);
    m.reindex(g1);
    CHECK(results(m) == before);

    // Thousands of updates with new words each time: dead tokens pile up until the scope is indexed again.
    const std::string victim = m.list(g1).back().id;
    const std::string original = m.list(g1).back().content;
    std::mt19937 rng(5);
    std::size_t peak = 0;
    for (int i = 0; i < 3000; ++i) {
        std::string text = "scratch";
        for (int k = 0; k < 8; ++k) text += " w" + std::to_string(rng());
        text += " ";
        ania::text::append_utf8(text, static_cast<char32_t>(0x4E00 + rng() % 20000));
        ania::text::append_utf8(text, static_cast<char32_t>(0x4E00 + rng() % 20000));
        REQUIRE(m.update(g1, victim, text, std::nullopt, std::nullopt).status == update_status::updated);
        peak = std::max(peak, m.stats(g1).vocabulary);
    }
    CHECK(peak < 3 * 4096);  // 3000 updates brought about 30000 tokens; the vocabulary stayed small
    REQUIRE(m.update(g1, victim, original, std::nullopt, std::nullopt).status == update_status::updated);
    CHECK(results(m) == before);
    plain_manager fresh(b, quiet_options());
    CHECK(results(fresh) == before);
    CHECK(m.stats(g1).entries == facts.size());
}

TEMPLATE_TEST_CASE("the index equals a naive reference on random text (property)", "[memory][index][property]",
                   cjk_bigram_tokenizer, wrapped_reference_tokenizer) {
    // Entries go straight into the backend, so stored text may hold what save() would have repaired
    // (invalid bytes), next to case, full-width forms, Greek, kana, Hangul, emoji and every kind of space, and
    // runes whose lower case is longer or shorter in UTF-8 (the fused indexer lowers in place otherwise).
    const std::vector<std::string> pieces = {"a", "B", "file", "Profile", "42", "7", " ", "\t", "\xE3\x80\x80", "中", "文", "群",
                                             "规", "里", "ｆｕｌｌ", "Ａ", "ΑΒΓ", "ü", "É", "か", "한", "😀", "，", "!", "\xFF",
                                             "\xE4\xB8", "\x80", "\xC2\xA0", "\xE2\x80\x83", "-", "_",
                                             // lower-casing beyond Latin-1: Ÿ -> ÿ, accented Greek capitals, and
                                             // mappings that change the UTF-8 length (ẞ, the Kelvin sign, Ⱥ, İ)
                                             "Ÿ", "Ά", "Ώ", "ẞ", "\u212A", "Ⱥ", "İ", "µ", "ª"};
    std::mt19937 rng(11);
    const auto random_text = [&](int max_pieces) {
        std::string t;
        for (int k = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_pieces)); k > 0; --k) t += pieces[rng() % pieces.size()];
        return t;
    };
    for (int round = 0; round < 20; ++round) {
        ram_backend b;
        std::vector<entry> stored;
        for (int i = 0; i < 30; ++i) {
            entry e;
            e.id = std::to_string(10000000 + i);
            e.content = random_text(12);
            for (int k = static_cast<int>(rng() % 3); k > 0; --k) e.tags.push_back(random_text(3));
            e.created_at = ania::detail::utc_timestamp(std::chrono::system_clock::time_point{} + std::chrono::seconds(1'700'000'000 + i));
            b.insert(g1, e);
            stored.push_back(e);
        }
        basic_manager<tokenizer_traits<TestType>> m(b, quiet_options());
        const auto token_set = [](std::string_view t) {
            const auto v = tokenize(t);
            return std::set<std::string>(v.begin(), v.end());
        };
        for (int q = 0; q < 40; ++q) {
            const std::string probe = random_text(8);
            const std::string clean(ania::text::trim(ania::text::repair_utf8(probe)));
            INFO("probe " << probe);
            // Near duplicates: Dice over token sets, the oldest of equal scores.
            const auto a = token_set(clean);
            double best = -1;
            std::size_t best_i = 0;
            for (std::size_t i = 0; i < stored.size(); ++i) {
                const auto bset = token_set(stored[i].content);
                std::size_t inter = 0;
                for (const auto& t : a) inter += bset.count(t);
                const double d = a.size() + bset.size() ? 2.0 * static_cast<double>(inter) / static_cast<double>(a.size() + bset.size()) : 0.0;
                if (d > best) best = d, best_i = i;
            }
            const auto rep = m.near_duplicate(g1, probe);
            REQUIRE(rep.best);
            CHECK(rep.best->score == Approx(best).margin(1e-12));
            CHECK(rep.best->index == best_i);
            // Keyword scores: +10 per term the lower-cased content contains, +20 per tag containing it.
            std::vector<double> want(stored.size(), 0.0);
            for (const auto& term : tokenize(clean))
                for (std::size_t i = 0; i < stored.size(); ++i) {
                    if (lower(stored[i].content).find(term) != std::string::npos) want[i] += 10;
                    for (const auto& tag : stored[i].tags)
                        if (lower(tag).find(term) != std::string::npos) want[i] += 20;
                }
            CHECK(m.scores(g1, probe) == want);
        }
        // Exact duplicates of stored text (in another case / width / spacing) are found by save().
        const entry& pick = stored[rng() % stored.size()];
        const std::string variant = "  " + pick.content + "\xE3\x80\x80";
        const auto r = m.save(g1, variant);
        if (!normalize_for_dedup(ania::text::repair_utf8(pick.content)).empty() && ania::text::is_valid_utf8(pick.content))
            CHECK(r.status == save_status::exact_duplicate);
    }
}

TEST_CASE("embeddings: a bonus when present, keywords only when the embedder fails, backfilled later", "[memory][embed]") {
    ram_backend b;
    scripted_embedder emb;
    basic_manager<scripted_traits> m(b, quiet_options(), {.embedder = emb});
    *emb.available = false;
    const auto r = m.save(g1, "Erin uses vim");
    REQUIRE(r.status == save_status::saved);  // silently keyword-only
    CHECK(r.saved.embedding.empty());
    const auto plain = m.search(g1, "vim");
    REQUIRE(plain.size() == 1);
    CHECK(plain[0].score == 10);
    *emb.available = true;
    CHECK(m.backfill(10) == 1);
    CHECK_FALSE(m.get(g1, r.saved.id)->embedding.empty());
    CHECK_FALSE(b.load(g1)[0].embedding.empty());  // stored too
    const auto boosted = m.search(g1, "vim");
    REQUIRE(boosted.size() == 1);
    CHECK(boosted[0].score > 10);
    CHECK(boosted[0].score <= 50);
    CHECK(m.backfill(10) == 0);
}

TEST_CASE("the background backfill embeds a backlog a few entries per round", "[memory][embed]") {
    ram_backend b;
    scripted_embedder emb;
    basic_manager<scripted_traits> m(b, quiet_options(), {.embedder = emb});
    *emb.available = false;
    for (int i = 0; i < 7; ++i) m.save(g1, "entry without vector " + std::to_string(i * 1009));
    *emb.available = true;
    {
        embedding_backfill<decltype(m)> worker(m, std::chrono::milliseconds(5), 2);
        for (int wait = 0; wait < 2000 && worker.embedded() < 7; ++wait) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        CHECK(worker.embedded() == 7);
        CHECK(worker.rounds() >= 4);  // 2 per round: rate-limited
    }
    for (const auto& e : m.list(g1)) CHECK(e.embedding.size() == 16);
}

TEST_CASE("manager options come from the configuration", "[memory][config]") {
    const auto o = ania::from_config<manager_options>(ania::parse_config(
        R"({"memory":{"max_entries":50,"max_content_runes":100,"inject_entries":4,"inject_runes":900,"near_duplicate_threshold":0.7}})"));
    CHECK(o.max_entries == 50);
    CHECK(o.max_content_runes == 100);
    CHECK(o.inject_entries == 4);
    CHECK(o.inject_runes == 900);
    CHECK(o.near_duplicate_threshold == 0.7);
    const auto d = ania::from_config<manager_options>(ania::config{});
    CHECK(d.max_entries == 200);
    CHECK(d.inject_entries == 3);
    CHECK(d.inject_runes == 1500);
    CHECK_FALSE(d.near_duplicate_threshold);  // the policy's own: 0.55 for Dice
    CHECK_THROWS_WITH(ania::parse_config(R"({"memory":{"near_duplicate_threshold":1.5}})"),
                      Catch::Contains("memory.near_duplicate_threshold"));

    // The threshold reaches the similarity policy.
    ram_backend b;
    auto strict = o;
    strict.log = [](ania::log_level, std::string_view) {};
    plain_manager m(b, strict);
    CHECK(m.similarity().threshold == 0.7);
    plain_manager spec(b, quiet_options());
    CHECK(spec.similarity().threshold == 0.55);
}

TEST_CASE("search: every entry of a full scope without a query, every hit with one (SPEC §4)", "[memory][search]") {
    ram_backend b;
    plain_manager m(b, quiet_options());
    for (int i = 0; i < 200; ++i) {
        const auto st = m.save(g1, "fact number " + std::to_string(i) + (i % 4 == 0 ? " about tea" : " about work")).status;
        REQUIRE((st == save_status::saved || st == save_status::saved_near_duplicate));  // similar facts: written too
    }
    const auto all = m.search(g1, "");
    REQUIRE(all.size() == 200);
    CHECK(all.front().item.content.rfind("fact number 199 ", 0) == 0);  // newest first
    CHECK(m.search(g1, "tea").size() == 50);
    // The tool gives the model all of them too; a limit the model passes is honoured, any size.
    const auto tools = make_tools(m, g1);
    const auto& search = tools[1];
    REQUIRE(search.name == "memory_search");
    const auto count_lines = [](const std::string& reply) { return std::count(reply.begin(), reply.end(), '\n'); };
    CHECK(count_lines(search.handler("{}")) == 200);
    CHECK(count_lines(search.handler(R"({"query":"tea"})")) == 50);
    CHECK(count_lines(search.handler(R"({"query":"tea","limit":7})")) == 7);
    CHECK(count_lines(search.handler(R"({"limit":18446744073709551615})")) == 200);
    for (const char* bad : {R"({"limit":0})", R"({"limit":-3})", R"({"limit":2.5})", R"({"limit":"9"})"}) {
        INFO(bad);
        CHECK(search.handler(bad).find("limit must be a positive integer") != std::string::npos);
    }
}

namespace {
/// A SCRIPTED embedder: each text's vector is given by the test; any other text gets (0, 1).
struct fixed_embedder {
    std::shared_ptr<std::map<std::string, std::vector<float>, std::less<>>> vectors =
        std::make_shared<std::map<std::string, std::vector<float>, std::less<>>>();
    std::optional<std::vector<float>> embed(std::string_view text) const {
        const auto it = vectors->find(text);
        return it == vectors->end() ? std::vector<float>{0.0f, 1.0f} : it->second;
    }
};
struct fixed_embedder_traits : manual_clock_traits {
    using embedder = fixed_embedder;
};
} // namespace

TEST_CASE("embeddings: the semantic bonus is floor(cosine x 40) when the cosine is positive, never a penalty", "[memory][embed]") {
    ram_backend b;
    fixed_embedder emb;
    auto& v = *emb.vectors;
    v["vim"] = {1.0f, 0.0f};
    v["Erin uses vim"] = {-1.0f, 0.1f};         // keyword hit, negative cosine: still 10
    v["Frank likes emacs"] = {0.5f, 0.8660254f};  // no keyword, cosine 0.5: 20
    v["Gina plays go"] = {0.01f, 0.99995f};     // no keyword, cosine 0.01: floor(0.4) = 0, dropped
    v["Hank likes chess"] = {-0.9f, 0.43589f};  // no keyword, negative cosine: dropped
    v["Ivy writes vim plugins"] = {0.6f, 0.8f};   // keyword and cosine 0.6: 10 + 24
    basic_manager<fixed_embedder_traits> m(b, quiet_options(), {.embedder = emb});
    for (const char* t : {"Erin uses vim", "Frank likes emacs", "Gina plays go", "Hank likes chess", "Ivy writes vim plugins"})
        REQUIRE(m.save(g1, t).status == save_status::saved);
    const auto hits = m.search(g1, "vim");
    REQUIRE(hits.size() == 3);
    CHECK(hits[0].item.content == "Ivy writes vim plugins");
    CHECK(hits[0].score == 34);
    CHECK(hits[1].item.content == "Frank likes emacs");
    CHECK(hits[1].score == 20);
    CHECK(hits[2].item.content == "Erin uses vim");
    CHECK(hits[2].score == 10);
}

TEST_CASE("auto-inject: at most 3 entries even when more fit the rune budget; both caps configurable", "[memory][inject]") {
    ram_backend b;
    plain_manager m(b, quiet_options());
    for (int i = 0; i < 6; ++i) m.save(g1, "咖啡 fact " + std::to_string(i));  // short: the runes never run out
    const auto lines_of = [](const std::string& block) {
        std::size_t lines = 0;
        for (std::size_t at = block.find("\n- ["); at != std::string::npos; at = block.find("\n- [", at + 1)) ++lines;
        return lines;
    };
    CHECK(lines_of(m.inject_block(g1, "咖啡?")) == 3);
    ram_backend b2;
    plain_manager five(b2, [] {
        auto o = ania::from_config<manager_options>(ania::parse_config(R"({"memory":{"inject_entries":5,"inject_runes":4000}})"));
        o.log = [](ania::log_level, std::string_view) {};
        return o;
    }());
    CHECK(five.options().inject_runes == 4000);
    for (int i = 0; i < 6; ++i) five.save(g1, "咖啡 fact " + std::to_string(i));
    CHECK(lines_of(inject_block(five, g1, "咖啡?")) == 5);
    ram_backend b3;
    plain_manager none(b3, [] {  // memory.inject_entries 0: nothing, not "no limit"
        auto o = ania::from_config<manager_options>(ania::parse_config(R"({"memory":{"inject_entries":0}})"));
        o.log = [](ania::log_level, std::string_view) {};
        return o;
    }());
    none.save(g1, "咖啡 fact");
    CHECK(none.search(g1, "咖啡").size() == 1);
    CHECK(inject_block(none, g1, "咖啡?").empty());
}

TEST_CASE("auto-inject: long entries are cut to about 1500 runes, under a header that asks for corrections", "[memory][inject]") {
    ram_backend b;
    plain_manager m(b, quiet_options());
    for (int i = 0; i < 6; ++i) m.save(g1, "咖啡 fact " + std::to_string(i) + " " + std::string(900, static_cast<char>('a' + i)));
    const std::string block = m.inject_block(g1, std::string(5000, 'x') + " 咖啡?");
    CHECK(block.rfind(std::string(default_inject_header), 0) == 0);
    CHECK(block.find("memory_update") != std::string::npos);
    std::size_t lines = 0;
    for (std::size_t at = block.find("\n- ["); at != std::string::npos; at = block.find("\n- [", at + 1)) ++lines;
    CHECK(lines >= 1);
    CHECK(lines <= 3);
    CHECK(ania::text::rune_count(block) <= 1500);
    CHECK(m.inject_block(g1, "nothing relevant here").empty());
}

TEST_CASE("tools: definitions, bound scope, clear errors for malformed arguments", "[memory][tools]") {
    ram_backend b;
    plain_manager m(b, quiet_options());
    const auto tools = make_tools(m, g1);
    REQUIRE(tools.size() == 4);
    CHECK(tools[0].name == "memory_save");
    CHECK(tools[3].name == "memory_forget");
    const json def = tools[0].definition();
    CHECK(def.at("type") == "function");
    CHECK(def.at("function").at("parameters").at("required") == json::array({"content"}));
    CHECK(def.at("function").at("parameters").at("properties").at("tags").at("items").at("type") == "string");
    const auto call = [&](std::size_t t, std::string_view args) { return tools[t].handler(args); };
    CHECK(call(0, "{not json").find("参数无效") != std::string::npos);
    CHECK(call(0, "[1]").find("expected a JSON object") != std::string::npos);
    CHECK(call(0, R"({})").find("content is required") != std::string::npos);
    CHECK(call(0, R"({"content":5})").find("content must be a string") != std::string::npos);
    CHECK(call(0, R"({"content":"x","tags":"work"})").find("tags must be an array of strings") != std::string::npos);
    CHECK(call(0, R"({"content":"x","tags":[1,2]})").find("tags must be an array of strings") != std::string::npos);
    CHECK(call(1, R"({"limit":-3})").find("limit must be a positive integer") != std::string::npos);
    CHECK(call(2, R"({"content":"x"})").find("id is required") != std::string::npos);
    CHECK(call(3, std::string(100000, '[')).find("参数无效") != std::string::npos);  // nesting bomb
    CHECK(m.list(g1).empty());
    const std::string saved = call(0, R"({"content":"Frank lives in Paris","user_id":"qq:9","tags":["city"]})");
    CHECK(saved.find("已保存记忆") != std::string::npos);
    const std::string id = m.list(g1).at(0).id;
    CHECK(call(1, R"({"query":"paris"})").find(id) != std::string::npos);
    CHECK(call(1, "").find(id) != std::string::npos);  // no arguments: everything
    CHECK(call(2, R"({"id":")" + id + R"(","content":"Frank lives in Lyon"})").find("Lyon") != std::string::npos);
    CHECK(call(3, R"({"id":")" + id + R"("})").find("已删除") != std::string::npos);
    CHECK(call(3, R"({"id":")" + id + R"("})").find("找不到") != std::string::npos);
    const auto en = make_tools(m, g1, english_tool_replies());
    CHECK(en[0].handler(R"({"content":"   "})") == "Error: the memory content is empty.");
}

TEST_CASE("tools of one scope never read, edit or delete another scope's entries (property)", "[memory][tools][property]") {
    ram_backend b;
    plain_manager m(b, quiet_options());
    const std::vector<scope> scopes = {scope::from("g:1"), scope::from("g:2"), scope::from("f:3")};
    std::vector<std::vector<ania::tool>> tools;
    for (const auto& s : scopes) tools.push_back(make_tools(m, s));
    std::mt19937 rng(11);
    std::map<std::string, std::set<std::string>> owned;  // scope -> ids it created
    std::vector<std::string> all_ids;
    for (int step = 0; step < 600; ++step) {
        const std::size_t who = rng() % scopes.size();
        const std::string marker = "scope" + std::to_string(who) + " secret " + std::to_string(step);
        switch (rng() % 4) {
        case 0: tools[who][0].handler(json{{"content", marker}}.dump()); break;
        case 1: {
            const std::string out = tools[who][1].handler(R"({"limit":50})");
            for (std::size_t other = 0; other < scopes.size(); ++other)
                if (other != who) CHECK(out.find("scope" + std::to_string(other) + " secret") == std::string::npos);
            break;
        }
        case 2:
            if (!all_ids.empty()) tools[who][2].handler(json{{"id", all_ids[rng() % all_ids.size()]}, {"content", marker}}.dump());
            break;
        default:
            if (!all_ids.empty()) tools[who][3].handler(json{{"id", all_ids[rng() % all_ids.size()]}}.dump());
        }
        all_ids.clear();
        for (std::size_t k = 0; k < scopes.size(); ++k)
            for (const auto& e : m.list(scopes[k])) {
                all_ids.push_back(e.id);
                // Whatever tool touched it, an entry holds only text written by its own scope's tools.
                INFO(e.content);
                CHECK(e.content.rfind("scope" + std::to_string(k) + " ", 0) == 0);
            }
    }
}

TEST_CASE("bad input: invalid UTF-8, 1 MB content, hostile tags and ids", "[memory][bad-input]") {
    ram_backend b;
    plain_manager m(b, quiet_options());
    auto r = m.save(g1, "bad \xFF\xFE bytes", "qq:\xC0", {"t\xFF"});
    REQUIRE(r.status == save_status::saved);
    CHECK(ania::text::is_valid_utf8(r.saved.content));
    CHECK(ania::text::is_valid_utf8(r.saved.user_id));
    CHECK(ania::text::is_valid_utf8(r.saved.tags.at(0)));
    r = m.save(g1, std::string(1 << 20, 'm'));
    REQUIRE(r.status == save_status::saved);
    CHECK(r.saved.content.size() == 2000);
    r = m.save(g1, "tags that look like paths", "", {"../../etc/passwd", "'; DROP TABLE ania_memory; --"});
    CHECK(m.get(g1, r.saved.id)->tags.at(1) == "'; DROP TABLE ania_memory; --");
    CHECK_FALSE(m.get(g1, "../../x"));
    CHECK(m.forget(g1, "' OR '1'='1").status == forget_status::not_found);
    CHECK(m.list(g1).size() == 3);
}

TEST_CASE("admin source: validated scopes, explicit errors", "[memory][admin]") {
    ram_backend b;
    plain_manager m(b, quiet_options());
    admin_source<plain_manager> admin(m);
    const entry e = admin.create("g:100", "Grace is the admin", "qq:5", {"role"});
    CHECK(admin.get("g:100", e.id).content == "Grace is the admin");
    CHECK(admin.list("g:100").size() == 1);
    CHECK(admin.scopes() == std::vector<std::string>{"g:100"});
    CHECK(admin.update("g:100", e.id, std::string_view("Grace is the owner"), std::nullopt, std::nullopt).content == "Grace is the owner");
    CHECK_THROWS_WITH(admin.list("g:100' OR 1=1"), Catch::Contains("invalid memory scope"));
    CHECK_THROWS_WITH(admin.get("x:1", e.id), Catch::Contains("invalid memory scope"));
    CHECK_THROWS_WITH(admin.get("g:101", e.id), Catch::Contains("not found"));  // the id lives in g:100 only
    CHECK_THROWS_WITH(admin.create("g:100", "  "), Catch::Contains("content is empty"));
    CHECK_THROWS_WITH(admin.create("g:100", "Grace  is the\towner "), Catch::Contains("identical memory exists"));
    CHECK_THROWS_WITH(admin.remove("g:100", "00000000"), Catch::Contains("not found"));
    CHECK_THROWS_WITH(admin.update("g:100", e.id, std::string_view("  "), std::nullopt, std::nullopt), Catch::Contains("content is empty"));
    CHECK_THROWS_WITH(admin.update("g:100", "0000000\n", std::nullopt, std::nullopt, std::nullopt), Catch::Contains("0000000\\x0a"));
    {
        ram_backend small;
        auto one = quiet_options();
        one.max_entries = 1;
        plain_manager tiny(small, one);
        admin_source<plain_manager> tiny_admin(tiny);
        tiny_admin.create("g:5", "the only one");
        CHECK_THROWS_WITH(tiny_admin.create("g:5", "a second one"), Catch::Contains("memory of g:5 is full"));
    }
    admin.remove("g:100", e.id);
    CHECK(admin.list("g:100").empty());
}

#ifdef ANIA_TEST_SQLITE
TEST_CASE("sqlite backend: the exact columns, persisted across reopen, fixed-width time order", "[memory][sqlite]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("memory.db");
    std::string id;
    {
        sqlite_backend b(path);
        REQUIRE(b.enabled());
        scripted_embedder emb;
        basic_manager<sqlite_scripted_traits> m(b, quiet_options(), {.embedder = emb});
        id = m.save(g1, "Heidi speaks 日本語", "qq:3", {"lang", "日本"}).saved.id;
        m.save(g1, "second");
        m.save(g2, "other scope");
    }
    sqlite_backend b(path);
    sqlite_manager m(b, quiet_options());
    const auto all = m.list(g1);
    REQUIRE(all.size() == 2);
    CHECK(all[0].id == id);
    CHECK(all[0].tags == std::vector<std::string>{"lang", "日本"});
    CHECK(all[0].embedding.size() == 16);
    CHECK(all[0].created_at < all[1].created_at);
    CHECK(m.scopes() == std::vector<std::string>{"g:1", "g:2"});
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA table_info(ania_memory)", -1, &st, nullptr);
    std::vector<std::string> cols;
    while (sqlite3_step(st) == SQLITE_ROW) cols.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
    sqlite3_finalize(st);
    CHECK(cols == std::vector<std::string>{"scope", "id", "user_id", "content", "tags", "emb", "created_at"});
    sqlite3_prepare_v2(db, "SELECT tags, created_at FROM ania_memory WHERE id = ?1", -1, &st, nullptr);
    sqlite3_bind_text(st, 1, id.c_str(), -1, SQLITE_TRANSIENT);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))) == R"(["lang","日本"])");
    CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 1))).size() == 30);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

TEST_CASE("sqlite backend: an unusable database disables memory as a whole", "[memory][sqlite]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("garbage.db");
    std::ofstream(path, std::ios::binary) << std::string(8192, 'Z');
    std::vector<std::string> logged;
    sqlite_backend_options opt;
    opt.log = [&](ania::log_level, std::string_view t) { logged.emplace_back(t); };
    sqlite_backend b(path, opt);
    CHECK_FALSE(b.enabled());
    REQUIRE_FALSE(logged.empty());
    CHECK(logged[0].find("DISABLED") != std::string::npos);
    sqlite_manager m(b, quiet_options());
    CHECK_FALSE(m.enabled());
    CHECK(make_tools(m, g1).empty());  // no tools registered
    CHECK(m.save(g1, "x").status == save_status::disabled);
    CHECK(m.search(g1, "x").empty());
}
#endif

namespace {
struct quality {
    std::map<std::string, std::pair<int, int>> by_label;  // label -> flagged, total
    int tp = 0, fp = 0, fn = 0;
    [[nodiscard]] double precision() const { return tp + fp ? double(tp) / (tp + fp) : 0; }
    [[nodiscard]] double recall() const { return tp + fn ? double(tp) / (tp + fn) : 0; }
};

template <class Similarity>
quality measure(Similarity sim) {
    golden_memories g;
    basic_manager<similarity_traits<Similarity>> m(g.backend, quiet_options(), {.similarity = sim});
    quality q;
    for (const auto& line : ania_test::load_lines("candidates")) {
        const json c = ania::parse_json(line);
        const std::string label = c.at("planted").get<std::string>();
        const bool positive = label != "fresh" && label != "topical";
        const bool flagged = m.near_duplicate(scope::from(c.at("scope").get<std::string>()), c.at("content").get<std::string>()).is_duplicate;
        auto& [f, t] = q.by_label[label];
        f += flagged;
        ++t;
        q.tp += positive && flagged;
        q.fp += !positive && flagged;
        q.fn += positive && !flagged;
    }
    return q;
}

void print(const char* name, const quality& q) {
    std::printf("%-16s precision %.3f recall %.3f |", name, q.precision(), q.recall());
    for (const auto& [label, ft] : q.by_label) std::printf(" %s %d/%d", label.c_str(), ft.first, ft.second);
    std::printf("\n");
}
} // namespace

TEST_CASE("near-duplicate policies: precision and recall by planted label", "[memory][quality]") {
    const quality dice = measure(dice_similarity{});
    const quality idf = measure(idf_similarity{});
    print("dice 0.55", dice);
    print("idf2+numbers 0.4", idf);
    // Dice at 0.55 is the reference rule: what it flags per planted label is what the golden file says.
    std::map<std::string, std::pair<int, int>> golden;
    std::istringstream lines(ania_test::load_golden("dedup_golden.jsonl"));
    for (std::string line; std::getline(lines, line);) {
        if (line.empty()) continue;
        const json want = ania::parse_json(line);
        auto& [f, t] = golden[want.at("planted").get<std::string>()];
        f += want.at("is_dup").get<bool>();
        ++t;
    }
    CHECK(dice.by_label == golden);
    // The opt-in policy beats it on both counts, by at least what docs/architecture.md reports as a floor.
    CHECK(idf.precision() >= 0.70);
    CHECK(idf.recall() >= 0.70);
    CHECK(idf.by_label.at("fresh").first < dice.by_label.at("fresh").first);
    CHECK(idf.precision() > dice.precision());
    CHECK(idf.recall() > dice.recall());
    CHECK(idf.by_label.at("near_heavy").first > dice.by_label.at("near_heavy").first);
}

TEST_CASE("the manager is safe to use from several threads", "[memory][threads]") {
    ram_backend b;
    auto opt = quiet_options();
    opt.max_entries = 1000;
    plain_manager m(b, opt);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            const scope own = scope::from("g:" + std::to_string(1000 + t));
            for (int i = 0; i < 100; ++i) {
                m.save(own, "thread " + std::to_string(t) + " fact " + std::to_string(i * 7919));
                m.save(g1, "shared " + std::to_string(t) + " item " + std::to_string(i * 104729));
                (void)m.search(g1, "shared item");
                (void)m.search(own, "fact");
            }
        });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) CHECK(m.list(scope::from("g:" + std::to_string(1000 + t))).size() == 100);
    const auto shared = m.list(g1);
    CHECK(shared.size() == 400);
    std::set<std::string> ids;
    for (const auto& e : shared) ids.insert(e.id);
    CHECK(ids.size() == 400);
    CHECK(b.load(g1).size() == 400);
}

TEST_CASE("hostile tool arguments: user ids, tags and echoed ids are capped, control characters quoted", "[memory][bad-input]") {
    ram_backend b;
    auto opt = quiet_options();
    opt.max_user_id_runes = 8;
    opt.max_tags = 2;
    opt.max_tag_runes = 4;
    plain_manager m(b, opt);
    const auto r = m.save(g1, "fact", "用户一二三四五六七八九", {"  ", "abcdefgh", "x", "third"});
    REQUIRE(r.status == save_status::saved);
    CHECK(r.saved.user_id == "用户一二三四五六");
    CHECK(r.saved.tags == std::vector<std::string>{"abcd", "x"});  // empty dropped, cut, the first two kept
    const auto u = m.update(g1, r.saved.id, std::nullopt, std::string_view("0123456789"), std::vector<std::string>{"1", "2", "3"});
    CHECK(u.updated.user_id == "01234567");
    CHECK(u.updated.tags == std::vector<std::string>{"1", "2"});
    // The configuration sets them.
    const auto c = ania::from_config<manager_options>(ania::parse_config(R"({"memory":{"max_user_id_runes":5,"max_tags":1,"max_tag_runes":3}})"));
    CHECK(c.max_user_id_runes == 5);
    CHECK(c.max_tags == 1);
    CHECK(c.max_tag_runes == 3);
    CHECK_THROWS_WITH(ania::parse_config(R"({"memory":{"max_tag_runes":0}})"), Catch::Contains("memory.max_tag_runes"));
    // Echoed input cannot forge lines: control characters and NUL are written as \xNN, and it is cut.
    const auto tools = make_tools(m, g1);
    const std::string reply = tools[3].handler(ania::json{{"id", std::string("x\n[OK] deleted everything\0", 27) + std::string(500, 'y')}}.dump());
    CHECK(reply.find('\n') == std::string::npos);
    CHECK(reply.find(std::string(1, '\0')) == std::string::npos);
    CHECK(reply.find("\\x0a[OK]") != std::string::npos);
    CHECK(reply.size() < 200);
    try {
        (void)scope::from(std::string("g:1\r\nfake log line\0", 19));
        FAIL("accepted");
    } catch (const ania::error& e) {
        const std::string what = e.what();
        CHECK(what.find('\r') == std::string::npos);
        CHECK(what.find('\n') == std::string::npos);
        CHECK(what.find("g:1\\x0d\\x0afake log line\\x00") != std::string::npos);
    }
}

namespace {
/// The reference tokenizer, except that a query holding "blockhere" waits inside the scope's lock until the
/// test opens the gate: it stands for a scoring that takes long (a huge query).
struct gated_tokenizer {
    std::shared_ptr<std::atomic<bool>> inside = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<bool>> open = std::make_shared<std::atomic<bool>>(false);
    template <class Emit>
    void operator()(std::string_view lowered, Emit&& emit) const {
        if (lowered.find("blockhere") != std::string_view::npos) {
            *inside = true;
            for (int waited = 0; !*open && waited < 10000; ++waited) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        for_each_token_lowered(lowered, emit);
    }
};
} // namespace

TEST_CASE("a slow search in one scope does not block the other scopes", "[memory][threads]") {
    ram_backend b;
    gated_tokenizer tok;
    basic_manager<tokenizer_traits<gated_tokenizer>> m(b, quiet_options(), {.tokenizer = tok});
    REQUIRE(m.save(g1, "one fact").status == save_status::saved);
    std::thread slow([&] { (void)m.search(g1, "blockhere"); });
    while (!*tok.inside) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // g1 is busy scoring; g2 is not: its operations complete while g1's lock is held.
    std::atomic<bool> done{false};
    std::thread other([&] {
        (void)m.save(g2, "another fact");
        (void)m.search(g2, "fact");
        done = true;
    });
    for (int waited = 0; !done && waited < 5000; ++waited) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(done.load());  // with one manager-wide lock this waits for the gate (10 s) and fails
    *tok.open = true;
    slow.join();
    other.join();
    CHECK(m.size(g2) == 1);
}

TEST_CASE("runes whose lower case has another UTF-8 length are indexed from a separately lowered copy", "[memory][tokenize]") {
    // The fused indexer lowers in place while it tokenises; ẞ (3 bytes -> 2), the Kelvin sign (3 -> 1) and
    // İ (2 -> 1) cannot be written there, so the entry is lowered into its own buffer and indexed again.
    CHECK(lower("Straẞe \u212Aelvin İzmir") == "straße kelvin izmir");
    CHECK(lower("ÀÉÎ ΑΩ ЖЁ ＡＺ Ÿ \xFF\xE4\xB8") == "àéî αω жё ａｚ ÿ \xFF\xE4\xB8");
    ram_backend b;
    plain_manager m(b, quiet_options());
    const auto saved = m.save(g1, "Straẞe \u212Aelvin İzmir 小明");
    REQUIRE(saved.status == save_status::saved);
    REQUIRE(m.save(g1, "unrelated words").status == save_status::saved);
    for (const char* q : {"straße", "kelvin", "izmir", "KELVIN", "Straße"}) {
        INFO(q);
        const auto hits = m.search(g1, q);
        REQUIRE(hits.size() == 1);
        CHECK(hits[0].item.id == saved.saved.id);
        CHECK(hits[0].score == 10);
    }
    const auto rep = m.near_duplicate(g1, "straße kelvin izmir 小明");
    REQUIRE(rep.best);
    CHECK(rep.best->id == saved.saved.id);
    CHECK(rep.best->score == 1.0);  // the same token set
    CHECK(m.save(g1, " Straẞe  \u212Aelvin İzmir 小明 ").status == save_status::exact_duplicate);
}

namespace {
/// Counts its calls; the reference tokens otherwise.
struct counting_tokenizer {
    std::shared_ptr<int> calls = std::make_shared<int>(0);
    template <class Emit>
    void operator()(std::string_view lowered, Emit&& emit) const {
        ++*calls;
        for_each_token_lowered(lowered, emit);
    }
};
/// The same wrapper, saying that its tokens are the reference's.
struct counting_reference_tokenizer : counting_tokenizer {
    static constexpr bool cjk_bigram_tokens = true;
};
} // namespace

TEST_CASE("a wrapper of the reference tokenizer keeps the fused index path by declaring it", "[memory][tokenize]") {
    STATIC_REQUIRE(cjk_bigram_compatible<counting_reference_tokenizer>);
    STATIC_REQUIRE_FALSE(cjk_bigram_compatible<counting_tokenizer>);
    const auto calls_while_saving = [](auto tok) {
        ram_backend b;
        basic_manager<tokenizer_traits<decltype(tok)>> m(b, quiet_options(), {.tokenizer = tok});
        for (const char* t : {"小明喜欢喝咖啡", "Carol works at the coffee shop", "群规：禁止发链接"})
            REQUIRE(m.save(g1, t).status == save_status::saved);
        const int saving = *tok.calls;
        CHECK(m.search(g1, "coffee").size() == 1);  // keyword search always asks the tokenizer for the terms
        CHECK(*tok.calls == saving + 1);
        return saving;
    };
    CHECK(calls_while_saving(counting_reference_tokenizer{}) == 0);  // indexing and dedup: the fused pass
    CHECK(calls_while_saving(counting_tokenizer{}) > 0);             // every text through the tokenizer
}

// ---- the conformance kits over every shipped backend and similarity policy -------------------------------

#include <ania/testing/memory_backend.hpp>
#include <ania/testing/similarity.hpp>

#ifdef ANIA_TEST_SQLITE
namespace ania::testing {
template <>
struct memory_backend_fixture<sqlite_backend> {
    ania_test::temp_dir dir;
    std::unique_ptr<sqlite_backend> make() { return std::make_unique<sqlite_backend>(dir.file("memory.db")); }
    std::unique_ptr<sqlite_backend> reopen() { return make(); }
};
} // namespace ania::testing

using shipped_backends = std::tuple<ram_backend, sqlite_backend>;
#else
using shipped_backends = std::tuple<ram_backend>;
#endif
ANIA_TEST_MEMORY_BACKENDS(shipped_backends)
using shipped_similarity = std::tuple<dice_similarity, idf_similarity>;
ANIA_TEST_SIMILARITY_POLICIES(shipped_similarity)

namespace {
/// A backend that could not be set up: enabled() is false, and any other call is counted (none may happen).
struct unavailable_backend {
    std::shared_ptr<int> touched = std::make_shared<int>(0);
    bool enabled() const { return false; }
    std::vector<entry> load(const scope&) const { ++*touched; return {}; }
    std::vector<std::string> scopes() const { ++*touched; return {}; }
    void insert(const scope&, const entry&) { ++*touched; }
    void update(const scope&, const entry&) { ++*touched; }
    void erase(const scope&, std::string_view) { ++*touched; }
};
struct unavailable_traits : default_memory_traits {
    using backend = unavailable_backend;
};
} // namespace

TEST_CASE("a disabled backend: every entry point answers disabled or nothing and never touches it", "[memory]") {
    unavailable_backend b;
    basic_manager<unavailable_traits> m(b, quiet_options());
    CHECK_FALSE(m.enabled());
    CHECK(m.save(g1, "x").status == save_status::disabled);
    CHECK(m.update(g1, "00000000", "y", std::nullopt, std::nullopt).status == update_status::disabled);
    CHECK(m.forget(g1, "00000000").status == forget_status::disabled);
    CHECK(m.search(g1, "x").empty());
    CHECK(m.search(g1, "").empty());
    CHECK(m.scores(g1, "x").empty());
    CHECK_FALSE(m.near_duplicate(g1, "x").best.has_value());
    CHECK(m.list(g1).empty());
    CHECK_FALSE(m.get(g1, "00000000").has_value());
    CHECK(m.size(g1) == 0);
    CHECK(m.stats(g1).entries == 0);
    CHECK(m.scopes().empty());
    CHECK(m.backfill(10) == 0);
    CHECK(inject_block(m, g1, "x").empty());
    m.reload(g1);
    m.reindex(g1);
    CHECK(make_tools(m, g1).empty());
    CHECK(*b.touched == 0);
}
