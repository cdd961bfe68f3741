// What the server tests share: a random-weight model with the addition alphabet (vocabulary 12,
// context 64), requests as the tests send them and as the offline engine runs them, the offline
// engine's answer, and a checked reading of a server-sent-event stream.
#pragma once

#include <httplib.h>

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chapters/10_paged_attention/served_model.h"
#include "chapters/11_continuous_batching/server.h"
#include "common/rng.h"

namespace book::serve::testing {

using nlohmann::json;
inline const std::string kAlphabet = "0123456789+=";

inline train::Config test_config() {
  train::Config c;
  c.vocab_size = 12;
  c.context = 64;
  c.n_layer = 2;
  c.n_head = 4;
  c.d_model = 32;
  return c;
}

inline std::unique_ptr<train::Model<float>> test_model() {
  return kv::random_model(test_config(), 11);
}

// One request, as the test sends it and as the offline engine runs it.
struct Case {
  std::string prompt;
  int max_tokens = 8;
  double temperature = 0, top_p = 1;
  int top_k = 0;
  std::uint64_t seed = 0;
  std::string stop;  // "" or one character
  json body(bool stream) const {
    json b = {{"model", "addition"},
              {"prompt", prompt},
              {"max_tokens", max_tokens},
              {"temperature", temperature},
              {"top_p", top_p},
              {"top_k", top_k},
              {"seed", seed},
              {"stream", stream}};
    if (!stop.empty()) b["stop"] = stop;
    return b;
  }
};

// The offline engine's answer: a fresh engine on its own roomy cache, this request alone.
struct Offline {
  std::string text;
  std::string finish;
};
inline Offline offline(train::Model<float>& model, const Case& c) {
  kv::PagedKvCache cache(kv::kv_shape_of(model.config()), 64, 4);
  kv::ModelRunner runner(model, cache, 128);
  kv::BlockManager blocks(64, 4, false);
  Engine engine(runner, blocks, {1, 128, true});
  GenerationRequest r;
  for (char ch : c.prompt) r.prompt.push_back(static_cast<int>(kAlphabet.find(ch)));
  r.max_tokens = c.max_tokens;
  r.sampling = {c.temperature, c.top_k, c.top_p, c.seed};
  if (!c.stop.empty()) r.stop_tokens = {static_cast<int>(kAlphabet.find(c.stop[0]))};
  engine.submit(r);
  const auto done = engine.run();
  std::string text;
  for (int t : done.at(0).tokens) text += kAlphabet[t];
  return {text, done[0].reason == FinishReason::kStop ? "stop" : "length"};
}

inline std::vector<Case> random_cases(std::uint64_t seed, int n) {
  Rng rng(seed);
  std::vector<Case> out(n);
  for (int i = 0; i < n; ++i) {
    const int length = static_cast<int>(rng.uniform_int(1, 30));
    for (int k = 0; k < length; ++k) out[i].prompt += kAlphabet[rng.uniform_int(0, 11)];
    out[i].max_tokens = static_cast<int>(rng.uniform_int(1, 24));
    if (i % 2 == 1) {  // seeded sampling on every other request
      out[i].temperature = 0.8 + 0.1 * (i % 5);
      out[i].top_k = static_cast<int>(rng.uniform_int(0, 8));
      out[i].top_p = 0.9;
      out[i].seed = 1000 + static_cast<std::uint64_t>(i);
    }
  }
  return out;
}

inline ServerOptions options() {
  ServerOptions o;
  o.num_blocks = 512;
  o.scheduler = {64, 256, true};
  return o;
}

inline httplib::Result post(httplib::Client& client, const std::string& body) {
  return client.Post("/v1/completions", body, "application/json");
}

// The text, finish reason and chunk count of a server-sent-event stream; fails the test if it is
// not "data: {chunk}" events followed by exactly one "data: [DONE]" at the end.
struct Stream {
  std::string text, finish;
  int chunks = 0;
};
inline Stream parse_stream(const std::string& body, ApiKind kind = ApiKind::kCompletion) {
  Stream s;
  std::size_t at = 0;
  bool done = false;
  while (at < body.size()) {
    const auto end = body.find("\n\n", at);
    EXPECT_NE(end, std::string::npos) << "an event without its blank line in: " << body;
    if (end == std::string::npos) break;
    const std::string event = body.substr(at, end - at);
    at = end + 2;
    EXPECT_FALSE(done) << "an event after [DONE]: " << event;
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    if (event == "data: [DONE]") {
      done = true;
      continue;
    }
    const json chunk = json::parse(event.substr(6));
    EXPECT_TRUE(s.finish.empty()) << "a chunk after the one with finish_reason: " << event;
    if (kind == ApiKind::kChat) {
      EXPECT_EQ(chunk["object"], "chat.completion.chunk");
      const json& delta = chunk["choices"][0]["delta"];
      EXPECT_EQ(delta.contains("role"), s.chunks == 0) << "the role comes in the first chunk only";
      s.text += delta["content"].get<std::string>();
    } else {
      EXPECT_EQ(chunk["object"], "text_completion");
      s.text += chunk["choices"][0]["text"].get<std::string>();
    }
    if (!chunk["choices"][0]["finish_reason"].is_null())
      s.finish = chunk["choices"][0]["finish_reason"];
    ++s.chunks;
  }
  EXPECT_TRUE(done) << "no data: [DONE] at the end of: " << body;
  return s;
}

// Checks one request over `client` (plain or streamed) against the offline engine.
inline void expect_served(httplib::Client& client, const Case& c, const Offline& want,
                          bool stream) {
  const auto res = post(client, c.body(stream).dump());
  ASSERT_TRUE(res) << "no response for prompt " << c.prompt << ": "
                   << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body;
  if (stream) {
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
    const Stream s = parse_stream(res->body);
    EXPECT_EQ(s.text, want.text) << "streamed, prompt " << c.prompt << " seed " << c.seed;
    EXPECT_EQ(s.finish, want.finish) << c.prompt;
    EXPECT_EQ(s.chunks, static_cast<int>(want.text.size())) << "one chunk per token";
    return;
  }
  const json body = json::parse(res->body);
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["model"], "addition");
  EXPECT_EQ(body["choices"][0]["text"], want.text)
      << "prompt " << c.prompt << " seed " << c.seed << " temperature " << c.temperature;
  EXPECT_EQ(body["choices"][0]["finish_reason"], want.finish);
  EXPECT_EQ(body["usage"]["prompt_tokens"], c.prompt.size());
  EXPECT_EQ(body["usage"]["completion_tokens"], want.text.size());
  EXPECT_EQ(body["usage"]["total_tokens"], c.prompt.size() + want.text.size());
}

}  // namespace book::serve::testing
