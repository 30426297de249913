// bench/instant_client.hpp -- the benchmarks' model: a SCRIPTED client that answers at once, reading only the
// newest message (a real client serialises the request: see request_to_json in bench/message.cpp).
#pragma once

#include <ania/chat_request.hpp>
#include <ania/completion.hpp>
#include <ania/message.hpp>

namespace ania_bench {

struct instant_client {
    ania::completion complete(const ania::chat_request& req) {
        const bool asked = req.messages.back().role == ania::role::user;
        return ania::completion::success(ania::message::assistant(asked ? "好的，收到。" : "嗯。"), {1200, 8, 1208, {}});
    }
};

} // namespace ania_bench
