// The response side of the completions APIs: bodies, server-sent events and errors.
#include <nlohmann/json.hpp>

#include "chapters/11_continuous_batching/completion_api.h"

namespace book::serve {

using nlohmann::json;

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

// A response or a chunk: `what` is the choice's text field ("text", or for chat "message" or
// "delta", an object), `object` its type.
json chunk_json(ApiKind kind, const std::string& object, const std::string& id,
                std::int64_t created, const ApiModel& model, const std::vector<int>& tokens,
                bool with_role, std::optional<ApiFinish> reason) {
  json choice = {{"index", 0}, {"finish_reason", nullptr}};
  if (kind == ApiKind::kCompletion) {
    choice["text"] = detokenize(tokens, model);
    choice["logprobs"] = nullptr;
  } else {
    json content = {{"content", detokenize(tokens, model)}};
    if (with_role) content["role"] = "assistant";
    choice[object == "chat.completion" ? "message" : "delta"] = content;
  }
  if (reason) choice["finish_reason"] = finish_reason_name(*reason);
  return {{"id", id},
          {"object", object},
          {"created", created},
          {"model", model.name},
          {"choices", json::array({choice})}};
}

}  // namespace

std::string response_body(ApiKind kind, const std::string& id, std::int64_t created,
                          const ApiModel& model, int prompt_tokens, const std::vector<int>& tokens,
                          ApiFinish reason) {
  json body = chunk_json(kind, kind == ApiKind::kChat ? "chat.completion" : "text_completion", id,
                         created, model, tokens, true, reason);
  const int completion_tokens = static_cast<int>(tokens.size());
  body["usage"] = {{"prompt_tokens", prompt_tokens},
                   {"completion_tokens", completion_tokens},
                   {"total_tokens", prompt_tokens + completion_tokens}};
  return body.dump();
}

std::string stream_event(ApiKind kind, const std::string& id, std::int64_t created,
                         const ApiModel& model, const std::vector<int>& tokens, bool first,
                         std::optional<ApiFinish> reason) {
  const std::string object = kind == ApiKind::kChat ? "chat.completion.chunk" : "text_completion";
  return "data: " + chunk_json(kind, object, id, created, model, tokens, first, reason).dump() +
         "\n\n";
}

std::string error_body(int status, const std::string& param, const std::string& message) {
  json error = {{"message", message},
                {"type", status < 500 ? "invalid_request_error" : "server_error"},
                {"param", nullptr},
                {"code", nullptr}};
  if (!param.empty()) error["param"] = param;
  // A message quotes what the client sent; should that not be UTF-8, U+FFFD beats a throw.
  return json{{"error", error}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace book::serve
