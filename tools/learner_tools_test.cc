// The learner's tools: reading one run's results (build events, test XML, build errors), judging
// each exercise from them (never from another track's or an older run's), the report, and the
// reference texts.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/testing/expect_error.h"
#include "tools/bazel_results.h"
#include "tools/json.h"
#include "tools/progress_report.h"
#include "tools/reference_text.h"

namespace book::tools {
namespace {

using book::testing::expect_error;

TEST(Json, ObjectsArraysStringsAndEscapes) {
  const Json j = parse_json(R"({"a": [1, -2.5e3, true, null], "b": {"c": "x\"y\u00e9\n"}})");
  ASSERT_EQ(j["a"].items.size(), 4u);
  EXPECT_EQ(j["a"].items[1].str(), "-2.5e3");
  EXPECT_TRUE(j["a"].items[2].boolean);
  EXPECT_EQ(j["b"]["c"].str(), "x\"y\xc3\xa9\n");
  EXPECT_FALSE(j.has("z"));
  EXPECT_EQ(j["z"]["y"].kind, Json::Kind::kNull);
  expect_error([] { parse_json(R"({"a": )"); }, "ends too early");
  expect_error([] { parse_json(R"({"a" 1})"); }, "expected ':'");
}

const char* kEvents =
    R"({"id":{"testResult":{"label":"//tests/x:a_test","run":1}},"testResult":{"testActionOutput":[{"name":"test.log","uri":"file:///tmp/a/test.log"},{"name":"test.xml","uri":"file:///tmp/a/test.xml"}],"status":"FAILED"}}
{"id":{"targetCompleted":{"label":"//tests/x:a_test"}},"completed":{"success":true}}
{"id":{"targetCompleted":{"label":"//tests/x:b_test"}},"completed":{"failureDetail":{"message":"gcc failed"}}}
{"id":{"targetCompleted":{"label":"//tests/x:c_test"}},"aborted":{"reason":"SKIPPED"}}
{"id":{"buildFinished":{}},"finished":{"exitCode":{"name":"BUILD_FAILURE","code":1}}}
)";

TEST(BuildEvents, TestsThatRanAndTargetsThatDidNotBuild) {
  const BuildEvents e = parse_build_events(kEvents);
  ASSERT_EQ(e.test_xml.size(), 1u);
  EXPECT_EQ(e.test_xml.at("//tests/x:a_test"), "/tmp/a/test.xml");
  EXPECT_EQ(e.test_status.at("//tests/x:a_test"), "FAILED");
  EXPECT_EQ(e.failed_to_build, (std::set<std::string>{"//tests/x:b_test", "//tests/x:c_test"}));
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_EQ(e.exit_name, "BUILD_FAILURE");
  EXPECT_EQ(parse_build_events(
                R"({"id":{"buildFinished":{}},"finished":{"exitCode":{"name":"SUCCESS"}}})")
                .exit_code,
            0);
}

const char* kXml = R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5">
  <testsuite name="S">
    <testcase name="Passes" status="run" result="completed" classname="S">
      <properties><property name="exercise" value="dp.1"/><property name="track" value="exercises"/></properties>
    </testcase>
    <testcase name="Fails" status="run" result="completed" classname="S">
      <properties><property name="exercise" value="dp.2"/><property name="track" value="exercises"/></properties>
      <failure message="x.cc:3&#x0A;Expected: 1 &lt; 2&#x0A;got &quot;3&quot;" type=""/>
    </testcase>
    <testcase name="Stub" status="run" result="skipped" classname="S">
      <properties><property name="exercise" value="dp.3"/><property name="track" value="exercises"/></properties>
      <skipped message="exercise dp.3 is not started: write it in f.cc"/>
    </testcase>
    <testcase name="Gpu" status="run" result="skipped" classname="S">
      <skipped message="needs a GPU: no device"/>
    </testcase>
    <testcase name="Other" status="run" result="skipped" classname="S">
      <skipped message="not selected (BOOK_EXERCISE=dp.1)"/>
    </testcase>
  </testsuite>
</testsuites>)xml";

TEST(TestXml, OutcomesPropertiesAndMessages) {
  const auto cases = parse_test_xml(kXml, "//tests/x:a_test");
  ASSERT_EQ(cases.size(), 5u);
  EXPECT_EQ(cases[0].name, "S.Passes");
  EXPECT_EQ(cases[0].exercise, "dp.1");
  EXPECT_EQ(cases[0].track, "exercises");
  EXPECT_EQ(cases[0].outcome, CaseOutcome::kPassed);
  EXPECT_EQ(cases[1].outcome, CaseOutcome::kFailed);
  EXPECT_EQ(cases[1].message, "x.cc:3\nExpected: 1 < 2\ngot \"3\"");
  EXPECT_EQ(cases[2].outcome, CaseOutcome::kNotStarted);
  EXPECT_EQ(cases[3].outcome, CaseOutcome::kNeedsGpu);
  EXPECT_EQ(cases[4].outcome, CaseOutcome::kNotSelected);
}

