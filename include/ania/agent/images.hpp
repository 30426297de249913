// ania/agent/images.hpp -- what the main model gets of an image (SPEC §5): the image, or a description of it.
// SPDX-License-Identifier: MIT
//
// An image policy sees the images of a turn twice: in the user's input (`prepare_user`) and in what a tool
// produced (`from_tool`). The stored copy never holds an image either way (SPEC §2: `[图片 <hash>]` markers).
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/concepts.hpp>
#include <ania/history/persist.hpp>
#include <ania/log.hpp>
#include <ania/message.hpp>
#include <ania/text/sha256.hpp>
#include <ania/text/shared_text.hpp>

namespace ania {

/// What a tool's images become for the model: text added to the tool result, and (multimodal) a user message
/// with image parts that follows the tool results of the batch, so the next call of the loop sees them.
struct tool_images {
    std::string result_suffix;
    std::optional<message> next_round;
};

/// `multimodal = true`: the main model takes images. User images stay image parts (the window keeps them for
/// the session; the store gets markers); images a tool produces are queued and sent as image parts of the
/// next round, in a user message after the batch's tool results (the protocol has no image in a tool result).
struct multimodal {
    shared_text tool_images_text = shared_text::literal("以下是工具返回的图片：");

    void prepare_user(message&, const log_sink&) {}
    [[nodiscard]] tool_images from_tool(std::vector<std::string> images, const log_sink&);
};

/// The main model does not take images: each one (in the user input or from a tool) goes to a vision model
/// (`ocr.*` in the configuration; any chat_client), and the main model reads `[图片 <hash>] <description>`
/// instead. The window and the store keep that text, which is what the model saw. Descriptions are cached by
/// the image's SHA-256 (copies of the policy share the cache, bounded by `max_cached`), so an image that comes
/// back is not described twice. A failed description is a text saying so, never a failed turn.
template <chat_client Vision>
class describe_images {
public:
    explicit describe_images(Vision vision, std::string prompt = "请详细描述这张图片的内容；如果图中有文字，请完整转写。",
                             std::size_t max_cached = 1024)
        : vision_(std::move(vision)), state_(std::make_shared<state>()), prompt_(std::move(prompt)), max_cached_(max_cached) {}

    void prepare_user(message& user, const log_sink& log) {
        if (user.form != content_form::parts) return;
        std::string text;
        std::vector<std::string> described;
        for (content_part& p : user.parts) {
            if (p.type == content_part::kind::text) {
                if (!text.empty()) text.push_back('\n');
                text += p.text;
            } else if (p.type == content_part::kind::image_url) {
                described.push_back(describe(p.url, log));
            }
        }
        for (std::string& d : described) {
            if (!text.empty()) text.push_back('\n');
            text += d;
        }
        user = message::user(std::move(text));
    }

    [[nodiscard]] tool_images from_tool(std::vector<std::string> images, const log_sink& log) {
        tool_images out;
        for (const std::string& url : images) {
            out.result_suffix.push_back('\n');
            out.result_suffix += describe(url, log);
        }
        return out;
    }

    /// `[图片 <hash>] <description>` for one image reference (a URL or a data URI).
    [[nodiscard]] std::string describe(std::string_view url, const log_sink& log) {
        const std::string marker = image_marker_for(url);
        const std::string hash = text::sha256_hex(url);  // the full digest: 8 hex digits collide across many images
        {
            std::lock_guard lock(state_->mutex);
            if (const auto it = state_->cache.find(hash); it != state_->cache.end()) return marker + " " + it->second;
        }
        std::vector<content_part> parts;
        parts.push_back(content_part::make_text(prompt_));
        parts.push_back(content_part::make_image(std::string(url)));
        const std::vector<message> request{message::user(std::move(parts))};
        completion c;
        try {
            c = vision_.complete(chat_request{std::span<const message>(request)});
        } catch (const std::exception& e) {
            c = completion::failure(e.what());
        } catch (...) {
            c = completion::failure("the vision client threw");
        }
        std::string d = c.ok ? std::string(text::trim(c.reply.text())) : std::string();
        if (d.empty()) {
            log_to(log, log_level::warn, "describe_images: the vision model gave no description: " + (c.ok ? std::string("empty reply") : c.error));
            return marker + " （图片无法识别）";
        }
        std::lock_guard lock(state_->mutex);
        if (state_->cache.size() >= max_cached_) state_->cache.clear();  // a bound, not an LRU: memory stays bounded
        state_->cache.emplace(hash, d);
        ++state_->described;
        return marker + " " + d;
    }
    /// Calls made to the vision model that gave a description (cache hits are not calls).
    [[nodiscard]] std::size_t described() const {
        std::lock_guard lock(state_->mutex);
        return state_->described;
    }
    [[nodiscard]] Vision& vision() noexcept { return vision_; }

private:
    struct state {
        mutable std::mutex mutex;
        std::unordered_map<std::string, std::string> cache;
        std::size_t described = 0;
    };
    Vision vision_;
    std::shared_ptr<state> state_;
    std::string prompt_;
    std::size_t max_cached_;
};

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/agent/images-inl.hpp>
#endif
