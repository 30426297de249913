// ania/config/io.hpp -- any reflectable configuration section read from and written to JSON (Hana reflection):
// the sections of ania::config adapted, and load_config / parse_config / to_json for any adapted section
// (ania::config itself in header-only mode, which includes this from <ania/config.hpp>). Include it to load a section
// of your own, in either mode; in compiled mode <ania/config/io-inl.hpp> defines the ania::config functions with it.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/hana/accessors.hpp>
#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/unpack.hpp>

#include <ania/config/config.hpp>
#include <ania/error.hpp>
#include <ania/json.hpp>
#include <ania/text/utf8.hpp>

// The reflection lives here, not beside the structs: its expansion is a quarter of a second of every
// translation unit that parses it, and only the JSON reader and writer need it.
BOOST_HANA_ADAPT_STRUCT(ania::llm_config, base_url, api_key, model, stream, connect_timeout_ms, timeout_ms,
                        stall_timeout_ms, max_retries, replay_reasoning, extra);
BOOST_HANA_ADAPT_STRUCT(ania::compressor_config::clear_tool_results_config, enabled, trigger, keep, exclude, clear_at_least,
                        clear_arguments, placeholder);
BOOST_HANA_ADAPT_STRUCT(ania::compressor_config::verify_config, max_ratio, reject_refusals, same_script, breaker_failures,
                        breaker_cool_down_seconds);
BOOST_HANA_ADAPT_STRUCT(ania::compressor_config, base_url, api_key, model, stack_summaries, clear_tool_results, verify);
BOOST_HANA_ADAPT_STRUCT(ania::session_config, max_idle_minutes, max_sessions, group_auto_clear);
BOOST_HANA_ADAPT_STRUCT(ania::history_config::archive_config, enabled, max_messages, max_bytes, keep_on_clear);
BOOST_HANA_ADAPT_STRUCT(ania::history_config, archive);
BOOST_HANA_ADAPT_STRUCT(ania::memory_config, max_entries, max_content_runes, auto_inject, inject_entries, inject_runes,
                        near_duplicate_threshold, fold_case_and_width, max_user_id_runes, max_tags, max_tag_runes, versions_kept);
BOOST_HANA_ADAPT_STRUCT(ania::ocr_config, base_url, api_key, model);
BOOST_HANA_ADAPT_STRUCT(ania::postgres_config, dsn, pool_size, statement_timeout_ms, transaction_pooling);
BOOST_HANA_ADAPT_STRUCT(ania::admin_config, enabled, listen, token, token_file, busy_threads, requests_per_second, burst);
BOOST_HANA_ADAPT_STRUCT(ania::config, max_context_tokens, compress_ratio, wire_cache, llm, compressor, session, history, memory,
                        ocr, postgres, admin, multimodal);

namespace ania {

/// True for types whose members Hana can enumerate (BOOST_HANA_ADAPT_STRUCT / BOOST_HANA_DEFINE_STRUCT): the
/// config sections, or a user's own section read by load_config.
template <class T>
concept reflectable = boost::hana::Struct<T>::value;

/// The archetype of `reflectable`: one adapted member is enough.
struct reflectable_archetype {
    int member;
};

} // namespace ania

BOOST_HANA_ADAPT_STRUCT(ania::reflectable_archetype, member);