TEST(BuildErrors, CompilerLinesWithFileAndLineColoursRemoved) {
  const std::string output =
      "INFO: Analyzed 2 targets\n"
      "ERROR: /w/exercises/12/BUILD:3:11: Compiling exercises/12/sub.cc failed: (Exit 1)\n"
      "\x1b[01m\x1b[Kexercises/12/sub.cc:8:11:\x1b[m\x1b[K \x1b[01;31m\x1b[Kerror: "
      "\x1b[m\x1b[Kexpected ';'\n"
      "exercises/12/sub.cc:9:1: warning: unused\n"
      "/usr/bin/ld: x.o: undefined reference to `book::f()'\n";
  const auto errors = find_build_errors(output);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].file, "exercises/12/sub.cc");
  EXPECT_EQ(errors[0].line, 8);
  EXPECT_EQ(errors[0].message, "exercises/12/sub.cc:8:11: error: expected ';'");
  EXPECT_EQ(errors[1].file, "");
  EXPECT_NE(errors[1].message.find("undefined reference"), std::string::npos);
  // Bazel's own ERROR lines only when the compiler said nothing.
  const auto bazel_only = find_build_errors("ERROR: no such package 'x'\n");
  ASSERT_EQ(bazel_only.size(), 1u);
  EXPECT_EQ(bazel_only[0].message, "ERROR: no such package 'x'");
}

const char* kSource = R"(// file comment
namespace book::dynprog {

// Counts ways.
int count_ways(int n) {
  if (n < 2) { return 1; }
  return count_ways(n - 1) + count_ways(n - 2);
}

int other(int n) { return count_ways(n) + 1; }

//! [snip]
int snipped = 42;
//! [snip]

}  // namespace book::dynprog
)";

TEST(ReferenceText, SnippetFunctionOrWholeFile) {
  EXPECT_EQ(extract_reference(kSource, "snip", "f.cc"), "int snipped = 42;\n");
  EXPECT_EQ(extract_reference(kSource, "count_ways", "f.cc"),
            "// Counts ways.\nint count_ways(int n) {\n  if (n < 2) { return 1; }\n"
            "  return count_ways(n - 1) + count_ways(n - 2);\n}\n");
  EXPECT_EQ(extract_reference(kSource, "other", "f.cc"),
            "int other(int n) { return count_ways(n) + 1; }\n");
  EXPECT_EQ(extract_reference(kSource, "", "f.cc"), kSource);
  expect_error([] { extract_reference(kSource, "missing", "f.cc"); },
               {"f.cc", "missing", "'solution ='"});
}

TEST(ReferenceText, TellingLinesLeaveOutTheStatementAndBoilerplate) {
  const auto lines = telling_lines(kSource, {"int other(int n) { return count_ways(n) + 1; }"});
  EXPECT_EQ(lines, (std::vector<std::string>{"int count_ways(int n) {", "if (n < 2) { return 1; }",
                                             "return count_ways(n - 1) + count_ways(n - 2);"}))
      << "short lines (the comment, the snippet), boilerplate and the statement's line are left "
         "out";
  EXPECT_EQ(collapse_space("  a \t b  "), "a b");
}

Exercise exercise(const std::string& id, const std::string& test) {
  Exercise e;
  e.id = id;
  e.chapter = "12_dp";
  e.problem = "Problem " + id;
  e.difficulty = "easy";
  e.files = {"exercises/12_dp/f.cc"};
  e.section = "S";
  e.tests = {test};
  e.hints = {"h"};
  return e;
}

TestCase tc(const std::string& target, const std::string& id, CaseOutcome o,
            const std::string& track = "exercises") {
  return {target, "S.N", id, track, o, o == CaseOutcome::kFailed ? "expected 1, got 2" : ""};
}

