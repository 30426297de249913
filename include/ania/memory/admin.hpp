// ania/memory/admin.hpp -- the operator panel's view of long-term memory (SPEC §4 MemorySource).
// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/error.hpp>
#include <ania/memory/manager.hpp>

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
    entry create(std::string_view scope_text, std::string_view content, std::string_view user_id = {}, std::vector<std::string> tags = {}) {
        const scope s = scope::from(scope_text);
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
        update_result r = m_.update(scope::from(scope_text), id, content, user_id, std::move(tags));
        switch (r.status) {
        case update_status::updated: return r.updated;
        case update_status::not_found: throw error(errc::not_found, "memory " + text::quote_for_message(id) + " not found");
        case update_status::empty: throw error(errc::invalid_argument, "content is empty");
        case update_status::disabled: throw error(errc::store_error, "memory is disabled");
        default: throw error(errc::store_error, r.error);
        }
    }
    void remove(std::string_view scope_text, std::string_view id) {
        const forget_result r = m_.forget(scope::from(scope_text), id);
        switch (r.status) {
        case forget_status::forgotten: return;
        case forget_status::not_found: throw error(errc::not_found, "memory " + text::quote_for_message(id) + " not found");
        case forget_status::disabled: throw error(errc::store_error, "memory is disabled");
        default: throw error(errc::store_error, r.error);
        }
    }

private:
    Manager& m_;
};

} // namespace ania::memory
