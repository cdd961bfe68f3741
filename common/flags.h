/// @file
/// The command-line parser every stage uses: typed flags declared next to the variables they
/// fill, strict values, errors that say what was wrong, and `--help` generated from the
/// declarations.
///
/// \code
/// int steps = 800;
/// std::string algorithm = "ring";
/// bool tour = false;
/// book::Flags flags("train", "trains the tiny GPT and prints its loss curve");
/// flags.add("steps", &steps, "optimizer steps").range(1, 1000000);
/// flags.add("algorithm", &algorithm, "all-reduce algorithm").choices({"ring", "tree"});
/// flags.add("tour", &tour, "the short run the tour prints");
/// flags.parse(argc, argv);  // inside book::run_main, which turns errors into exit code 2
/// \endcode
///
/// Syntax: `--name=value` or `--name value`; a bool is `--tour` (true) or `--tour=true|false`
/// (also 1|0 and yes|no) and never takes the next argument as its value; a list is
/// comma-separated (`--sizes=128,256`); `--` ends the flags (everything after it is positional);
/// `-h` or `--help` throws book::HelpRequested carrying the generated help, which book::run_main
/// prints to stdout before exiting with status 0. A value that starts with `--` needs the `=`
/// form (`--name=--odd`); a negative number works either way (`--offset -3`). When a flag is
/// given twice the last value wins (a list is replaced, not extended), so a command line can be
/// extended with an override.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/check.h"

namespace book {

/// A bad command line: an unknown flag, a missing or malformed value, a value out of range, a
/// wrong number of positional arguments. `book::run_main` prints it and exits with status 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// Thrown by Flags::parse for `-h`/`--help`. Not a book::Error: asking for help is not a mistake.
/// `book::run_main` prints text() to stdout and exits with status 0.
class HelpRequested : public std::exception {
 public:
  /// @param text the generated help, printed by whoever catches this
  explicit HelpRequested(std::string text) : text_(std::move(text)) {}
  /// The generated help (several lines, ending in a newline).
  const std::string& text() const { return text_; }
  /// "help requested".
  const char* what() const noexcept override { return "help requested"; }

 private:
  std::string text_;
};

namespace detail {
struct FlagEntry;  // One declared flag or positional argument; defined in flags.cc.

template <typename T>
struct FlagElement {
  using type = T;
};
template <typename T>
struct FlagElement<std::vector<T>> {
  using type = T;
};
}  // namespace detail

/// What Flags::add and Flags::positional return: refines the declaration it names.
/// `T` is the variable's type; a list's constraints apply to each element.
template <typename T>
class FlagSpec {
 public:
  /// The element type: T itself, or the element type of a list.
  using Element = typename detail::FlagElement<T>::type;

  /// Refuses a value (each element, for a list) outside [min, max], e.g.
  /// "--ranks must be in 1..64, got 0". Checked only on values given on the command line.
  FlagSpec& range(Element min, Element max) requires(std::is_arithmetic_v<Element> &&
                                                     !std::is_same_v<Element, bool>);

  /// Refuses a string (each element, for a list) that is not one of `allowed`, e.g.
  /// "--algorithm must be one of ring, tree, got 'rung' (did you mean ring?)".
  FlagSpec& choices(std::vector<std::string> allowed) requires std::is_same_v<Element, std::string>;

  /// Makes a positional argument optional: when it is absent the variable keeps its value.
  /// Optional positionals come after the required ones.
  FlagSpec& optional();

  /// Made by Flags; not for direct use.
  explicit FlagSpec(detail::FlagEntry* entry) : entry_(entry) {}

 private:
  detail::FlagEntry* entry_;
};

/// A program's command line: declare the flags and positional arguments with the variables they
/// fill (whose current values are the defaults), then parse().
///
/// Declaration mistakes (a duplicate name, a name with '=' in it) are book::Error; mistakes on
/// the command line are book::UsageError.
class Flags {
 public:
  /// @param program the name shown in usage lines and help, e.g. "busbw"
  /// @param description one line saying what the program does, shown by `--help`
  Flags(std::string program, std::string description);
  ~Flags();
  Flags(const Flags&) = delete;
  Flags& operator=(const Flags&) = delete;

