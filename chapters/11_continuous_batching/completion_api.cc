#include "chapters/11_continuous_batching/completion_api.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace book::serve {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& param, const std::string& message) {
  throw ApiError(400, param, message);
}

// A short, printable rendering of a JSON value for messages ("abc" → "\"abc\"", cut at 40).
// Arrays and objects are named, not printed: dump() recurses once per level of nesting. Bytes
// that are not UTF-8 (one byte of "é", as token_of() shows it) print as U+FFFD instead of
// throwing, and the cut never splits a character, so the message stays valid UTF-8 for
// error_body().
std::string shown(const json& value) {
  if (value.is_array())
    return "an array of " + std::to_string(value.size()) +
           (value.size() == 1 ? " value" : " values");
  if (value.is_object()) return "an object";
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() <= 40) return text;
  std::size_t cut = 37;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // 10xxxxxx
  return text.substr(0, cut) + "...";
}

// The deepest nesting of arrays and objects a body may have. nlohmann parses and frees any depth
// without recursion, but copying or printing a value recurses once per level: 200,000 levels
// (400 KB, under the size limit) overflowed a worker's stack and ended the whole server.
constexpr int kMaxDepth = 64;

json parse_json(std::string_view text) {
  const json::parser_callback_t refuse_deep = [](int depth, json::parse_event_t event, json&) {
    const bool opens =
        event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= kMaxDepth)  // depth counts the levels around the one that opens
      refuse("", "the body nests arrays and objects more than " + std::to_string(kMaxDepth) +
                     " levels deep; send a flatter body such as {\"prompt\": \"12+34=\"}");
    return true;
  };
  return json::parse(text, refuse_deep, /*allow_exceptions=*/false);
}

std::int64_t integer_field(const json& body, const std::string& name, std::int64_t low,
                           std::int64_t high) {
  const json& v = body.at(name);
  if (!v.is_number_integer()) refuse(name, "'" + name + "' must be an integer, got " + shown(v));
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(high))
    refuse(name, "'" + name + "' must be at most " + std::to_string(high) + ", got " + shown(v));
  const auto x = v.get<std::int64_t>();
  if (x < low || x > high)
    refuse(name, "'" + name + "' must be in [" + std::to_string(low) + ", " + std::to_string(high) +
                     "], got " + shown(v));
  return x;
}

double number_field(const json& body, const std::string& name) {
  const json& v = body.at(name);
  if (!v.is_number()) refuse(name, "'" + name + "' must be a number, got " + shown(v));
  return v.get<double>();
}

int token_of(char c, const ApiModel& model, const std::string& param, std::size_t offset) {
  const auto at = model.alphabet.find(c);
  if (at == std::string::npos) {
    std::ostringstream out;
    out << "'" << param << "': character " << shown(json(std::string(1, c))) << " at offset "
        << offset << " is not in the model's vocabulary \"" << model.alphabet << "\"";
    refuse(param, out.str());
  }
  return static_cast<int>(at);
}

// The prompt of a completions body: a string of the alphabet or an array of token ids.
std::vector<int> prompt_tokens_of(const json& prompt, const ApiModel& model) {
  std::vector<int> tokens;
  if (prompt.is_string()) {
    const std::string text = prompt;
    for (std::size_t i = 0; i < text.size(); ++i)
      tokens.push_back(token_of(text[i], model, "prompt", i));
  } else if (prompt.is_array() && std::all_of(prompt.begin(), prompt.end(), [](const json& t) {
               return t.is_number_integer();
             })) {
    const auto vocab = static_cast<std::int64_t>(model.alphabet.size());
    for (std::size_t i = 0; i < prompt.size(); ++i) {
      const bool negative = !prompt[i].is_number_unsigned() && prompt[i].get<std::int64_t>() < 0;
      if (negative || prompt[i].get<std::uint64_t>() >= static_cast<std::uint64_t>(vocab))
        refuse("prompt", "'prompt': token id " + shown(prompt[i]) + " at index " +
                             std::to_string(i) + " is outside the vocabulary [0, " +
                             std::to_string(vocab) + ")");
      tokens.push_back(prompt[i].get<int>());
    }
  } else {
    refuse("prompt",
           "'prompt' must be a string or an array of token ids (integers), one prompt per "
           "request, got " +
               shown(prompt));
  }
  if (tokens.empty())
    refuse("prompt", "'prompt' is empty: send at least one character or token id");
  return tokens;
}

