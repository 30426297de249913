// ania/bot/images.hpp -- the image policy a bot picks at run time from its configuration (SPEC §5).
// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/agent/images.hpp>
#include <ania/concepts.hpp>
#include <ania/history/persist.hpp>
#include <ania/log.hpp>
#include <ania/message.hpp>

namespace ania {

/// `multimodal = true`: images go to the main model (ania::multimodal). Otherwise, with a vision model
/// (`ocr.*` with a key): each image is described by it (ania::describe_images). Otherwise the model is told
/// an image was there and could not be read: a marker, never image parts a text-only model would reject.
/// Copies share the description cache (one per bot).
template <chat_client Vision>
class bot_images {
public:
    enum class mode : std::uint8_t { multimodal, describe, unreadable };

    /// The main model takes images.
    bot_images() = default;
    /// The main model does not: `vision` describes them, or (none) they become markers.
    explicit bot_images(std::optional<Vision> vision) : mode_(vision ? mode::describe : mode::unreadable) {
        if (vision) describe_.emplace(std::move(*vision));
    }

    void prepare_user(message& user, const log_sink& log) {
        if (mode_ == mode::describe) return describe_->prepare_user(user, log);
        if (mode_ == mode::multimodal || user.form != content_form::parts) return;
        std::string text;
        for (const content_part& p : user.parts) {
            if (!text.empty()) text.push_back('\n');
            text += p.type == content_part::kind::text ? p.text : unreadable_text(p.url);
        }
        user = message::user(std::move(text));
    }
    [[nodiscard]] tool_images from_tool(std::vector<std::string> images, const log_sink& log) {
        if (mode_ == mode::describe) return describe_->from_tool(std::move(images), log);
        if (mode_ == mode::multimodal) return multimodal_.from_tool(std::move(images), log);
        tool_images out;
        for (const std::string& url : images) {
            out.result_suffix.push_back('\n');
            out.result_suffix += unreadable_text(url);
        }
        return out;
    }

    [[nodiscard]] mode current() const noexcept { return mode_; }

private:
    [[nodiscard]] static std::string unreadable_text(std::string_view url) {
        return image_marker_for(url) + " （图片无法识别：没有配置识图模型）";
    }

    mode mode_ = mode::multimodal;
    multimodal multimodal_{};
    std::optional<describe_images<Vision>> describe_{};
};

} // namespace ania