  /// Declares `--name` filling `*target` (not owned; must outlive parse()). `help` is one line.
  FlagSpec<bool> add(const std::string& name, bool* target, const std::string& help);
  /// Declares `--name` filling `*target`, as above.
  FlagSpec<int> add(const std::string& name, int* target, const std::string& help);
  /// Declares `--name` filling `*target`, as above.
  FlagSpec<std::int64_t> add(const std::string& name, std::int64_t* target,
                             const std::string& help);
  /// Declares `--name` filling `*target`, as above.
  FlagSpec<double> add(const std::string& name, double* target, const std::string& help);
  /// Declares `--name` filling `*target`, as above.
  FlagSpec<float> add(const std::string& name, float* target, const std::string& help);
  /// Declares `--name` filling `*target`, as above.
  FlagSpec<std::string> add(const std::string& name, std::string* target, const std::string& help);
  /// Declares `--name` filling `*target`, as above.
  FlagSpec<std::vector<int>> add(const std::string& name, std::vector<int>* target,
                                 const std::string& help);
  /// Declares `--name` filling `*target`, as above.
  FlagSpec<std::vector<std::int64_t>> add(const std::string& name,
                                          std::vector<std::int64_t>* target,
                                          const std::string& help);
  /// Declares `--name` filling `*target`, as above.
  FlagSpec<std::vector<double>> add(const std::string& name, std::vector<double>* target,
                                    const std::string& help);
  /// Declares `--name` filling `*target`, as above.
  FlagSpec<std::vector<std::string>> add(const std::string& name, std::vector<std::string>* target,
                                         const std::string& help);

  /// Declares the next positional argument (they are filled in declaration order). Required
  /// unless marked `.optional()`.
  FlagSpec<int> positional(const std::string& name, int* target, const std::string& help);
  /// Declares the next positional argument, as above.
  FlagSpec<std::int64_t> positional(const std::string& name, std::int64_t* target,
                                    const std::string& help);
  /// Declares the next positional argument, as above.
  FlagSpec<double> positional(const std::string& name, double* target, const std::string& help);
  /// Declares the next positional argument, as above.
  FlagSpec<std::string> positional(const std::string& name, std::string* target,
                                   const std::string& help);
  /// Declares the next positional argument, as above.
  FlagSpec<std::vector<int>> positional(const std::string& name, std::vector<int>* target,
                                        const std::string& help);

  /// Parses `argv[1..argc)` (argv[0] is the program's path and is ignored).
  /// @throws book::UsageError for a bad command line; book::HelpRequested for `-h`/`--help`.
  void parse(int argc, const char* const* argv);
  /// The same, for the arguments that follow the program's path (handy in tests).
  void parse(const std::vector<std::string>& arguments);

  /// Whether flag or positional `name` was given on the command line (by the last parse()).
  /// @throws book::Error if nothing named `name` was declared.
  bool was_set(const std::string& name) const;

  /// The generated help: usage line, description, each flag with its type, default,
  /// constraint and help, and the positional arguments.
  std::string help() const;

  /// The usage line, e.g. "usage: explain [flags] <problem> <s> [<t>]".
  std::string usage() const;

 private:
  template <typename T>
  FlagSpec<T> declare(const std::string& name, T* target, const std::string& help,
                      bool is_positional);
  detail::FlagEntry* find_flag(const std::string& name) const;
  void parse_flag(const std::vector<std::string>& arguments, std::size_t& i);
  [[noreturn]] void unknown_flag(const std::string& name) const;

  std::string program_;
  std::string description_;
  std::vector<std::unique_ptr<detail::FlagEntry>> entries_;  // declaration order
};

}  // namespace book
