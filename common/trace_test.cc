// The trace recorder: spans record one box each (none without a trace), lanes become named
// threads of per-rank processes, and the JSON parses back even with awkward names.
#include "common/trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/testing/expect_error.h"

namespace book {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

// A minimal JSON checker: brackets balance outside strings, strings end, escapes are legal, and
// no control character appears raw inside a string. Returns "" or what is wrong and where.
std::string json_problem(const std::string& text) {
  std::vector<char> stack;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        const char next = i + 1 < text.size() ? text[i + 1] : '\0';
        if (std::string("\"\\/bfnrtu").find(next) == std::string::npos)
          return "bad escape at " + std::to_string(i);
        ++i;
      } else if (c == '"') {
        in_string = false;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        return "raw control character in a string at " + std::to_string(i);
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      stack.push_back(c == '{' ? '}' : ']');
    } else if (c == '}' || c == ']') {
      if (stack.empty() || stack.back() != c)
        return "unbalanced " + std::string(1, c) + " at " + std::to_string(i);
      stack.pop_back();
    }
  }
  if (in_string) return "unterminated string";
  if (!stack.empty()) return "unclosed bracket";
  return "";
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(Trace, SpanRecordsOneBoxFromConstructionToDestruction) {
  Trace trace;
  const double before = trace.now_us();
  {
    Trace::Span span(&trace, 2, "compute", "backward layer 3", "compute", 64);
    EXPECT_TRUE(trace.events().empty()) << "nothing is recorded until the span ends";
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const double after = trace.now_us();
  const auto events = trace.events();
  ASSERT_EQ(events.size(), 1u);
  const auto& e = events[0];
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.lane, "compute");
  EXPECT_EQ(e.name, "backward layer 3");
  EXPECT_EQ(e.category, "compute");
  EXPECT_EQ(e.bytes, 64);
  EXPECT_GE(e.start_us, before);
  EXPECT_LE(e.start_us + e.duration_us, after);
  EXPECT_GE(e.duration_us, 1000.0) << "the span was open for at least the 2 ms sleep";
}

TEST(Trace, NullTraceRecordsNothing) {
  Trace::Span span(nullptr, 0, "comm", "all_reduce", "collective");
  span.set_bytes(10);
  span.end();  // must not crash
}

TEST(Trace, EndRecordsOnceAndMovingTransfersTheBox) {
  Trace trace;
  {
    Trace::Span a(&trace, 0, "comm", "first", "send");
    a.set_bytes(128);
    a.end();
    a.end();
    EXPECT_EQ(trace.events().size(), 1u);
    Trace::Span b(&trace, 1, "comm", "second", "recv");
    Trace::Span c(std::move(b));  // b is now empty: only c records "second"
    Trace::Span d(&trace, 1, "compute", "third", "compute");
    d = std::move(c);  // "third" ends here, d now owns "second"
    EXPECT_EQ(trace.events().size(), 2u);
  }
  const auto events = trace.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].name, "first");
  EXPECT_EQ(events[0].bytes, 128);
  EXPECT_EQ(events[1].name, "third");
  EXPECT_EQ(events[2].name, "second");
}

TEST(Trace, BadEventsAreRefused) {
  Trace trace;
  testing::expect_error([&] { trace.add({"x", "send", -1, 0, 1, 0}); }, "rank -1 is negative");
  testing::expect_error([&] { trace.add({"x", "send", 0, 0, -1, 0}); }, "duration -1");
  testing::expect_error([&] { trace.add({"x", "send", 0, 0, 1, -8}); }, "bytes -8");
  testing::expect_error([&] { Trace::Span span(&trace, -2, "comm", "y", "send"); }, "rank -2");
  Trace::Span span(&trace, 0, "comm", "z", "send");
  testing::expect_error([&] { span.set_bytes(-1); }, "bytes must be finite and ≥ 0, got -1");
  EXPECT_EQ(trace.events().size(), 0u);
}

TEST(Trace, IsThreadSafe) {
  Trace trace;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 4; ++rank)
    threads.emplace_back([&trace, rank] {
      for (int i = 0; i < 500; ++i) Trace::Span span(&trace, rank, "comm", "step", "send");
    });
  for (auto& t : threads) t.join();
  int per_rank[4] = {};
  for (const auto& e : trace.events()) ++per_rank[e.rank];
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(per_rank[rank], 500) << "rank " << rank;
}