// The prompt of a chat body: its messages checked and put through the chat template.
std::vector<int> chat_tokens_of(const json& messages, const ApiModel& model) {
  if (!messages.is_array() || messages.empty())
    refuse("messages",
           "'messages' must be a non-empty array of {\"role\", \"content\"} objects, "
           "got " +
               shown(messages));
  std::vector<std::pair<std::string, std::string>> turns;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) refuse(at, "'" + at + "' must be an object, got " + shown(m));
    for (const auto& [key, value] : m.items())
      if (key != "role" && key != "content")
        refuse(at + "." + key,
               "unknown field '" + key + "' in '" + at + "' (a message has role and content)");
    if (!m.contains("role") || !m["role"].is_string())
      refuse(at + ".role", "'" + at + ".role' must be \"system\", \"user\" or \"assistant\", got " +
                               (m.contains("role") ? shown(m["role"]) : std::string("nothing")));
    const std::string role = m["role"];
    if (role != "system" && role != "user" && role != "assistant")
      refuse(at + ".role", "'" + at + ".role' must be \"system\", \"user\" or \"assistant\", got " +
                               shown(m["role"]));
    if (role == "system" && i != 0)
      refuse(at + ".role", "'" + at + "' is a system message: only the first message may be one");
    if (!m.contains("content") || !m["content"].is_string())
      refuse(at + ".content",
             "'" + at + ".content' must be a string, got " +
                 (m.contains("content") ? shown(m["content"]) : std::string("nothing")));
    const std::string content = m["content"];
    for (std::size_t k = 0; k < content.size(); ++k)
      token_of(content[k], model, at + ".content", k);
    turns.emplace_back(role, content);
  }
  if (turns.back().first != "user" || turns.back().second.empty())
    refuse("messages",
           "the last message must be the user's, with content: the reply continues "
           "it (got role " +
               shown(turns.back().first) + ")");
  std::vector<int> tokens;
  const std::string prompt = chat_prompt(turns);
  for (std::size_t i = 0; i < prompt.size(); ++i)
    tokens.push_back(token_of(prompt[i], model, "messages", i));
  return tokens;
}

}  // namespace

std::string chat_prompt(const std::vector<std::pair<std::string, std::string>>& messages) {
  std::string prompt;
  for (const auto& [role, content] : messages) prompt += content;
  return prompt;
}

