// examples/clients.cpp -- the model clients built from the configuration by hand (what ania::bot does), and an
// agent over them. The snippet of docs/clients.md is a region of this file. Constructs, sends nothing:
// `clients` exits 0 when the clients were built from the configuration as it says.
#include <cstdio>
#include <string>
#include <utility>

#include <ania/ania.hpp>
#include <ania/config/clients.hpp>  // from_config for the clients; <ania/openai/client.hpp> comes with it

int main() {
    const ania::json j = ania::json::parse(R"({"llm": {"base_url": "https://api.deepseek.com", "model": "deepseek-chat"},
                                               "compressor": {"model": "deepseek-chat-lite"}})");
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    ania::agent_options opt;
    // [clients]
    ania::config cfg = ania::load_config(j);   // "llm": {"base_url", "api_key", "model", "stream", timeouts, "extra"}
    ania::openai::client llm(ania::from_config<ania::openai::client_options>(cfg));
    ania::openai::client cheap(ania::from_config<ania::openai::client_options>(cfg, ania::model_role::compression));
    struct bot_traits : ania::default_agent_traits { using client = ania::openai::client; };
    ania::basic_agent<bot_traits> agent(writer, {.client = llm, .compression_client = cheap}, "g:100001", std::move(opt));
    // [clients]
    std::printf("main %s, compression %s\n", llm.options().model.c_str(), cheap.options().model.c_str());
    return llm.options().model == "deepseek-chat" && cheap.options().model == "deepseek-chat-lite" &&
                   cheap.options().base_url == llm.options().base_url
               ? 0
               : 1;
}
