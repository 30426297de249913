// tests/support/bench_data.hpp -- the shared data set: where it is, manifest checks, gzip'd JSONL reading.
// SPDX-License-Identifier: MIT
// Used by the golden tests and the benchmarks. The directory is $ANIA_BENCH_DATA, else the vendored copy
// (bench/data, passed in by the build as ANIA_VENDORED_BENCH_DATA). Every file is checked against the
// MANIFEST.json of the same directory (size, SHA-256 of the .gz, line count, raw size) before it is used.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <zlib.h>

#include <ania/json.hpp>
#include <ania/text/sha256.hpp>

namespace ania_test {

inline std::string bench_data_dir() {
    if (const char* env = std::getenv("ANIA_BENCH_DATA"); env && *env) return env;
#ifdef ANIA_VENDORED_BENCH_DATA
    return ANIA_VENDORED_BENCH_DATA;
#else
    throw std::runtime_error("bench data: set ANIA_BENCH_DATA to the data set directory");
#endif
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("bench data: cannot open " + path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::string gunzip(const std::string& gz, const std::string& what) {
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK) throw std::runtime_error("bench data: zlib init failed");
    std::string out;
    char buf[1 << 16];
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
    zs.avail_in = static_cast<uInt>(gz.size());
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        zs.next_out = reinterpret_cast<Bytef*>(buf);
        zs.avail_out = sizeof buf;
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
            inflateEnd(&zs);
            throw std::runtime_error("bench data: " + what + " is not valid gzip");
        }
        out.append(buf, sizeof buf - zs.avail_out);
    }
    inflateEnd(&zs);
    return out;
}

/// MANIFEST.json of the data set: per file its lines, sizes, hash and counts (e.g. history_10k.tool_msgs).
/// Expectations about the data come from here or from the golden files, never from one data set's figures.
inline ania::json manifest() { return ania::parse_json(read_file(bench_data_dir() + "/MANIFEST.json")); }

/// The lines of `<dir>/<name>.jsonl.gz`, after checking the file against MANIFEST.json[name].
inline std::vector<std::string> load_lines(const std::string& name) {
    const std::string dir = bench_data_dir();
    const ania::json manifest = ania_test::manifest();
    if (!manifest.contains(name)) throw std::runtime_error("bench data: MANIFEST.json has no entry " + name);
    const ania::json& entry = manifest.at(name);
    const std::string gz = read_file(dir + "/" + name + ".jsonl.gz");
    const auto fail = [&](const std::string& what) {
        throw std::runtime_error("bench data: " + name + ".jsonl.gz in " + dir + " does not match MANIFEST.json: " + what);
    };
    if (gz.size() != entry.at("gz_bytes").get<std::size_t>()) fail("gz_bytes");
    if (ania::text::sha256_hex(gz) != entry.at("sha256_gz").get<std::string>()) fail("sha256_gz");
    const std::string raw = gunzip(gz, name);
    if (raw.size() != entry.at("raw_bytes").get<std::size_t>()) fail("raw_bytes");
    std::vector<std::string> lines;
    std::size_t pos = 0;
    while (pos < raw.size()) {
        std::size_t nl = raw.find('\n', pos);
        if (nl == std::string::npos) nl = raw.size();
        lines.emplace_back(raw, pos, nl - pos);
        pos = nl + 1;
    }
    if (lines.size() != entry.at("lines").get<std::size_t>()) fail("lines");
    return lines;
}

/// `<dir>/golden/<file>` as text (golden files are not in the manifest; they are checked by their tests).
/// A history file as a conversation: its first line is the base prompt (a system message), the rest the history.
struct conversation {
    std::string system_prompt;
    std::vector<ania::message> history;
};
inline conversation load_conversation(const std::string& name) {
    const std::vector<std::string> lines = load_lines(name);
    conversation c;
    if (lines.empty()) return c;
    c.system_prompt = ania::parse_message(lines[0]).content;
    c.history.reserve(lines.size() - 1);
    for (std::size_t i = 1; i < lines.size(); ++i) c.history.push_back(ania::parse_message(lines[i]));
    return c;
}

inline std::string load_golden(const std::string& file) { return read_file(bench_data_dir() + "/golden/" + file); }

} // namespace ania_test
