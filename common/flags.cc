#include "common/flags.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

namespace book {

namespace detail {

// One declared flag or positional argument. `assign` parses, validates and stores a value; it
// leaves the variable untouched when the value is refused.
struct FlagEntry {
  std::string name;
  std::string help;
  bool positional = false;
  bool is_bool = false;
  bool optional = false;
  bool set = false;
  std::string placeholder;       // "<integer>", "<ring|tree>", "<number,...>"
  std::string default_text;      // the variable's value when declared
  std::string constraint;        // "in 1..64", "each one of: ring, tree"
  std::shared_ptr<void> limits;  // a Limits<Element>, shared with `assign`
  std::function<void(const std::string&)> assign;

  std::string label() const { return positional ? "<" + name + ">" : "--" + name; }
};

}  // namespace detail

namespace {

using detail::FlagEntry;

template <typename E>
struct Limits {
  std::optional<std::pair<E, E>> range;
  std::vector<std::string> choices;
};

// Optimal-string-alignment distance (edits, with a swap of neighbours counted as one), for
// "did you mean".
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// The candidate closest to `word`, if it is close enough to be a likely typo.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& options) {
  std::optional<std::string> best;
  std::size_t best_distance = word.size() <= 4 ? 1 : 2;
  for (const auto& option : options) {
    const std::size_t distance = edit_distance(word, option);
    if (distance <= best_distance && (!best || distance < edit_distance(word, *best))) {
      best = option;
      best_distance = distance;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

// Shortest text that reads back as the same value.
template <typename T>
std::string format_number(T value) {
  if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else {
    char buffer[64];
    const auto result =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general);
    return std::string(buffer, result.ptr);
  }
}

template <typename T>
std::string format_value(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return value.empty() ? "\"\"" : value;
  } else if constexpr (std::is_arithmetic_v<T>) {
    return format_number(value);
  } else {  // a list
    if (value.empty()) return "none";
    std::vector<std::string> parts;
    for (const auto& element : value) parts.push_back(format_value(element));
    return join(parts, ",");
  }
}

// What a value of E is called in messages and help: {singular with article, plural, placeholder}.
template <typename E>
struct Kind;
template <>
struct Kind<bool> {
  static constexpr const char* a = "true or false";
  static constexpr const char* many = "booleans";
  static constexpr const char* placeholder = "true|false";
};
template <>
struct Kind<int> {
  static constexpr const char* a = "an integer";
  static constexpr const char* many = "integers";
  static constexpr const char* placeholder = "integer";
};
template <>
struct Kind<std::int64_t> : Kind<int> {};
template <>
struct Kind<double> {
  static constexpr const char* a = "a number";
  static constexpr const char* many = "numbers";
  static constexpr const char* placeholder = "number";
};
template <>
struct Kind<float> : Kind<double> {};
template <>
struct Kind<std::string> {
  static constexpr const char* a = "text";
  static constexpr const char* many = "words";
  static constexpr const char* placeholder = "text";
};

template <typename E>
const char* type_name() {
  if constexpr (std::is_same_v<E, int>) return "an int";
  if constexpr (std::is_same_v<E, std::int64_t>) return "a 64-bit integer";
  if constexpr (std::is_same_v<E, float>) return "a float";
  return "a double";
}

// Parses one element strictly: the whole text must be the value. On failure returns nullopt and
// sets `problem` to why, when there is more to say than "not <kind>".
template <typename E>
std::optional<E> parse_element(std::string_view text, std::string& problem) {
  if constexpr (std::is_same_v<E, std::string>) {
    return std::string(text);
  } else if constexpr (std::is_same_v<E, bool>) {
    if (text == "true" || text == "1" || text == "yes") return true;
    if (text == "false" || text == "0" || text == "no") return false;
    return std::nullopt;
  } else {
    std::string_view digits = text;
    // from_chars refuses a leading '+', which people do write; a lone "+" stays refused.
    if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
    E value{};
    std::from_chars_result result;
    if constexpr (std::is_integral_v<E>) {
      result = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    } else {
      result = std::from_chars(digits.data(), digits.data() + digits.size(), value,
                               std::chars_format::general);
    }
    if (result.ec == std::errc::result_out_of_range &&
        result.ptr == digits.data() + digits.size()) {
      problem = std::string("out of range: ") + type_name<E>() + " holds " +
                format_number(std::numeric_limits<E>::lowest()) + ".." +
                format_number(std::numeric_limits<E>::max());
      return std::nullopt;
    }
    if (result.ec != std::errc() || result.ptr != digits.data() + digits.size() || digits.empty())
      return std::nullopt;
    if constexpr (std::is_floating_point_v<E>) {
      if (!std::isfinite(value)) {
        problem = "not a finite number";
        return std::nullopt;
      }
    }
    return value;
  }
}

// Checks one parsed element against the declared range or choices; returns the complaint.
template <typename E>
std::optional<std::string> violation(const E& value, std::string_view text,
                                     const Limits<E>& limits) {
  if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool>) {
    if (limits.range && (value < limits.range->first || value > limits.range->second))
      return "must be in " + format_number(limits.range->first) + ".." +
             format_number(limits.range->second) + ", got " + std::string(text);
  }
  if constexpr (std::is_same_v<E, std::string>) {
    if (!limits.choices.empty() &&
        std::find(limits.choices.begin(), limits.choices.end(), value) == limits.choices.end()) {
      std::string message =
          "must be one of " + join(limits.choices, ", ") + ", got '" + std::string(text) + "'";
      if (const auto guess = closest(value, limits.choices))
        message += " (did you mean " + *guess + "?)";
      return message;
    }
  }
  return std::nullopt;
}

template <typename E>
E convert_scalar(const std::string& label, const std::string& text, const Limits<E>& limits) {
  std::string problem;
  const std::optional<E> value = parse_element<E>(text, problem);
  if (!value)
    throw UsageError(label + " expects " + Kind<E>::a + ", got '" + text + "'" +
                     (problem.empty() ? "" : " (it is " + problem + ")"));
  if (auto complaint = violation(*value, text, limits)) throw UsageError(label + " " + *complaint);
  return *value;
}

template <typename E>
std::vector<E> convert_list(const std::string& label, const std::string& text,
                            const Limits<E>& limits) {
  const std::string expected =
      label + " expects a comma-separated list of " + Kind<E>::many + ", got '" + text + "'";
  if (text.empty()) throw UsageError(expected + " (an empty list)");
  std::vector<E> values;
  std::size_t begin = 0;
  for (int index = 1;; ++index) {
    const std::size_t comma = text.find(',', begin);
    const std::string element =
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (element.empty())
      throw UsageError(expected + " (element " + std::to_string(index) + " is empty)");
    std::string problem;
    const std::optional<E> value = parse_element<E>(element, problem);
    if (!value)
      throw UsageError(expected + " ('" + element + "' is " +
                       (problem.empty() ? std::string("not ") + Kind<E>::a : problem) + ")");
    if (auto complaint = violation(*value, element, limits))
      throw UsageError(label + " " + *complaint + " in '" + text + "'");
    values.push_back(*value);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return values;
}

template <typename T>
struct IsList : std::false_type {};
template <typename T>
struct IsList<std::vector<T>> : std::true_type {};

bool looks_like_negative_number(const std::string& text) {
  std::string problem;
  return text.size() > 1 && text[0] == '-' && parse_element<double>(text, problem).has_value();
}

}  // namespace

template <typename T>
FlagSpec<T>& FlagSpec<T>::range(Element min, Element max) requires(std::is_arithmetic_v<Element> &&
                                                                   !std::is_same_v<Element, bool>) {
  BOOK_CHECK(min <= max, entry_->label() << ": range(" << format_number(min) << ", "
                                         << format_number(max) << ") is empty");
  static_cast<Limits<Element>*>(entry_->limits.get())->range = {min, max};
  entry_->constraint = std::string(IsList<T>::value ? "each " : "") + "in " + format_number(min) +
                       ".." + format_number(max);
  return *this;
}

template <typename T>
FlagSpec<T>& FlagSpec<T>::choices(
    std::vector<std::string> allowed) requires std::is_same_v<Element, std::string> {
  BOOK_CHECK(!allowed.empty(), entry_->label() << ": choices() needs at least one value");
  entry_->constraint =
      std::string(IsList<T>::value ? "each " : "") + "one of " + join(allowed, ", ");
  if (!IsList<T>::value) entry_->placeholder = "<" + join(allowed, "|") + ">";
  static_cast<Limits<Element>*>(entry_->limits.get())->choices = std::move(allowed);
  return *this;
}

template <typename T>
FlagSpec<T>& FlagSpec<T>::optional() {
  BOOK_CHECK(entry_->positional, "--" << entry_->name
                                      << ": optional() is for positional arguments (a flag is "
                                         "always optional)");
  entry_->optional = true;
  return *this;
}

template class FlagSpec<bool>;
template class FlagSpec<int>;
template class FlagSpec<std::int64_t>;
template class FlagSpec<double>;
template class FlagSpec<float>;
template class FlagSpec<std::string>;
template class FlagSpec<std::vector<int>>;
template class FlagSpec<std::vector<std::int64_t>>;
template class FlagSpec<std::vector<double>>;
template class FlagSpec<std::vector<std::string>>;

Flags::Flags(std::string program, std::string description)
    : program_(std::move(program)), description_(std::move(description)) {}

Flags::~Flags() = default;

template <typename T>
FlagSpec<T> Flags::declare(const std::string& name, T* target, const std::string& help,
                           bool is_positional) {
  BOOK_CHECK(target != nullptr, "flag '" << name << "' has no variable to fill");
  BOOK_CHECK(
      !name.empty() && name[0] != '-' && name.find_first_of("= \t,<>[]") == std::string::npos,
      "flag name '" << name
                    << "' is not usable: no leading '-', no '=', spaces, commas or brackets");
  BOOK_CHECK(name != "help" && name != "h", "flag name '" << name << "' is reserved for the help");
  for (const auto& entry : entries_)
    BOOK_CHECK(entry->name != name, "'" << name << "' is declared twice");
  using Element = typename detail::FlagElement<T>::type;
  auto entry = std::make_unique<FlagEntry>();
  auto limits = std::make_shared<Limits<Element>>();
  entry->name = name;
  entry->help = help;
  entry->positional = is_positional;
  entry->is_bool = std::is_same_v<T, bool>;
  entry->placeholder =
      std::string("<") + Kind<Element>::placeholder + (IsList<T>::value ? ",...>" : ">");
  entry->default_text = format_value(*target);
  entry->limits = limits;
  FlagEntry* raw = entry.get();
  entry->assign = [target, limits, raw](const std::string& text) {
    if constexpr (IsList<T>::value)
      *target = convert_list<Element>(raw->label(), text, *limits);
    else
      *target = convert_scalar<Element>(raw->label(), text, *limits);
  };
  entries_.push_back(std::move(entry));
  return FlagSpec<T>(raw);
}

// clang-format off
FlagSpec<bool> Flags::add(const std::string& n, bool* t, const std::string& h) { return declare(n, t, h, false); }
FlagSpec<int> Flags::add(const std::string& n, int* t, const std::string& h) { return declare(n, t, h, false); }
FlagSpec<std::int64_t> Flags::add(const std::string& n, std::int64_t* t, const std::string& h) { return declare(n, t, h, false); }
FlagSpec<double> Flags::add(const std::string& n, double* t, const std::string& h) { return declare(n, t, h, false); }
FlagSpec<float> Flags::add(const std::string& n, float* t, const std::string& h) { return declare(n, t, h, false); }
FlagSpec<std::string> Flags::add(const std::string& n, std::string* t, const std::string& h) { return declare(n, t, h, false); }
FlagSpec<std::vector<int>> Flags::add(const std::string& n, std::vector<int>* t, const std::string& h) { return declare(n, t, h, false); }
FlagSpec<std::vector<std::int64_t>> Flags::add(const std::string& n, std::vector<std::int64_t>* t, const std::string& h) { return declare(n, t, h, false); }
FlagSpec<std::vector<double>> Flags::add(const std::string& n, std::vector<double>* t, const std::string& h) { return declare(n, t, h, false); }
FlagSpec<std::vector<std::string>> Flags::add(const std::string& n, std::vector<std::string>* t, const std::string& h) { return declare(n, t, h, false); }
FlagSpec<int> Flags::positional(const std::string& n, int* t, const std::string& h) { return declare(n, t, h, true); }
FlagSpec<std::int64_t> Flags::positional(const std::string& n, std::int64_t* t, const std::string& h) { return declare(n, t, h, true); }
FlagSpec<double> Flags::positional(const std::string& n, double* t, const std::string& h) { return declare(n, t, h, true); }
FlagSpec<std::string> Flags::positional(const std::string& n, std::string* t, const std::string& h) { return declare(n, t, h, true); }
FlagSpec<std::vector<int>> Flags::positional(const std::string& n, std::vector<int>* t, const std::string& h) { return declare(n, t, h, true); }
// clang-format on

FlagEntry* Flags::find_flag(const std::string& name) const {
  for (const auto& entry : entries_)
    if (!entry->positional && entry->name == name) return entry.get();
  return nullptr;
}

void Flags::unknown_flag(const std::string& written) const {
  const std::size_t first_letter = written.find_first_not_of('-');
  const std::string bare = first_letter == std::string::npos ? "" : written.substr(first_letter);
  std::vector<std::string> names, valid;
  for (const auto& entry : entries_)
    if (!entry->positional) names.push_back(entry->name);
  names.push_back("help");
  for (const auto& name : names) valid.push_back("--" + name);
  std::string message = "unknown flag " + written;
  if (const auto guess = closest(bare, names)) message += ": did you mean --" + *guess + "?";
  throw UsageError(message + " (valid flags: " + join(valid, ", ") + ")");
}

void Flags::parse_flag(const std::vector<std::string>& arguments, std::size_t& i) {
  const std::string& argument = arguments[i];
  const std::size_t equals = argument.find('=');
  const std::string name = argument.substr(2, equals == std::string::npos ? equals : equals - 2);
  if (name == "help") throw UsageError("--help takes no value, got '" + argument + "'");
  if (name.empty())
    throw UsageError("'" + argument + "' is not a flag: write --name or --name=value");
  FlagEntry* entry = find_flag(name);
  if (entry == nullptr) unknown_flag("--" + name);
  std::string value;
  if (equals != std::string::npos) {
    value = argument.substr(equals + 1);
  } else if (entry->is_bool) {
    value = "true";  // a bool never takes the next argument: `--tour 5` is a flag and a positional
  } else if (i + 1 < arguments.size() && arguments[i + 1].rfind("--", 0) != 0) {
    value = arguments[++i];
  } else {
    throw UsageError("--" + name + " needs a value: write --" + name + "=" + entry->placeholder);
  }
  entry->assign(value);
  entry->set = true;
}

void Flags::parse(int argc, const char* const* argv) {
  std::vector<std::string> arguments;
  for (int i = 1; i < argc; ++i) arguments.emplace_back(argv[i]);
  parse(arguments);
}

void Flags::parse(const std::vector<std::string>& arguments) {
  std::vector<FlagEntry*> positionals;
  for (const auto& entry : entries_) {
    entry->set = false;
    if (!entry->positional) continue;
    BOOK_CHECK(positionals.empty() || !positionals.back()->optional || entry->optional,
               "positional <" << entry->name << "> is required but follows the optional <"
                              << positionals.back()->name << ">");
    positionals.push_back(entry.get());
  }
  std::vector<std::string> given;
  std::vector<std::string> hints;  // why a positional may be a mistake, for "unexpected argument"
  bool flags_done = false;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string& argument = arguments[i];
    if (!flags_done && argument == "--") {
      flags_done = true;
    } else if (!flags_done && (argument == "-h" || argument == "--help")) {
      throw HelpRequested(help());
    } else if (!flags_done && argument.rfind("--", 0) == 0) {
      parse_flag(arguments, i);
    } else if (!flags_done && argument.size() > 1 && argument[0] == '-' &&
               !looks_like_negative_number(argument)) {
      unknown_flag(argument.substr(0, argument.find('=')));
    } else {
      given.push_back(argument);
      const std::string& previous = i > 0 ? arguments[i - 1] : "";
      const FlagEntry* bare_bool =
          previous.rfind("--", 0) == 0 && previous.find('=') == std::string::npos
              ? find_flag(previous.substr(2))
              : nullptr;
      hints.push_back(bare_bool && bare_bool->is_bool
                          ? "; a bool flag takes its value as " + previous + "=" + argument
                          : "");
    }
  }
  std::size_t required = 0;
  for (const FlagEntry* p : positionals) required += !p->optional;
  if (given.size() < required)
    throw UsageError("missing argument " + positionals[given.size()]->label() + " (" + usage() +
                     ")");
  if (given.size() > positionals.size()) {
    const std::size_t extra = positionals.size();
    throw UsageError("unexpected argument '" + given[extra] + "' (" +
                     (positionals.empty() ? program_ + " takes no positional arguments" : usage()) +
                     hints[extra] + ")");
  }
  for (std::size_t p = 0; p < given.size(); ++p) {
    positionals[p]->assign(given[p]);
    positionals[p]->set = true;
  }
}