TEST(Trace, JsonHasAProcessPerRankAndAThreadPerLane) {
  Trace trace;
  trace.add({"forward", "compute", 0, 0, 10, 0, "compute"});
  trace.add({"all_reduce", "collective", 0, 5, 10, 4096, "comm"});
  trace.add({"forward", "compute", 1, 0, 10, 0, "compute"});
  trace.add({"send", "send", 3, 1, 2, 16});  // default lane
  const std::string path = temp_path("trace.json");
  trace.write_json(path);
  const std::string json = read_file(path);
  EXPECT_EQ(json_problem(json), "") << json;
  EXPECT_EQ(count(json, "\"process_name\""), 3u) << "ranks 0, 1 and 3: " << json;
  EXPECT_NE(json.find("\"pid\":3,\"args\":{\"name\":\"rank 3\"}"), std::string::npos) << json;
  // Lanes get thread ids in order of first appearance, the same on every rank.
  EXPECT_NE(json.find("\"pid\":0,\"tid\":0,\"args\":{\"name\":\"compute\"}"), std::string::npos);
  EXPECT_NE(json.find("\"pid\":0,\"tid\":1,\"args\":{\"name\":\"comm\"}"), std::string::npos);
  EXPECT_NE(json.find("\"pid\":1,\"tid\":0,\"args\":{\"name\":\"compute\"}"), std::string::npos);
  EXPECT_NE(json.find("\"pid\":3,\"tid\":2,\"args\":{\"name\":\"main\"}"), std::string::npos);
  EXPECT_EQ(count(json, "\"thread_name\""), 4u) << "one per (rank, lane) used: " << json;
  EXPECT_EQ(count(json, "\"ph\":\"X\""), 4u);
  EXPECT_NE(json.find("\"name\":\"all_reduce\",\"cat\":\"collective\",\"ph\":\"X\",\"pid\":0,"
                      "\"tid\":1,\"ts\":5.000,\"dur\":10.000,\"args\":{\"bytes\":4096}"),
            std::string::npos)
      << json;
}

TEST(Trace, JsonEscapesAwkwardNamesAndKeepsLongTimesExact) {
  Trace trace;
  trace.add({"say \"hi\"\\ \n\t\x01 → done", "odd \"cat\"", 0, 12345678.5, 0.25, 0, "lane \"q\""});
  const std::string path = temp_path("awkward.json");
  trace.write_json(path);
  const std::string json = read_file(path);
  EXPECT_EQ(json_problem(json), "") << json;
  EXPECT_NE(json.find("\"say \\\"hi\\\"\\\\ \\n\\t\\u0001 → done\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"lane \\\"q\\\"\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"ts\":12345678.500"), std::string::npos)
      << "12 s into a trace must keep sub-microsecond resolution: " << json;
}

TEST(Trace, EmptyTraceIsValidJson) {
  Trace trace;
  const std::string path = temp_path("empty.json");
  trace.write_json(path);
  EXPECT_EQ(json_problem(read_file(path)), "");
  EXPECT_NE(read_file(path).find("\"traceEvents\": ["), std::string::npos);
}

TEST(Trace, TableHasOneLinePerEventWithTheLane) {
  Trace trace;
  trace.add({"sendrecv chunk 3", "sendrecv", 1, 10, 5, 1024, "comm"});
  trace.add({"backward \"3\"", "compute step", 0, 2, 1, 0, "compute"});
  const std::string path = temp_path("trace.tsv");
  trace.write_table(path);
  EXPECT_EQ(read_file(path),
            "# rank start_us end_us category bytes name lane\n"
            "1 10.000 15.000 sendrecv 1024 \"sendrecv chunk 3\" \"comm\"\n"
            "0 2.000 3.000 compute_step 0 \"backward '3'\" \"compute\"\n");
}

TEST(Trace, UnwritablePathsAreRefused) {
  Trace trace;
  testing::expect_error([&] { trace.write_json("/nonexistent-folder/t.json"); },
                        "cannot write the trace to /nonexistent-folder/t.json");
  testing::expect_error([&] { trace.write_table("/nonexistent-folder/t.tsv"); },
                        "cannot write the trace table to /nonexistent-folder/t.tsv");
}

}  // namespace
}  // namespace book