namespace ania {

static_assert(reflectable<reflectable_archetype> && reflectable<config> && !reflectable<int>);

namespace detail {

[[noreturn]] inline void config_type_error(const std::string& key, const char* expected, const json& v) {
    throw error(errc::invalid_config, key + ": expected " + expected + ", got " + v.type_name());
}

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
void read_config_value(const json& v, T& out, const std::string& key);
template <class T>
json write_config_value(const T& v);

/// A section's members as a table walked at run time: a reader and a writer per member, made once per section
/// type (not a hana::for_each at every key), and no Hana error cascade past the one static_assert.
template <reflectable T>
struct config_fields {
    struct field {
        std::string_view name;
        void (*read)(const json& v, T& out, const std::string& key);
        json (*write)(const T& c);
    };
    static constexpr auto table = boost::hana::unpack(boost::hana::accessors<T>(), [](auto... p) {
        return std::array<field, sizeof...(p)>{
            field{boost::hana::to<const char*>(boost::hana::first(p)),
                  [](const json& v, T& out, const std::string& key) {
                      read_config_value(v, std::remove_cvref_t<decltype(boost::hana::second(p))>{}(out), key);
                  },
                  [](const T& c) { return write_config_value(std::remove_cvref_t<decltype(boost::hana::second(p))>{}(c)); }}...};
    });
};

template <reflectable T>
std::string member_list() {
    std::string names;
    for (const auto& f : config_fields<T>::table) {
        if (!names.empty()) names += ", ";
        names += f.name;
    }
    return names;
}

template <class T>
void read_config_value(const json& v, T& out, const std::string& key) {
    if constexpr (is_optional<T>::value) {  // null: absent
        if (v.is_null()) {
            out.reset();
        } else {
            typename T::value_type x{};
            read_config_value(v, x, key);
            out = std::move(x);
        }
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) config_type_error(key, "a boolean", v);
        out = v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
        if (!v.is_number_integer() && !v.is_number_unsigned()) config_type_error(key, "an integer", v);
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
            throw error(errc::invalid_config, key + ": integer out of range");
        out = static_cast<T>(v.get<std::int64_t>());
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number()) config_type_error(key, "a number", v);
        out = v.get<T>();
        if (!std::isfinite(out)) throw error(errc::invalid_config, key + ": must be a finite number");
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) config_type_error(key, "a string", v);
        out = text::repair_utf8(v.get_ref<const std::string&>());
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        if (!v.is_array()) config_type_error(key, "an array of strings", v);
        out.clear();
        out.reserve(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            std::string s;
            read_config_value(v[i], s, key + "[" + std::to_string(i) + "]");
            out.push_back(std::move(s));
        }
    } else if constexpr (std::is_same_v<T, json_members>) {  // passed through as it is (llm.extra)
        if (!v.is_object()) config_type_error(key, "an object", v);
        out = members_from(v);
    } else if constexpr (std::is_same_v<T, json>) {  // a user's section may keep any JSON value as it is
        if (!v.is_object()) config_type_error(key, "an object", v);
        out = v;
    } else if constexpr (!reflectable<T>) {
        static_assert(reflectable<T>, "ania::load_config: unsupported member type");
    } else {
        if (!v.is_object()) config_type_error(key.empty() ? "the configuration" : key, "an object", v);
        const auto& fields = config_fields<T>::table;
        for (auto it = v.begin(); it != v.end(); ++it) {
            const std::string full = key.empty() ? it.key() : key + "." + it.key();
            const auto f = std::find_if(fields.begin(), fields.end(), [&](const auto& x) { return x.name == it.key(); });
            if (f == fields.end())
                throw error(errc::invalid_config, "unknown key \"" + full + "\"; valid keys" +
                                                      (key.empty() ? std::string() : " in " + key) + ": " + member_list<T>());
            f->read(it.value(), out, full);
        }
    }
}

template <class T>
json write_config_value(const T& v) {
    if constexpr (is_optional<T>::value) {
        return v ? write_config_value(*v) : json(nullptr);
    } else if constexpr (std::is_same_v<T, json_members>) {
        return to_json(v);
    } else if constexpr (reflectable<T>) {
        json j = json::object();
        for (const auto& f : config_fields<T>::table) j[std::string(f.name)] = f.write(v);
        return j;
    } else {
        return json(v);
    }
}

} // namespace detail

/// Any reflectable section from a JSON object (the rules are written in config.hpp).
template <reflectable T = config>
[[nodiscard]] T load_config(const json& j) {
    T c;
    detail::with_json_errors(errc::invalid_config, "configuration", [&] { detail::read_config_value(j, c, ""); });
    if constexpr (std::is_same_v<T, config>) validate(c);
    return c;
}

/// load_config<T> over JSON text (parsed within the default parse_limits).
template <reflectable T = config>
[[nodiscard]] T parse_config(std::string_view text) {
    return load_config<T>(parse_json(text));
}

/// parse_config<T> over a file's text. A file that cannot be read, or whose text is not a valid
/// configuration, is an ania::error (invalid_config) whose text starts with the path.
template <reflectable T = config>
[[nodiscard]] T load_config_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(errc::invalid_config, path + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return parse_config<T>(text.str());
    } catch (const error& e) {
        throw error(e.code(), path + ": " + e.what());
    }
}

/// Every key of a reflectable section with its value, in declaration order.
template <reflectable T>
[[nodiscard]] json to_json(const T& c) {
    return detail::write_config_value(c);
}

} // namespace ania