namespace {

//! [parse_request]
CompletionRequest parse_body(std::string_view body_text, const ApiModel& model, ApiKind kind) {
  const json body = parse_json(body_text);
  if (body.is_discarded())
    refuse("", "the body is not valid JSON; send an object such as {\"prompt\": \"12+34=\"}");
  if (!body.is_object()) refuse("", "the body must be a JSON object, got " + shown(body));
  const std::string input = kind == ApiKind::kChat ? "messages" : "prompt";
  const std::set<std::string> known = {"model",  input,   "max_tokens", "temperature",
                                       "top_p",  "top_k", "seed",       "stop",
                                       "stream", "n",     "user"};
  for (const auto& [key, value] : body.items())
    if (!known.count(key))
      refuse(key, "unknown field '" + key + "' (this endpoint reads: model, " + input +
                      ", max_tokens, temperature, top_p, top_k, seed, stop, stream, n, user)");
  if (body.contains("model")) {
    if (!body["model"].is_string())
      refuse("model", "'model' must be a string, got " + shown(body["model"]));
    if (body["model"] != model.name)
      throw ApiError(
          404, "model",
          "model " + shown(body["model"]) + " is not served here; use \"" + model.name + "\"");
  }
  if (!body.contains(input))
    refuse(input,
           kind == ApiKind::kChat
               ? "'messages' is missing: send [{\"role\": \"user\", \"content\": \"12+34=\"}]"
               : "'prompt' is missing: send the text to continue");
  CompletionRequest request;
  GenerationRequest& g = request.generation;
  g.prompt = kind == ApiKind::kChat ? chat_tokens_of(body[input], model)
                                    : prompt_tokens_of(body[input], model);
  const int prompt_tokens = static_cast<int>(g.prompt.size());
  const int room = model.context - prompt_tokens + 1;  // the most new tokens that fit
  if (room < 1)
    refuse(input, "the prompt has " + std::to_string(prompt_tokens) + " tokens; the model reads " +
                      std::to_string(model.context) + " positions: send a shorter prompt");
  g.max_tokens = room;
  if (body.contains("max_tokens")) {
    g.max_tokens = static_cast<int>(integer_field(body, "max_tokens", 1, 1 << 30));
    if (g.max_tokens > room)
      refuse("max_tokens", "prompt (" + std::to_string(prompt_tokens) + " tokens) + max_tokens (" +
                               std::to_string(g.max_tokens) + ") − 1 exceeds the model's context" +
                               " of " + std::to_string(model.context) + ": ask for at most " +
                               std::to_string(room) + " tokens");
  }
  if (body.contains("temperature")) {
    g.sampling.temperature = number_field(body, "temperature");
    if (!(g.sampling.temperature >= 0 && g.sampling.temperature <= 100))
      refuse("temperature", "'temperature' must be in [0, 100], got " + shown(body["temperature"]));
  }
  if (body.contains("top_p")) {
    g.sampling.top_p = number_field(body, "top_p");
    if (!(g.sampling.top_p > 0 && g.sampling.top_p <= 1))
      refuse("top_p", "'top_p' must be in (0, 1], got " + shown(body["top_p"]));
  }
  if (body.contains("top_k"))
    g.sampling.top_k = static_cast<int>(integer_field(body, "top_k", 0, 1 << 30));
  if (body.contains("seed")) {
    const json& v = body["seed"];
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
      refuse("seed", "'seed' must be an integer >= 0, got " + shown(v));
    g.sampling.seed = v.get<std::uint64_t>();
  }
  if (body.contains("stop")) {
    json stops = body["stop"];
    if (stops.is_string()) stops = json::array({stops});
    if (!stops.is_array() || stops.size() > 4)
      refuse("stop",
             "'stop' must be a string or an array of up to 4 strings, got " + shown(body["stop"]));
    for (const json& s : stops) {
      if (!s.is_string() || s.get<std::string>().size() != 1)
        refuse("stop", "each stop sequence must be one character of \"" + model.alphabet +
                           "\" (the engine stops on single tokens), got " + shown(s));
      g.stop_tokens.push_back(token_of(s.get<std::string>()[0], model, "stop", 0));
    }
  }
  if (body.contains("stream")) {
    if (!body["stream"].is_boolean())
      refuse("stream", "'stream' must be true or false, got " + shown(body["stream"]));
    request.stream = body["stream"];
  }
  if (body.contains("n") && body["n"] != 1)
    refuse("n", "'n' must be 1 (one completion per request), got " + shown(body["n"]));
  if (body.contains("user") && !body["user"].is_string())
    refuse("user", "'user' must be a string, got " + shown(body["user"]));
  return request;
}
//! [parse_request]

}  // namespace

CompletionRequest parse_completion_request(std::string_view body, const ApiModel& model) {
  return parse_body(body, model, ApiKind::kCompletion);
}

CompletionRequest parse_chat_request(std::string_view body, const ApiModel& model) {
  return parse_body(body, model, ApiKind::kChat);
}

CompletionRequest parse_request(std::string_view body, const ApiModel& model, ApiKind kind) {
  return parse_body(body, model, kind);
}

}  // namespace book::serve