TEST(Judge, EachStatusFromThisRunOnly) {
  const std::string a = "//tests/12_dp:a_test", b = "//tests/12_dp:b_test",
                    c = "//tests/12_dp:c_test";
  const std::vector<Exercise> all = {exercise("dp.1", a), exercise("dp.2", a), exercise("dp.3", a),
                                     exercise("dp.4", b), exercise("dp.5", c), exercise("dp.6", a)};
  BuildEvents events;
  events.test_xml[a] = "a.xml";  // a ran; b failed to build; c did not run at all
  events.failed_to_build.insert(b);
  const std::vector<TestCase> cases = {
      tc(a, "dp.1", CaseOutcome::kPassed), tc(a, "dp.1", CaseOutcome::kPassed),
      tc(a, "dp.2", CaseOutcome::kPassed), tc(a, "dp.2", CaseOutcome::kFailed),
      tc(a, "dp.3", CaseOutcome::kNotStarted),
      // A solutions-track result (another run's file) must never make dp.6 done.
      tc(a, "dp.6", CaseOutcome::kPassed, "solutions"),
      // b's old result, as if left on disk, is not in this run: ignored because b did not build.
      tc(b, "dp.4", CaseOutcome::kPassed)};
  const std::vector<BuildError> errors = {
      {"exercises/12_dp/f.cc", 8, "exercises/12_dp/f.cc:8:1: error: x"}};
  const auto s = judge(all, events, cases, errors);
  EXPECT_EQ(s[0].status, Status::kDone);
  EXPECT_EQ(s[1].status, Status::kFailing);
  EXPECT_NE(s[1].detail.find("expected 1, got 2"), std::string::npos) << s[1].detail;
  EXPECT_EQ(s[2].status, Status::kNotStarted);
  EXPECT_EQ(s[3].status, Status::kBuildFailed);
  EXPECT_EQ(s[3].detail, "exercises/12_dp/f.cc:8:1: error: x");
  EXPECT_EQ(s[4].status, Status::kNotRun);
  EXPECT_NE(s[4].detail.find("c_test"), std::string::npos);
  EXPECT_EQ(s[5].status, Status::kNotRun);
  EXPECT_NE(s[5].detail.find("solutions track"), std::string::npos);
  EXPECT_EQ(next_exercise(s)->exercise->id, "dp.2") << "a failing exercise comes first";
}

TEST(Judge, ACrashedBinaryFailsItsExercisesAndAGpuSkipIsNotDone) {
  const std::string a = "//tests/12_dp:a_test";
  const std::vector<Exercise> all = {exercise("dp.1", a), exercise("dp.2", "//tests/12_dp:g_test")};
  BuildEvents events;
  events.test_xml[a] = "a.xml";
  events.test_xml["//tests/12_dp:g_test"] = "g.xml";
  TestCase crash{a, "a_test.a_test", "", "", CaseOutcome::kFailed, "exited with error code -11"};
  const auto s = judge(all, events,
                       {tc(a, "dp.1", CaseOutcome::kPassed), crash,
                        tc("//tests/12_dp:g_test", "dp.2", CaseOutcome::kPassed),
                        tc("//tests/12_dp:g_test", "dp.2", CaseOutcome::kNeedsGpu)},
                       {});
  EXPECT_EQ(s[0].status, Status::kFailing);
  EXPECT_NE(s[0].detail.find("error code -11"), std::string::npos);
  EXPECT_EQ(s[1].status, Status::kNeedsGpu);
}

TEST(Report, DoneFirstThenTheRestWithTheNextExercise) {
  const std::vector<Exercise> all = {exercise("dp.1", "//t:a"), exercise("dp.2", "//t:a"),
                                     exercise("dp.3", "//t:a")};
  std::vector<ExerciseStatus> s = {{&all[0], Status::kNotStarted, ""},
                                   {&all[1], Status::kFailing, "a_test, S.N: expected 1"},
                                   {&all[2], Status::kDone, ""}};
  const std::string r = format_report(s, {{"12_dp", "Dynamic programming"}}, {{"dp.2", 1}});
  EXPECT_NE(r.find("Chapter 12 — Dynamic programming (12_dp): 1 done, 1 FAILING, 1 not started"),
            std::string::npos)
      << r;
  const auto done = r.find("done        dp.3"), failing = r.find("FAILING     dp.2"),
             not_started = r.find("not started dp.1");
  ASSERT_NE(done, std::string::npos) << r;
  EXPECT_LT(done, failing) << r;
  EXPECT_LT(failing, not_started) << r;
  EXPECT_NE(r.find("exercises/12_dp/f.cc"), std::string::npos);
  EXPECT_NE(r.find("a_test, S.N: expected 1"), std::string::npos);
  EXPECT_NE(r.find("Next: dp.2"), std::string::npos) << r;
  EXPECT_NE(r.find("bazel run //tools:progress -- dp.2"), std::string::npos) << r;
  EXPECT_NE(r.find("(1 of 1 shown so far)"), std::string::npos) << r;
  EXPECT_EQ(chapter_title("# Dynamic programming {#ch12}\n\ntext"), "Dynamic programming");
}

TEST(Report, AllDone) {
  const std::vector<Exercise> all = {exercise("dp.1", "//t:a")};
  EXPECT_NE(
      format_report({{&all[0], Status::kDone, ""}}, {}, {}).find("Every exercise here is done"),
      std::string::npos);
}

}  // namespace
}  // namespace book::tools
