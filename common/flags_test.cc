// The command-line parser: every accepted form, and every refusal with the message a user reads.
#include "common/flags.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/testing/expect_error.h"

namespace book {
namespace {

using testing::expect_error;
using Args = std::vector<std::string>;

// One of every kind of flag, with defaults that are not zero so a wrongly reset value shows.
struct Options {
  bool tour = false;
  int steps = 800;
  std::int64_t bytes = 1 << 20;
  double lr = 0.001;
  float beta = 0.9f;
  std::string algorithm = "ring";
  std::string out;
  std::vector<int> sizes = {128, 256};
  std::vector<std::int64_t> counts = {7};
  std::vector<double> rates = {0.5};
  std::vector<std::string> names = {"a"};

  Flags flags{"stage", "runs the stage"};

  Options() {
    flags.add("tour", &tour, "the short run");
    flags.add("steps", &steps, "optimizer steps").range(1, 100000);
    flags.add("bytes", &bytes, "message size");
    flags.add("lr", &lr, "learning rate").range(0.0, 1.0);
    flags.add("beta", &beta, "Adam beta1");
    flags.add("algorithm", &algorithm, "all-reduce algorithm").choices({"ring", "tree", "naive"});
    flags.add("out", &out, "output file");
    flags.add("sizes", &sizes, "matrix sizes").range(1, 4096);
    flags.add("counts", &counts, "element counts");
    flags.add("rates", &rates, "rates");
    flags.add("names", &names, "names").choices({"a", "b", "c"});
  }
};

TEST(Flags, DefaultsStayWhenNothingIsGiven) {
  Options o;
  o.flags.parse(Args{});
  EXPECT_FALSE(o.tour);
  EXPECT_EQ(o.steps, 800);
  EXPECT_EQ(o.algorithm, "ring");
  EXPECT_EQ(o.sizes, (std::vector<int>{128, 256}));
  EXPECT_FALSE(o.flags.was_set("steps"));
}

TEST(Flags, EqualsAndSpaceFormsFillEveryType) {
  Options o;
  o.flags.parse(Args{"--tour", "--steps=12", "--bytes", "8589934592", "--lr=0.25", "--beta", "0.95",
                     "--algorithm=tree", "--out", "x.json", "--sizes=1,3,4096", "--counts", "-5,+6",
                     "--rates=1e-3,2.5", "--names=c,a"});
  EXPECT_TRUE(o.tour);
  EXPECT_EQ(o.steps, 12);
  EXPECT_EQ(o.bytes, std::int64_t{8589934592});
  EXPECT_EQ(o.lr, 0.25);
  EXPECT_EQ(o.beta, 0.95f);
  EXPECT_EQ(o.algorithm, "tree");
  EXPECT_EQ(o.out, "x.json");
  EXPECT_EQ(o.sizes, (std::vector<int>{1, 3, 4096}));
  EXPECT_EQ(o.counts, (std::vector<std::int64_t>{-5, 6}));
  EXPECT_EQ(o.rates, (std::vector<double>{1e-3, 2.5}));
  EXPECT_EQ(o.names, (std::vector<std::string>{"c", "a"}));
  for (const char* name : {"tour", "steps", "bytes", "lr", "beta", "algorithm", "out", "sizes",
                           "counts", "rates", "names"})
    EXPECT_TRUE(o.flags.was_set(name)) << name;
}

TEST(Flags, ParseTakesArgcArgvAndSkipsTheProgramPath) {
  Options o;
  const char* argv[] = {"/path/to/stage", "--steps=3", "--tour"};
  o.flags.parse(3, argv);
  EXPECT_EQ(o.steps, 3);
  EXPECT_TRUE(o.tour);
}

TEST(Flags, BoolTakesAnExplicitValueButNeverTheNextArgument) {
  Options o;
  o.flags.parse(Args{"--tour=true"});
  EXPECT_TRUE(o.tour);
  o.flags.parse(Args{"--tour=false"});
  EXPECT_FALSE(o.tour);
  o.flags.parse(Args{"--tour=1"});
  EXPECT_TRUE(o.tour);
  o.flags.parse(Args{"--tour=0"});
  EXPECT_FALSE(o.tour);
  o.flags.parse(Args{"--tour=yes"});
  EXPECT_TRUE(o.tour);
  o.flags.parse(Args{"--tour=no"});
  EXPECT_FALSE(o.tour);
  // `--tour false`: the bool is set and "false" is a positional, which this program has none of.
  expect_error(
      [&] {
        o.flags.parse(Args{"--tour", "false"});
      },
      {"unexpected argument 'false'", "takes no positional arguments", "--tour=false"});
  expect_error([&] { o.flags.parse(Args{"--tour=maybe"}); },
               "--tour expects true or false, got 'maybe'");
}

TEST(Flags, RepeatedFlagLastOneWins) {
  Options o;
  o.flags.parse(Args{"--steps=5", "--steps", "9", "--sizes=1,2,3", "--sizes=7"});
  EXPECT_EQ(o.steps, 9);
  EXPECT_EQ(o.sizes, (std::vector<int>{7})) << "a repeated list replaces, never appends";
}

TEST(Flags, WasSetIsResetByTheNextParseAndRefusesUnknownNames) {
  Options o;
  o.flags.parse(Args{"--steps=5"});
  EXPECT_TRUE(o.flags.was_set("steps"));
  o.flags.parse(Args{});
  EXPECT_FALSE(o.flags.was_set("steps"));
  expect_error([&] { o.flags.was_set("stpes"); }, "'stpes'");
}

TEST(Flags, IntegersAreParsedStrictly) {
  for (const char* bad : {"abc", "5x", "1e3", "", "1.5", " 5", "0x10", "+", "-"}) {
    Options o;
    expect_error([&] { o.flags.parse(Args{std::string("--steps=") + bad}); },
                 "--steps expects an integer, got '" + std::string(bad) + "'");
    EXPECT_EQ(o.steps, 800) << "a refused value must leave the variable alone";
  }
  Options o;
  expect_error(
      [&] {
        o.flags.parse(Args{"--steps", "abc"});
      },
      "--steps expects an integer, got 'abc'");
}

TEST(Flags, IntegerOverflowIsRefusedWithTheTypesLimits) {
  Options o;
  expect_error([&] { o.flags.parse(Args{"--steps=99999999999999"}); },
               {"--steps expects an integer, got '99999999999999'", "out of range", "2147483647"});
  expect_error([&] { o.flags.parse(Args{"--bytes=99999999999999999999"}); },
               {"--bytes expects an integer", "9223372036854775807"});
  expect_error(
      [&] { o.flags.parse(Args{"--sizes=1,99999999999"}); },
      {"--sizes expects a comma-separated list of integers", "'99999999999' is out of range"});
}

TEST(Flags, FloatingPointIsParsedStrictlyAndMustBeFinite) {
  Options o;
  o.flags.parse(Args{"--lr=1e-3", "--beta=+0.5"});
  EXPECT_EQ(o.lr, 1e-3);
  EXPECT_EQ(o.beta, 0.5f);
  for (const char* bad : {"abc", "0.1x", "", "1,5", "0x1p3"})
    expect_error([&] { o.flags.parse(Args{std::string("--lr=") + bad}); },
                 "--lr expects a number, got '" + std::string(bad) + "'");
  for (const char* bad : {"inf", "-inf", "nan", "infinity"})
    expect_error([&] { o.flags.parse(Args{std::string("--beta=") + bad}); },
                 {"--beta expects a number, got '" + std::string(bad) + "'", "finite"});
  expect_error([&] { o.flags.parse(Args{"--beta=1e39"}); }, {"'1e39'", "a float holds"});
  expect_error([&] { o.flags.parse(Args{"--lr=1e400"}); }, {"'1e400'", "a double holds"});
}

TEST(Flags, RangeIsInclusiveAndNamesTheBounds) {
  Options o;
  o.flags.parse(Args{"--steps=1"});
  EXPECT_EQ(o.steps, 1);
  o.flags.parse(Args{"--steps=100000", "--lr=0", "--lr=1"});
  EXPECT_EQ(o.steps, 100000);
  expect_error([&] { o.flags.parse(Args{"--steps=0"}); }, "--steps must be in 1..100000, got 0");
  expect_error([&] { o.flags.parse(Args{"--steps=100001"}); },
               "--steps must be in 1..100000, got 100001");
  expect_error([&] { o.flags.parse(Args{"--lr=1.5"}); }, "--lr must be in 0..1, got 1.5");
  expect_error([&] { o.flags.parse(Args{"--lr=-0.1"}); }, "--lr must be in 0..1, got -0.1");
}

TEST(Flags, RangeAppliesToEveryElementOfAList) {
  Options o;
  expect_error([&] { o.flags.parse(Args{"--sizes=128,0,5"}); },
               {"--sizes must be in 1..4096, got 0", "'128,0,5'"});
  expect_error([&] { o.flags.parse(Args{"--sizes=5000"}); }, "got 5000");
}

TEST(Flags, ListsRefuseEmptyAndMalformedElements) {
  Options o;
  expect_error(
      [&] { o.flags.parse(Args{"--sizes=5x"}); },
      {"--sizes expects a comma-separated list of integers, got '5x'", "'5x' is not an integer"});
  expect_error([&] { o.flags.parse(Args{"--sizes=1e3"}); }, "'1e3' is not an integer");
  expect_error([&] { o.flags.parse(Args{"--sizes=1,,2"}); }, "element 2 is empty");
  expect_error([&] { o.flags.parse(Args{"--sizes=1,"}); }, "element 2 is empty");
  expect_error([&] { o.flags.parse(Args{"--sizes="}); }, "an empty list");
  expect_error([&] { o.flags.parse(Args{"--rates=0.5,abc"}); },
               {"list of numbers", "'abc' is not a number"});
  EXPECT_EQ(o.sizes, (std::vector<int>{128, 256})) << "refused lists leave the variable alone";
}

TEST(Flags, ChoicesAreEnforcedWithADidYouMean) {
  Options o;
  o.flags.parse(Args{"--algorithm=naive"});
  EXPECT_EQ(o.algorithm, "naive");
  expect_error([&] { o.flags.parse(Args{"--algorithm=rung"}); },
               {"--algorithm must be one of ring, tree, naive, got 'rung'", "did you mean ring?"});
  expect_error([&] { o.flags.parse(Args{"--algorithm=butterfly"}); },
               "--algorithm must be one of ring, tree, naive, got 'butterfly'");
  expect_error([&] { o.flags.parse(Args{"--names=a,d"}); },
               {"--names must be one of a, b, c, got 'd'", "'a,d'"});
}

TEST(Flags, UnknownFlagListsTheValidOnesAndSuggestsACloseOne) {
  Options o;
  expect_error([&] { o.flags.parse(Args{"--foo=1"}); },
               {"unknown flag --foo", "valid flags: --tour, --steps, --bytes", "--names, --help"});
  expect_error(
      [&] {
        o.flags.parse(Args{"--setps", "5"});
      },
      "unknown flag --setps: did you mean --steps?");
  expect_error([&] { o.flags.parse(Args{"--step=5"}); }, "did you mean --steps?");
  expect_error([&] { o.flags.parse(Args{"-steps=5"}); },
               "unknown flag -steps: did you mean --steps?");
  expect_error([&] { o.flags.parse(Args{"-x"}); }, "unknown flag -x (valid flags:");
  expect_error([&] { o.flags.parse(Args{"--=5"}); }, "'--=5' is not a flag");
  expect_error([&] { o.flags.parse(Args{"---"}); }, "unknown flag ---");
}

TEST(Flags, AFlagWithoutItsValueIsRefused) {
  Options o;
  expect_error([&] { o.flags.parse(Args{"--steps"}); }, "--steps needs a value");
  expect_error([&] { o.flags.parse(Args{"--steps", "--tour"}); }, "--steps needs a value");
  expect_error([&] { o.flags.parse(Args{"--out"}); }, "--out needs a value");
  o.flags.parse(Args{"--out="});
  EXPECT_EQ(o.out, "") << "an explicitly empty string is a value";
}

TEST(Flags, ANegativeNumberIsAValueNotAFlag) {
  Options o;
  o.flags.parse(Args{"--bytes", "-3", "--counts", "-1,-2"});
  EXPECT_EQ(o.bytes, -3);
  EXPECT_EQ(o.counts, (std::vector<std::int64_t>{-1, -2}));
}

TEST(Flags, HelpIsGeneratedFromTheDeclarations) {
  for (const char* ask : {"--help", "-h"}) {
    Options o;
    try {
      o.flags.parse(Args{"--steps=3", ask, "--unknown"});
      FAIL() << ask << " did not ask for help";
    } catch (const HelpRequested& help) {
      const std::string& text = help.text();
      for (const char* needle :
           {"usage: stage [flags]", "runs the stage", "--steps=<integer>", "optimizer steps",
            "default: 800", "in 1..100000", "--tour ", "default: false", "--lr=<number>",
            "default: 0.001", "--algorithm=<ring|tree|naive>", "default: ring", "--out=<text>",
            "default: \"\"", "--sizes=<integer,...>", "default: 128,256", "each in 1..4096",
            "each one of a, b, c", "-h, --help"})
        EXPECT_NE(text.find(needle), std::string::npos) << "lacks '" << needle << "':\n" << text;
    }
  }
  Options o;
  expect_error([&] { o.flags.parse(Args{"--help=yes"}); }, "--help takes no value");
}

TEST(Flags, HelpIsNotABookError) {
  Options o;
  EXPECT_THROW(o.flags.parse(Args{"--help"}), HelpRequested);
  try {
    o.flags.parse(Args{"--help"});
  } catch (const Error&) {
    ADD_FAILURE() << "--help must not read as an error";
  } catch (const HelpRequested&) {
  }
}

struct Explain {
  std::string problem;
  std::string s = "rabbbit";
  int n = 3;
  bool verbose = false;
  Flags flags{"explain", "explains one DP table"};
  Explain() {
    flags.positional("problem", &problem, "LeetCode number").choices({"115", "72"});
    flags.positional("s", &s, "first string").optional();
    flags.positional("n", &n, "rows to show").optional().range(1, 9);
    flags.add("verbose", &verbose, "print every cell");
  }
};

TEST(Flags, PositionalsFillInOrderAndOptionalOnesMayBeLeftOut) {
  Explain e;
  e.flags.parse(Args{"115"});
  EXPECT_EQ(e.problem, "115");
  EXPECT_EQ(e.s, "rabbbit");
  EXPECT_FALSE(e.flags.was_set("s"));
  e.flags.parse(Args{"72", "--verbose", "horse", "4"});
  EXPECT_EQ(e.problem, "72");
  EXPECT_EQ(e.s, "horse");
  EXPECT_EQ(e.n, 4);
  EXPECT_TRUE(e.verbose);
  EXPECT_TRUE(e.flags.was_set("n"));
}

TEST(Flags, PositionalsRefuseTooFewTooManyAndBadValues) {
  Explain e;
  expect_error([&] { e.flags.parse(Args{}); },
               {"missing argument <problem>", "usage: explain [flags] <problem> [<s>] [<n>]"});
  expect_error(
      [&] {
        e.flags.parse(Args{"115", "x", "3", "extra"});
      },
      {"unexpected argument 'extra'", "usage: explain"});
  expect_error([&] { e.flags.parse(Args{"115", "x", "0"}); }, "<n> must be in 1..9, got 0");
  expect_error(
      [&] {
        e.flags.parse(Args{"115", "x", "two"});
      },
      "<n> expects an integer, got 'two'");
  expect_error([&] { e.flags.parse(Args{"116"}); }, "<problem> must be one of 115, 72, got '116'");
}

TEST(Flags, DoubleDashEndsTheFlags) {
  Explain e;
  e.flags.parse(Args{"--", "72", "--verbose"});
  EXPECT_EQ(e.problem, "72");
  EXPECT_EQ(e.s, "--verbose") << "after --, a word that looks like a flag is a positional";
  EXPECT_FALSE(e.verbose);
}

TEST(Flags, HelpListsThePositionals) {
  Explain e;
  try {
    e.flags.parse(Args{"-h"});
    FAIL() << "-h did not ask for help";
  } catch (const HelpRequested& help) {
    for (const char* needle : {"arguments:", "<problem>", "LeetCode number", "[<s>]",
                               "default: rabbbit", "[<n>]", "in 1..9"})
      EXPECT_NE(help.text().find(needle), std::string::npos) << "lacks '" << needle << "':\n"
                                                             << help.text();
  }
}

TEST(Flags, DeclarationMistakesAreBookErrors) {
  int x = 0, y = 0;
  std::string s;
  Flags flags("p", "d");
  flags.add("x", &x, "x");
  expect_error([&] { flags.add("x", &y, "again"); }, "'x' is declared twice");
  expect_error([&] { flags.add("--y", &y, "dashes"); }, "'--y' is not usable");
  expect_error([&] { flags.add("a=b", &y, "equals"); }, "'a=b' is not usable");
  expect_error([&] { flags.add("help", &y, "reserved"); }, "reserved for the help");
  expect_error([&] { flags.add("z", static_cast<int*>(nullptr), "null"); }, "no variable");
  expect_error([&] { flags.add("lo", &y, "empty range").range(5, 1); }, "range(5, 1) is empty");
  expect_error([&] { flags.add("s", &s, "no choices").choices({}); }, "at least one value");
  expect_error([&] { flags.add("o", &y, "not positional").optional(); }, "positional arguments");
  int a = 0, b = 0;
  Flags order("p", "d");
  order.positional("a", &a, "a").optional();
  order.positional("b", &b, "b");
  expect_error(
      [&] {
        order.parse(Args{"1", "2"});
      },
      "<b> is required but follows the optional <a>");
}

TEST(Flags, UsageErrorIsABookError) {
  Options o;
  try {
    o.flags.parse(Args{"--steps=x"});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const Error& base = e;
    EXPECT_STREQ(base.what(), "--steps expects an integer, got 'x'")
        << "the message is exactly what the user reads: no source location in it";
  }
}

}  // namespace
}  // namespace book
