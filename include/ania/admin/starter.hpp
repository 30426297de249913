// ania/admin/starter.hpp -- how a bot starts the operator's console without depending on its HTTP server:
// <ania/admin/console.hpp> installs the starter when it is included (and ania-admin linked), and
// basic_bot calls it when `admin.enabled`. Not API.
// SPDX-License-Identifier: MIT
#pragma once

#include <memory>

#include <ania/admin/views.hpp>
#include <ania/config/config.hpp>

namespace ania::admin::detail {

/// A running console, as a bot holds it.
class running_console {
public:
    virtual ~running_console() = default;
    [[nodiscard]] virtual int port() const noexcept = 0;
};

using console_starter = std::unique_ptr<running_console> (*)(const config&, const api_parts&);

/// Null until <ania/admin/console.hpp> is part of the program.
[[nodiscard]] inline console_starter& installed_console_starter() noexcept {
    static console_starter s = nullptr;
    return s;
}

} // namespace ania::admin::detail
