// ania/memory/admin.hpp -- the operator panel's view of long-term memory (SPEC §4 MemorySource).
// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/error.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/provenance.hpp>

namespace ania::memory {

/// List scopes; list, get, create, update and delete the entries of a scope. Every scope argument is
/// validated against ^[gf]:\d+$ first, so nothing outside a real scope can be reached; every failure is an
/// ania::error (invalid_argument, not_found, store_error) with the reason.
template <class Manager>
class admin_source {
public:
    explicit admin_source(Manager& m) : m_(m) {}

    [[nodiscard]] std::vector<std::string> scopes() const { return m_.scopes(); }
    [[nodiscard]] std::vector<entry> list(std::string_view scope_text) { return m_.list(scope::from(scope_text)); }
    [[nodiscard]] entry get(std::string_view scope_text, std::string_view id) {
        auto e = m_.get(scope::from(scope_text), id);
        if (!e) throw error(errc::not_found, "memory " + text::quote_for_message(id) + " not found in " + text::quote_for_message(scope_text));
        return *e;
    }
    /// An entry's versions, oldest first (see basic_manager::history).
    [[nodiscard]] std::vector<memory_version> history(std::string_view scope_text, std::string_view id) {
        return m_.history(scope::from(scope_text), id);
    }

    entry create(std::string_view scope_text, std::string_view content, std::string_view user_id = {}, std::vector<std::string> tags = {}) {
        const scope s = scope::from(scope_text);
        const acting_as who(admin_origin());
        save_result r = m_.save(s, content, user_id, std::move(tags));
        switch (r.status) {
        case save_status::saved:
        case save_status::saved_near_duplicate: return r.saved;
        case save_status::exact_duplicate: throw error(errc::invalid_argument, "an identical memory exists: " + r.saved.id);
        case save_status::empty: throw error(errc::invalid_argument, "content is empty");
        case save_status::full: throw error(errc::invalid_argument, "memory of " + s.str() + " is full");
        case save_status::disabled: throw error(errc::store_error, "memory is disabled");
        default: throw error(errc::store_error, r.error);
        }
    }
    entry update(std::string_view scope_text, std::string_view id, std::optional<std::string_view> content,
                 std::optional<std::string_view> user_id, std::optional<std::vector<std::string>> tags) {
        const scope s = scope::from(scope_text);
        const acting_as who(admin_origin());
        return updated(m_.update(s, id, content, user_id, std::move(tags)), id, s);
    }
    /// Brings back version `seq` of an entry (see basic_manager::restore): the entry as it is now.
    entry restore(std::string_view scope_text, std::string_view id, std::uint64_t seq) {
        const scope s = scope::from(scope_text);
        const acting_as who(admin_origin());
        return updated(m_.restore(s, id, seq), id, s, seq);
    }
    void remove(std::string_view scope_text, std::string_view id) {
        const scope s = scope::from(scope_text);
        const acting_as who(admin_origin());
        const forget_result r = m_.forget(s, id);
        switch (r.status) {
        case forget_status::forgotten: return;
        case forget_status::not_found: throw error(errc::not_found, "memory " + text::quote_for_message(id) + " not found");
        case forget_status::disabled: throw error(errc::store_error, "memory is disabled");
        default: throw error(errc::store_error, r.error);
        }
    }

private:
    /// The operator's changes are recorded as "admin" unless the caller said who (acting_as).
    [[nodiscard]] static change_origin admin_origin() {
        const change_origin& now = current_origin();
        return now.actor.empty() ? change_origin{"admin", {}, {}} : now;
    }
    static entry updated(update_result r, std::string_view id, const scope& s, std::optional<std::uint64_t> seq = std::nullopt) {
        switch (r.status) {
        case update_status::updated: return std::move(r.updated);
        case update_status::not_found:
            throw error(errc::not_found, seq ? "version " + std::to_string(*seq) + " of memory " + text::quote_for_message(id) + " not found"
                                             : "memory " + text::quote_for_message(id) + " not found");
        case update_status::empty: throw error(errc::invalid_argument, "content is empty");
        case update_status::full: throw error(errc::invalid_argument, "memory of " + s.str() + " is full");
        case update_status::disabled: throw error(errc::store_error, "memory is disabled");
        default: throw error(errc::store_error, r.error);
        }
    }

    Manager& m_;
};

} // namespace ania::memory
