// The server's newer surface over loopback, on the same random-weight model as server_test:
// a client that goes away cancels its request (streamed: it read a few events and closed; plain:
// it closed while waiting) and the engine frees its KV blocks and keeps serving; a prompt sent as
// token ids equals the same prompt sent as text; the chat endpoint equals the completions
// endpoint on the templated prompt, plain and streamed; malformed chat and token-array bodies get
// a 400 naming what to fix.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "common/testing/expect_error.h"
#include "tests/11_continuous_batching/server_testing.h"

namespace book::serve {
namespace {

using namespace book::serve::testing;
using nlohmann::json;

// A bare HTTP client on one socket, so that the test decides when the connection closes.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{10, 0};  // a read never hangs the test
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawClient() { close(); }
  bool connected() const { return connected_; }
  void post(const std::string& path, const std::string& body) {
    const std::string request = "POST " + path +
                                " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                "Content-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body;
    ASSERT_EQ(::send(fd_, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
  }
  // Reads until `text` occurs `count` times in what came; false if the read timed out first.
  bool read_until(const std::string& text, int count) {
    for (;;) {
      int found = 0;
      for (auto at = received_.find(text); at != std::string::npos;
           at = received_.find(text, at + 1))
        ++found;
      if (found >= count) return true;
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return false;
      received_.append(buffer, static_cast<std::size_t>(n));
    }
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  const std::string& received() const { return received_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string received_;
};

// Polls `done` every 5 ms for at most 10 s (a loaded machine); true once it holds.
template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 2000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

TEST(Disconnect, AClosedStreamIsCancelledItsBlocksFreedAndOthersStillServed) {
  std::signal(SIGPIPE, SIG_IGN);  // a write to the closed socket must not end the test
  auto model = test_model();
  CompletionServer server(*model, options());
  server.engine().hold(true);
  RawClient client(server.port());
  ASSERT_TRUE(client.connected());
  Case c;
  c.prompt = "12+34=";
  c.max_tokens = 40;
  client.post("/v1/completions", c.body(/*stream=*/true).dump());
  ASSERT_TRUE(eventually([&] { return server.engine().accepted() == 1; }));
  server.engine().allow(3);  // a prefill that samples the first token, then two decodes
  ASSERT_TRUE(client.read_until("data: {", 3)) << "got: " << client.received();
  ASSERT_TRUE(eventually([&] { return server.engine().steps() == 3; }));
  EXPECT_GT(server.engine().used_blocks(), 0) << "the request holds its prompt's blocks";
  client.close();
  EXPECT_TRUE(eventually([&] { return server.engine().cancelled() == 1; }))
      << "the stream's client went away but the request was not cancelled";
  EXPECT_EQ(server.engine().used_blocks(), 0) << "its KV blocks are back in the pool";
  EXPECT_EQ(server.engine().completed(), 0);
  server.engine().hold(false);
  httplib::Client other("127.0.0.1", server.port());
  const Case next = random_cases(21, 1)[0];
  expect_served(other, next, offline(*model, next), false);
  expect_served(other, next, offline(*model, next), true);
  EXPECT_EQ(server.engine().completed(), 2);
  EXPECT_EQ(server.engine().used_blocks(), 0);
}

TEST(Disconnect, AClosedPlainRequestIsCancelledAndItsBlocksFreed) {
  std::signal(SIGPIPE, SIG_IGN);
  auto model = test_model();
  CompletionServer server(*model, options());
  server.engine().hold(true);
  RawClient client(server.port());
  ASSERT_TRUE(client.connected());
  Case c;
  c.prompt = "99+1=";
  c.max_tokens = 40;
  client.post("/v1/completions", c.body(/*stream=*/false).dump());
  ASSERT_TRUE(eventually([&] { return server.engine().accepted() == 1; }));
  server.engine().allow(2);
  ASSERT_TRUE(eventually([&] { return server.engine().steps() == 2; }));
  EXPECT_GT(server.engine().used_blocks(), 0);
  client.close();
  EXPECT_TRUE(eventually([&] { return server.engine().cancelled() == 1; }))
      << "the waiting client went away but the request was not cancelled";
  EXPECT_EQ(server.engine().used_blocks(), 0);
  server.engine().hold(false);
  httplib::Client other("127.0.0.1", server.port());
  expect_served(other, c, offline(*model, c), false);
  EXPECT_EQ(server.engine().cancelled(), 1) << "a client that stays is not cancelled";
}

// The body of `c` with its prompt as token ids.
json with_token_ids(const Case& c, bool stream) {
  json body = c.body(stream);
  json ids = json::array();
  for (const char ch : c.prompt) ids.push_back(static_cast<int>(kAlphabet.find(ch)));
  body["prompt"] = ids;
  return body;
}

TEST(Api, ATokenArrayPromptEqualsTheStringPrompt) {
  auto model = test_model();
  CompletionServer server(*model, options());
  httplib::Client client("127.0.0.1", server.port());
  for (const Case& c : random_cases(22, 6)) {
    const auto text = post(client, c.body(false).dump());
    const auto ids = post(client, with_token_ids(c, false).dump());
    ASSERT_TRUE(text && ids);
    ASSERT_EQ(ids->status, 200) << ids->body;
    const json a = json::parse(text->body), b = json::parse(ids->body);
    EXPECT_EQ(b["choices"][0]["text"], a["choices"][0]["text"]) << "prompt " << c.prompt;
    EXPECT_EQ(b["choices"][0]["text"], offline(*model, c).text);
    EXPECT_EQ(b["usage"], a["usage"]);
  }
}

// The chat body of `c`: its prompt split into a system message, an earlier exchange and the
// user's last message, which the template concatenates back into c.prompt.
json chat_body(const Case& c, bool stream) {
  json body = c.body(stream);
  body.erase("prompt");
  const std::string& p = c.prompt;
  const std::size_t a = p.size() / 3, b = 2 * p.size() / 3;
  body["messages"] = json::array({{{"role", "system"}, {"content", p.substr(0, a)}},
                                  {{"role", "user"}, {"content", p.substr(a, b - a)}},
                                  {{"role", "assistant"}, {"content", ""}},
                                  {{"role", "user"}, {"content", p.substr(b)}}});
  return body;
}

TEST(Api, ChatEqualsCompletionsOnTheTemplatedPromptPlainAndStreamed) {
  EXPECT_EQ(chat_prompt({{"system", "1"}, {"user", "2+"}, {"assistant", "3"}, {"user", "4="}}),
            "12+34=")
      << "the stated template: contents concatenated in order";
  auto model = test_model();
  CompletionServer server(*model, options());
  httplib::Client client("127.0.0.1", server.port());
  for (const Case& c : random_cases(23, 6)) {
    const Offline want = offline(*model, c);
    const auto plain =
        client.Post("/v1/chat/completions", chat_body(c, false).dump(), "application/json");
    ASSERT_TRUE(plain);
    ASSERT_EQ(plain->status, 200) << plain->body;
    const json body = json::parse(plain->body);
    EXPECT_EQ(body["object"], "chat.completion");
    EXPECT_EQ(body["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
    EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
    EXPECT_EQ(body["choices"][0]["message"]["content"], want.text) << "prompt " << c.prompt;
    EXPECT_EQ(body["choices"][0]["finish_reason"], want.finish);
    EXPECT_EQ(body["usage"]["prompt_tokens"], c.prompt.size());
    const auto streamed =
        client.Post("/v1/chat/completions", chat_body(c, true).dump(), "application/json");
    ASSERT_TRUE(streamed);
    ASSERT_EQ(streamed->status, 200) << streamed->body;
    const Stream s = parse_stream(streamed->body, ApiKind::kChat);
    EXPECT_EQ(s.text, want.text) << "streamed chat, prompt " << c.prompt;
    EXPECT_EQ(s.finish, want.finish);
    EXPECT_EQ(s.chunks, static_cast<int>(want.text.size()));
  }
}

TEST(Api, MalformedChatAndTokenArrayBodiesGetA400WithAMessage) {
  auto model = test_model();
  CompletionServer server(*model, options());
  httplib::Client client("127.0.0.1", server.port());
  struct Bad {
    std::string path, body, message;
  };
  const std::string chat = "/v1/chat/completions", completions = "/v1/completions";
  const std::vector<Bad> bad = {
      {completions, R"({"prompt": []})", "'prompt' is empty"},
      {completions, R"({"prompt": [1, 12]})",
       "token id 12 at index 1 is outside the vocabulary [0, 12)"},
      {completions, R"({"prompt": [1, -1]})", "token id -1 at index 1"},
      {completions, R"({"prompt": [1, 2.5]})", "an array of token ids (integers)"},
      {completions, R"({"prompt": {"a": 1}})", "must be a string or an array of token ids"},
      {chat, R"({"prompt": "1+1="})", "unknown field 'prompt'"},
      {chat, R"({"max_tokens": 2})", "'messages' is missing"},
      {chat, R"({"messages": []})", "'messages' must be a non-empty array"},
      {chat, R"({"messages": "1+1="})", "'messages' must be a non-empty array"},
      {chat, R"({"messages": [3]})", "'messages[0]' must be an object"},
      {chat, R"({"messages": [{"content": "1+1="}]})", "'messages[0].role' must be"},
      {chat, R"({"messages": [{"role": "robot", "content": "1"}]})", "got \"robot\""},
      {chat, R"({"messages": [{"role": "user"}]})", "'messages[0].content' must be a string"},
      {chat, R"({"messages": [{"role": "user", "content": 7}]})", "'messages[0].content' must be"},
      {chat, R"({"messages": [{"role": "user", "content": "1", "name": "x"}]})",
       "unknown field 'name' in 'messages[0]'"},
      {chat,
       R"({"messages": [{"role": "user", "content": "1"}, {"role": "system", "content": "2"}]})",
       "only the first message may be one"},
      {chat,
       R"({"messages": [{"role": "user", "content": "1+"}, {"role": "assistant", "content": "2"}]})",
       "the last message must be the user's"},
      {chat, R"({"messages": [{"role": "user", "content": ""}]})", "the last message must be"},
      {chat, R"({"messages": [{"role": "user", "content": "1+a="}]})",
       "'messages[0].content': character \"a\" at offset 2 is not in the model's vocabulary"},
      // Review of issue 19: these got a 500, their single bytes of "é" not being UTF-8.
      {chat, "{\"messages\": [{\"role\": \"user\", \"content\": \"1\xC3\xA9\"}]}",
       "'messages[0].content': character \"\xEF\xBF\xBD\" at offset 1"},
      {completions,
       "{\"prompt\": \"1\", \"stop\": \"" + std::string(35, '1') +
           "\xC3\xA9"
           "111\"}",
       "got \"" + std::string(35, '1') + "..."},
      {completions, R"({"prompt": "1", "stop": [[[[[[[[1]]]]]]]]})",
       "each stop sequence must be one character of \"0123456789+=\" (the engine stops on single "
       "tokens), got an array of 1 value"},
  };
  for (const Bad& b : bad) {
    const auto res = client.Post(b.path, b.body, "application/json");
    ASSERT_TRUE(res) << "no response to " << b.body;
    EXPECT_EQ(res->status, 400) << b.path << " " << b.body << " -> " << res->body;
    const json error = json::parse(res->body, nullptr, false);
    ASSERT_TRUE(error.contains("error")) << b.body << " -> " << res->body;
    EXPECT_NE(error["error"]["message"].get<std::string>().find(b.message), std::string::npos)
        << b.path << " " << b.body << "\nexpected the message to contain: " << b.message
        << "\nactual: " << error["error"]["message"];
  }
  EXPECT_EQ(server.engine().accepted(), 0) << "none of them reached the engine";
}

// Review of issue 19, without a server: the refusals are book::Errors, and their messages
// survive error_body().
TEST(Api, DeepNestingAndBytesThatAreNotUtf8AreRefusedAsApiErrors) {
  const ApiModel model{"addition", "0123456789+=", 64};
  using book::testing::expect_error;
  expect_error([&] { parse_completion_request("{\"prompt\": \"1+\xC3\xA9\"}", model); },
               "'prompt': character \"\xEF\xBF\xBD\" at offset 2 is not in the model's vocabulary");
  // The body's object is level 1; 63 arrays inside it are accepted (and refused as a prompt),
  // 64 are one level too many.
  auto nested = [](int levels) {
    return "{\"prompt\": " + std::string(levels, '[') + "1" + std::string(levels, ']') + "}";
  };
  expect_error([&] { parse_completion_request(nested(63), model); },
               "'prompt' must be a string or an array of token ids (integers), one prompt per "
               "request, got an array of 1 value");
  expect_error([&] { parse_completion_request(nested(64), model); },
               "the body nests arrays and objects more than 64 levels deep");
  expect_error(
      [&] { parse_completion_request(std::string(200000, '[') + std::string(200000, ']'), model); },
      "more than 64 levels deep");
  // A stop string of 35 ones, "é" and 3 ones: shown() cuts at 37 bytes, inside the "é".
  expect_error(
      [&] {
        parse_completion_request("{\"prompt\": \"1\", \"stop\": \"" + std::string(35, '1') +
                                     "\xC3\xA9"
                                     "111\"}",
                                 model);
      },
      "(the engine stops on single tokens), got \"" + std::string(35, '1') + "...");
  std::string body;
  ASSERT_NO_THROW(body = error_body(400, "prompt", "got \"\xC3\""));
  EXPECT_NE(json::parse(body)["error"]["message"].get<std::string>().find("\xEF\xBF\xBD"),
            std::string::npos)
      << body;
}

}  // namespace
}  // namespace book::serve
