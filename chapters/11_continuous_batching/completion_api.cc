#include "chapters/11_continuous_batching/completion_api.h"

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
std::string shown(const json& value) {
  std::string text = value.dump();
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
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

}  // namespace

//! [parse_request]
CompletionRequest parse_completion_request(std::string_view body_text, const ApiModel& model) {
  const json body = json::parse(body_text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded())
    refuse("", "the body is not valid JSON; send an object such as {\"prompt\": \"12+34=\"}");
  if (!body.is_object()) refuse("", "the body must be a JSON object, got " + shown(body));
  static const std::set<std::string> known = {"model",  "prompt", "max_tokens", "temperature",
                                              "top_p",  "top_k",  "seed",       "stop",
                                              "stream", "n",      "user"};
  for (const auto& [key, value] : body.items())
    if (!known.count(key))
      refuse(key, "unknown field '" + key +
                      "' (this server reads: model, prompt, max_tokens, temperature, top_p, "
                      "top_k, seed, stop, stream, n, user)");
  if (body.contains("model")) {
    if (!body["model"].is_string())
      refuse("model", "'model' must be a string, got " + shown(body["model"]));
    if (body["model"] != model.name)
      throw ApiError(
          404, "model",
          "model " + shown(body["model"]) + " is not served here; use \"" + model.name + "\"");
  }
  if (!body.contains("prompt")) refuse("prompt", "'prompt' is missing: send the text to continue");
  if (!body["prompt"].is_string())
    refuse("prompt",
           "'prompt' must be a string (one prompt per request), got " + shown(body["prompt"]));
  const std::string prompt = body["prompt"];
  if (prompt.empty()) refuse("prompt", "'prompt' is empty: send at least one character");
  CompletionRequest request;
  GenerationRequest& g = request.generation;
  for (std::size_t i = 0; i < prompt.size(); ++i)
    g.prompt.push_back(token_of(prompt[i], model, "prompt", i));
  const int prompt_tokens = static_cast<int>(g.prompt.size());
  const int room = model.context - prompt_tokens + 1;  // the most new tokens that fit
  if (room < 1)
    refuse("prompt", "the prompt has " + std::to_string(prompt_tokens) +
                         " tokens; the model reads " + std::to_string(model.context) +
                         " positions: send a shorter prompt");
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

std::string detokenize(const std::vector<int>& tokens, const ApiModel& model) {
  std::string text;
  for (const int t : tokens)
    text += t >= 0 && t < static_cast<int>(model.alphabet.size()) ? model.alphabet[t] : '?';
  return text;
}

const char* finish_reason_name(ApiFinish reason) {
  switch (reason) {
    case ApiFinish::kLength:
      return "length";
    case ApiFinish::kStop:
      return "stop";
    case ApiFinish::kCancelled:
      return "cancelled";
  }
  return "?";
}

namespace {

json chunk_json(const std::string& id, std::int64_t created, const ApiModel& model,
                const std::vector<int>& tokens, std::optional<ApiFinish> reason) {
  json choice = {{"text", detokenize(tokens, model)},
                 {"index", 0},
                 {"logprobs", nullptr},
                 {"finish_reason", nullptr}};
  if (reason) choice["finish_reason"] = finish_reason_name(*reason);
  return {{"id", id},
          {"object", "text_completion"},
          {"created", created},
          {"model", model.name},
          {"choices", json::array({choice})}};
}

}  // namespace

std::string completion_body(const std::string& id, std::int64_t created, const ApiModel& model,
                            int prompt_tokens, const std::vector<int>& tokens, ApiFinish reason) {
  json body = chunk_json(id, created, model, tokens, reason);
  const int completion_tokens = static_cast<int>(tokens.size());
  body["usage"] = {{"prompt_tokens", prompt_tokens},
                   {"completion_tokens", completion_tokens},
                   {"total_tokens", prompt_tokens + completion_tokens}};
  return body.dump();
}

std::string stream_event(const std::string& id, std::int64_t created, const ApiModel& model,
                         const std::vector<int>& tokens, std::optional<ApiFinish> reason) {
  return "data: " + chunk_json(id, created, model, tokens, reason).dump() + "\n\n";
}

std::string error_body(int status, const std::string& param, const std::string& message) {
  json error = {{"message", message},
                {"type", status < 500 ? "invalid_request_error" : "server_error"},
                {"param", nullptr},
                {"code", nullptr}};
  if (!param.empty()) error["param"] = param;
  return json{{"error", error}}.dump();
}

}  // namespace book::serve