bool Flags::was_set(const std::string& name) const {
  for (const auto& entry : entries_)
    if (entry->name == name) return entry->set;
  throw Error("was_set: nothing named '" + name + "' is declared");
}

std::string Flags::usage() const {
  std::string line = "usage: " + program_ + " [flags]";
  for (const auto& entry : entries_)
    if (entry->positional)
      line += entry->optional ? " [" + entry->label() + "]" : " " + entry->label();
  return line;
}

std::string Flags::help() const {
  // Left column ("--steps=<integer>"), right column (help, default, constraint).
  std::vector<std::pair<std::string, std::string>> flag_rows, positional_rows;
  for (const auto& entry : entries_) {
    std::string right = entry->help;
    std::vector<std::string> notes;
    if (!entry->positional || entry->optional) notes.push_back("default: " + entry->default_text);
    if (!entry->constraint.empty()) notes.push_back(entry->constraint);
    if (!notes.empty()) right += (right.empty() ? "(" : " (") + join(notes, "; ") + ")";
    if (entry->positional)
      positional_rows.emplace_back(entry->optional ? "[" + entry->label() + "]" : entry->label(),
                                   right);
    else
      flag_rows.emplace_back("--" + entry->name + (entry->is_bool ? "" : "=" + entry->placeholder),
                             right);
  }
  flag_rows.emplace_back("-h, --help", "prints this help and exits");
  constexpr std::size_t kMaxLeft = 30;
  std::size_t left_width = 0;
  for (const auto* rows : {&flag_rows, &positional_rows})
    for (const auto& row : *rows)
      left_width = std::max(left_width, std::min(row.first.size(), kMaxLeft));
  std::ostringstream out;
  const auto print = [&](const std::vector<std::pair<std::string, std::string>>& rows) {
    for (const auto& [left, right] : rows) {
      out << "  " << left;
      if (left.size() > left_width)
        out << "\n  " << std::string(left_width, ' ');
      else
        out << std::string(left_width - left.size(), ' ');
      out << "  " << right << "\n";
    }
  };
  out << usage() << "\n\n" << description_ << "\n";
  if (!positional_rows.empty()) {
    out << "\narguments:\n";
    print(positional_rows);
  }
  out << "\nflags:\n";
  print(flag_rows);
  return out.str();
}

}  // namespace book
