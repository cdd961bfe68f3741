#include "tools/bazel_results.h"

#include <fstream>
#include <regex>
#include <sstream>

#include "common/check.h"
#include "tools/json.h"

namespace book::tools {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value of attribute `name` inside one XML start tag, or "".
std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const auto at = tag.find(key);
  if (at == std::string::npos) return "";
  const auto start = at + key.size();
  return tag.substr(start, tag.find('"', start) - start);
}

std::string unescape_xml(std::string s) {
  static const std::pair<const char*, const char*> entities[] = {
      {"&lt;", "<"},   {"&gt;", ">"},  {"&quot;", "\""}, {"&apos;", "'"}, {"&#x0A;", "\n"},
      {"&#10;", "\n"}, {"&#x0D;", ""}, {"&#13;", ""},    {"&amp;", "&"}};
  for (const auto& [from, to] : entities) {
    for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos;
         at += std::string(to).size())
      s.replace(at, std::string(from).size(), to);
  }
  return s;
}

// The property `name`'s value among <property name="..." value="..."/> in `body`.
std::string property(const std::string& body, const std::string& name) {
  const auto at = body.find("<property name=\"" + name + "\"");
  if (at == std::string::npos) return "";
  const auto end = body.find('>', at);
  return unescape_xml(attribute(body.substr(at, end - at), "value"));
}

std::string path_of_uri(const std::string& uri) {
  const std::string prefix = "file://";
  return uri.rfind(prefix, 0) == 0 ? uri.substr(prefix.size()) : uri;
}

}  // namespace

std::vector<TestCase> parse_test_xml(const std::string& xml, const std::string& target) {
  std::vector<TestCase> cases;
  std::size_t pos = 0;
  while ((pos = xml.find("<testcase ", pos)) != std::string::npos) {
    const auto tag_end = xml.find('>', pos);
    if (tag_end == std::string::npos) break;
    const std::string tag = xml.substr(pos, tag_end - pos);
    std::string body;
    if (xml[tag_end - 1] != '/') {
      const auto close = xml.find("</testcase>", tag_end);
      body = xml.substr(tag_end, close == std::string::npos ? std::string::npos : close - tag_end);
    }
    TestCase tc;
    tc.target = target;
    tc.name = attribute(tag, "classname") + "." + attribute(tag, "name");
    tc.exercise = property(body, "exercise");
    tc.track = property(body, "track");
    const auto failure = body.find("<failure");
    const auto error = body.find("<error");
    const auto skipped = body.find("<skipped");
    if (failure != std::string::npos || error != std::string::npos) {
      tc.outcome = CaseOutcome::kFailed;
      const auto at = std::min(failure, error);
      tc.message = unescape_xml(attribute(body.substr(at, body.find('>', at) - at), "message"));
    } else if (attribute(tag, "result") == "skipped" || skipped != std::string::npos) {
      if (skipped != std::string::npos)
        tc.message = unescape_xml(
            attribute(body.substr(skipped, body.find('>', skipped) - skipped), "message"));
      if (tc.message.find("is not started") != std::string::npos)
        tc.outcome = CaseOutcome::kNotStarted;
      else if (tc.message.find("needs a GPU") != std::string::npos)
        tc.outcome = CaseOutcome::kNeedsGpu;
      else if (tc.message.find("not selected") != std::string::npos)
        tc.outcome = CaseOutcome::kNotSelected;
      else
        tc.outcome = CaseOutcome::kSkipped;
    }
    cases.push_back(tc);
    pos = tag_end;
  }
  return cases;
}

BuildEvents parse_build_events(const std::string& json_lines) {
  BuildEvents events;
  std::istringstream lines(json_lines);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const Json event = parse_json(line);
    const Json& id = event["id"];
    if (id.has("testResult")) {
      const std::string label = id["testResult"]["label"].str();
      for (const Json& output : event["testResult"]["testActionOutput"].items)
        if (output["name"].str() == "test.xml")
          events.test_xml[label] = path_of_uri(output["uri"].str());
      events.test_status[label] = event["testResult"]["status"].str();
    } else if (id.has("targetCompleted")) {
      const std::string label = id["targetCompleted"]["label"].str();
      const bool success = event["completed"]["success"].boolean;
      if (!success) events.failed_to_build.insert(label);
    } else if (id.has("buildFinished")) {
      const Json& code = event["finished"]["exitCode"];
      events.exit_name = code["name"].str();
      events.exit_code = code.has("code") ? std::stoi(code["code"].str()) : 0;  // 0 is omitted
    }
  }
  return events;
}

std::vector<TestCase> read_test_cases(const BuildEvents& events) {
  std::vector<TestCase> all;
  for (const auto& [label, path] : events.test_xml) {
    const std::string xml = read_file(path);
    if (xml.empty()) {
      TestCase missing{
          label, "(no test.xml)",      "",
          "",    CaseOutcome::kFailed, "Bazel reported " + path + " but it is missing or empty"};
      all.push_back(missing);
      continue;
    }
    for (auto& tc : parse_test_xml(xml, label)) all.push_back(std::move(tc));
  }
  return all;
}

std::string strip_ansi(const std::string& text) {
  static const std::regex escape("\x1b\\[[0-9;]*[A-Za-z]");
  return std::regex_replace(text, escape, "");
}

std::vector<BuildError> find_build_errors(const std::string& output) {
  static const std::regex compiler(R"(^([^\s:][^:]*):(\d+):(?:\d+:)?\s*(?:fatal )?error: .*)");
  std::vector<BuildError> errors, bazel_errors;
  std::istringstream lines(strip_ansi(output));
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, compiler)) {
      errors.push_back({m[1].str(), std::stoi(m[2].str()), line});
    } else if (line.find("undefined reference to") != std::string::npos ||
               line.find("multiple definition of") != std::string::npos) {
      errors.push_back({"", 0, line});
    } else if (line.rfind("ERROR: ", 0) == 0) {
      bazel_errors.push_back({"", 0, line});
    }
  }
  return errors.empty() ? bazel_errors : errors;
}

}  // namespace book::tools
