/// @file
/// The OpenAI-compatible `/v1/completions` and `/v1/chat/completions` APIs, without the HTTP: a
/// request body (JSON) checked and turned into an engine request (completion_api.cc), and the
/// engine's tokens turned into the response body, the server-sent-event chunks and the error body
/// (completion_bodies.cc). The server (server.h) only moves these strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chapters/11_continuous_batching/engine.h"
#include "common/check.h"

namespace book::serve {

/// A request the API refuses: the HTTP status (400 bad request, 404 unknown model, 503 shutting
/// down), the offending parameter ("" when none) and a message that says what to send instead.
class ApiError : public Error {
 public:
  /// See the class comment.
  ApiError(int status, std::string param, const std::string& message)
      : Error(message), status_(status), param_(std::move(param)) {}
  int status() const { return status_; }               ///< the HTTP status
  const std::string& param() const { return param_; }  ///< the offending field, or ""

 private:
  int status_;
  std::string param_;
};

/// The served model as the API sees it: its name and a character tokenizer (token i is the
/// character alphabet[i]; chapter 4's addition model reads "0123456789+=").
struct ApiModel {
  std::string name;      ///< what "model" must say, if given
  std::string alphabet;  ///< one character per token id; its size is the vocabulary
  int context = 0;       ///< positions the model reads: prompt + max_tokens − 1 at most
};

/// Which API a body is for.
enum class ApiKind {
  kCompletion,  ///< `/v1/completions`: a prompt
  kChat,        ///< `/v1/chat/completions`: messages, turned into a prompt by chat_prompt()
};

/// A checked request: the engine's request plus what only the API needs.
struct CompletionRequest {
  GenerationRequest generation;  ///< tokens, max_tokens, sampling, stop tokens
  bool stream = false;           ///< answer by server-sent events
};

/// Parses and checks a `/v1/completions` body. Fields: prompt (required: a string, every
/// character in the alphabet, or an array of token ids, each in [0, vocabulary); not empty),
/// model (string; must be the served one), max_tokens (integer >= 1; default: all that fit the
/// context), temperature (>= 0; default 0, greedy — OpenAI's default is 1; the book grades
/// answers), top_p (0, 1], top_k (>= 0, vLLM's extension), seed (integer >= 0), stop (a string or
/// up to 4 strings, each one character of the alphabet: the engine stops on tokens), stream
/// (bool), n (1 only), user (ignored). Throws ApiError (400; 404 for another model) naming the
/// field and the value: bad JSON, arrays and objects nested more than 64 levels deep, not an
/// object, a missing prompt, a wrong type, a value out of
/// range, an unknown field, or a prompt with max_tokens past the context.
CompletionRequest parse_completion_request(std::string_view body, const ApiModel& model);

/// Parses and checks a `/v1/chat/completions` body: the same fields with `messages` (required)
/// in place of `prompt`: a non-empty array of {"role", "content"} objects, role "system" (first
/// only), "user" or "assistant", content a string of the alphabet, the last one the user's (not
/// empty). The prompt is chat_prompt(messages). Throws ApiError as parse_completion_request does,
/// naming the message ("messages[2].role").
CompletionRequest parse_chat_request(std::string_view body, const ApiModel& model);

/// parse_completion_request or parse_chat_request.
CompletionRequest parse_request(std::string_view body, const ApiModel& model, ApiKind kind);

/// The chat template, stated: the messages' contents concatenated in order (the assistant's
/// reply continues the last one). The served model's 12-character vocabulary has no tokens for
/// role markers; with a real tokenizer each message would be wrapped in them (e.g.
/// `<|user|>12+34=<|end|><|assistant|>`), which is what a model trained for chat expects.
std::string chat_prompt(const std::vector<std::pair<std::string, std::string>>& messages);

/// Tokens to text with the model's alphabet ('?' for an id outside it).
std::string detokenize(const std::vector<int>& tokens, const ApiModel& model);

/// Why a served request ended, as the API reports it.
enum class ApiFinish { kLength, kStop, kCancelled };
/// "length", "stop" or "cancelled" (the last is not OpenAI's: the server shut down first).
const char* finish_reason_name(ApiFinish reason);

/// The non-streamed response: {"id", "object": "text_completion", "created", "model",
/// "choices": [{"text", "index": 0, "logprobs": null, "finish_reason"}], "usage":
/// {"prompt_tokens", "completion_tokens", "total_tokens"}}; for kChat "object" is
/// "chat.completion" and the choice {"index": 0, "message": {"role": "assistant", "content"},
/// "finish_reason"}.
std::string response_body(ApiKind kind, const std::string& id, std::int64_t created,
                          const ApiModel& model, int prompt_tokens, const std::vector<int>& tokens,
                          ApiFinish reason);

/// One server-sent event: "data: " + a chunk of the same shape carrying `tokens`' text and
/// finish_reason (null until the last) + a blank line. For kChat the chunk's object is
/// "chat.completion.chunk" and its choice carries {"delta": {"content"}} (with "role":
/// "assistant" in the `first` chunk) instead of text.
std::string stream_event(ApiKind kind, const std::string& id, std::int64_t created,
                         const ApiModel& model, const std::vector<int>& tokens, bool first,
                         std::optional<ApiFinish> reason);

/// The event that ends a stream: "data: [DONE]" and a blank line.
inline constexpr std::string_view kStreamDone = "data: [DONE]\n\n";

/// An error body: {"error": {"message", "type", "param", "code"}}; type "invalid_request_error"
/// for 4xx, "server_error" otherwise.
std::string error_body(int status, const std::string& param, const std::string& message);

}  // namespace book::serve
