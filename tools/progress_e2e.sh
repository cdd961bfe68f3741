#!/usr/bin/env bash
# The progress tool, tried end to end the way a learner meets it, on a scratch copy of the book
# with one tiny chapter (90_scratch: two exercises, scratch.add and scratch.twice). Each state
# below is set up by editing the scratch exercise file, then `bazel run //tools:progress` must say
# the truth and exit with the right status:
#
#   stub            both "not started", exit 1; the teeth check passes
#   wrong answer    scratch.add "FAILING" with the test's message, exit 1; --solution refuses
#   right answer    scratch.add "done"; --solution shows the reference; one-exercise run exit 0
#   both right      "Every exercise here is done", exit 0; the teeth check now fails
#   compile error   "BUILD FAILS" with file:line, never "done", exit 1
#   stale results   the solutions track's passing test.xml on disk (same Bazel output folder)
#                   never turns into "done": with the compile error, and with the stub back
#   hints           revealed one at a time
#
# Run by .ci/run (not by `bazel test`: it runs Bazel itself, on its own output base, and takes
# a few minutes the first time, mostly building common/ once). Bounded: one chapter of two
# exercises, and every Bazel call has a timeout. Usage: bash tools/progress_e2e.sh
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d /tmp/book-progress-e2e.XXXXXX)
ws=$scratch/ws
passed=0
failed=0

cleanup() {
  (cd "$ws" 2>/dev/null && timeout 60 bazel shutdown >/dev/null 2>&1)
  rm -rf "$scratch"
}
trap cleanup EXIT

# ---- the scratch book: the real tools/, common/, third_party/ and Bazel setup, one small chapter
mkdir -p "$ws"
cp -r "$repo/WORKSPACE" "$repo/.bazelrc" "$repo/tools" "$repo/common" "$repo/third_party" "$ws/"
echo "# The scratch book's root package (no tour)." >"$ws/BUILD"
{
  echo "startup --output_base=$scratch/output_base"
  echo "startup --max_idle_secs=120"
  # Reuse the developer's disk cache if they have one (much faster); CI starts without.
  grep -h '^build --disk_cache' "$repo/user.bazelrc" 2>/dev/null || true
} >"$ws/user.bazelrc"

chapter=90_scratch
mkdir -p "$ws/chapters/$chapter" "$ws/solutions/$chapter" "$ws/exercises/$chapter" "$ws/tests/$chapter"
cat >"$ws/chapters/$chapter/README.md" <<'EOF'
# A scratch chapter {#ch90}

## Adding {#ch90_adding}

Two exercises for the progress tool's own test.
EOF
cat >"$ws/chapters/$chapter/scratch.h" <<'EOF'
#pragma once
namespace book::scratch {
int add(int a, int b);  // scratch.add
int twice(int x);       // scratch.twice
}  // namespace book::scratch
EOF
cat >"$ws/chapters/$chapter/BUILD" <<'EOF'
load("@rules_cc//cc:defs.bzl", "cc_library")
load("//tools:book.bzl", "track")
package(default_visibility = ["//visibility:public"])
cc_library(name = "interface", hdrs = ["scratch.h"])
track(name = "scratch", exercise = "//exercises/90_scratch:scratch", solution = "//solutions/90_scratch:scratch")
EOF
for track in solutions exercises; do
  cat >"$ws/$track/$chapter/BUILD" <<'EOF'
load("@rules_cc//cc:defs.bzl", "cc_library")
package(default_visibility = ["//visibility:public"])
cc_library(
    name = "scratch",
    srcs = ["scratch.cc"],
    deps = ["//chapters/90_scratch:interface", "//common"],
    alwayslink = True,
)
EOF
done
cat >"$ws/solutions/$chapter/scratch.cc" <<'EOF'
#include "chapters/90_scratch/scratch.h"
namespace book::scratch {
int add(int a, int b) { return a + b; }
int twice(int x) { return 2 * x; }
}  // namespace book::scratch
EOF
stub_add='int add(int a, int b) { (void)a, (void)b; BOOK_NOT_IMPLEMENTED("scratch.add", "exercises/90_scratch/scratch.cc", "chapters/90_scratch/README.md, section Adding"); }'
stub_twice='int twice(int x) { (void)x; BOOK_NOT_IMPLEMENTED("scratch.twice", "exercises/90_scratch/scratch.cc", "chapters/90_scratch/README.md, section Adding"); }'
write_exercises() {  # $1: add's body line, $2: twice's body line
  printf '%s\n' '#include "chapters/90_scratch/scratch.h"' '#include "common/check.h"' \
    'namespace book::scratch {' "$1" "$2" '}  // namespace book::scratch' >"$ws/exercises/$chapter/scratch.cc"
}
write_exercises "$stub_add" "$stub_twice"
cat >"$ws/tests/$chapter/BUILD" <<'EOF'
load("//tools:book.bzl", "exercise_test")
exercise_test(
    name = "scratch_test",
    srcs = ["scratch_test.cc"],
    deps = ["//chapters/90_scratch:interface", "//chapters/90_scratch:scratch"],
)
EOF
cat >"$ws/tests/$chapter/scratch_test.cc" <<'EOF'
#include "chapters/90_scratch/scratch.h"
#include "common/testing/exercise.h"
namespace book::scratch {
EXERCISE_TEST("scratch.add", Add, SmallNumbers) {
  EXPECT_EQ(add(2, 3), 5) << "add(2, 3)";
  EXPECT_EQ(add(-4, 1), -3) << "add(-4, 1)";
}
EXERCISE_TEST("scratch.twice", Twice, SmallNumbers) { EXPECT_EQ(twice(21), 42) << "twice(21)"; }
}  // namespace book::scratch
EOF
cat >"$ws/tests/$chapter/exercises.txt" <<'EOF'
[scratch.add]
problem    = add two numbers
difficulty = easy
file       = exercises/90_scratch/scratch.cc
section    = Adding
test       = //tests/90_scratch:scratch_test
solution   = solutions/90_scratch/scratch.cc add
hint       = first hint: the + operator
hint       = second hint: return a + b

[scratch.twice]
problem    = double a number
difficulty = easy
file       = exercises/90_scratch/scratch.cc
section    = Adding
test       = //tests/90_scratch:scratch_test
solution   = solutions/90_scratch/scratch.cc twice
hint       = multiply by two
EOF

# ---- helpers
out=$scratch/out
progress() {  # runs the progress tool with its arguments; sets $status and $out
  (cd "$ws" && timeout 900 bazel run --color=no --curses=no --noshow_progress //tools:progress -- "$@" \
    >"$out" 2>"$out.err")
  status=$?
}
check() {  # check NAME 'CONDITION': one line per check, and the output when it fails
  local name=$1
  if eval "$2"; then
    echo "e2e: ok      $name"
    passed=$((passed + 1))
  else
    echo "e2e: FAILED  $name"
    echo "---- stdout:"; cat "$out"; echo "---- stderr (last 30 lines):"; tail -30 "$out.err"; echo "----"
    failed=$((failed + 1))
  fi
}
says() { grep -qE "$1" "$out"; }
never_says() { ! grep -qE "$1" "$out"; }
status_is() { [[ $status == "$1" ]]; }

echo "e2e: scratch book in $ws (the first run builds common/ and the tools: a few minutes)"

# ---- stub
progress 90
check "stub: both not started" "says '^  not started +scratch\.add' && says '^  not started +scratch\.twice'"
check "stub: exit status 1" "status_is 1"
check "stub: Bazel's own progress was shown" "grep -q 'bazel test --config=exercises' \"$out.err\""
check "stub: suggests scratch.add next" "says '^Next: scratch\.add'"
progress --teeth
check "stub: the teeth check passes" "status_is 0"

# ---- hints, one at a time
progress --hint scratch.add
check "hint: the first only" "says 'hint 1 of 2: first hint' && never_says 'hint 2 of 2'"
progress --hint scratch.add
check "hint: then the second" "says 'hint 2 of 2: second hint'"

# ---- wrong answer
write_exercises 'int add(int a, int b) { return a - b; }' "$stub_twice"
progress 90
check "wrong: scratch.add failing with the test's message" "says '^  FAILING +scratch\.add' && says 'add\(2, 3\)'"
check "wrong: never done" "never_says '^  done'"
check "wrong: exit status 1" "status_is 1"
progress --solution scratch.add
check "wrong: --solution refuses" "status_is 1 && says 'stays hidden' && never_says 'return a \+ b'"

# ---- right answer
write_exercises 'int add(int a, int b) { return a + b; }' "$stub_twice"
progress 90
check "right: scratch.add done, scratch.twice not started" "says '^  done +scratch\.add' && says '^  not started +scratch\.twice'"
check "right: exit status 1 (one left)" "status_is 1"
progress scratch.add
check "right: one exercise's run says done, exit 0" "says '^  done +scratch\.add' && never_says 'scratch\.twice' && status_is 0"
progress --solution scratch.add
check "right: --solution shows the reference" "status_is 0 && says 'return a \+ b'"

# ---- both right
write_exercises 'int add(int a, int b) { return a + b; }' 'int twice(int x) { return x + x; }'
progress 90
check "all right: every exercise done, exit 0" "says 'Every exercise here is done' && status_is 0"
progress --teeth
check "all right: the teeth check fails (tests pass against this 'stub')" "status_is 1 && says 'passes against the stubs'"

# ---- compile error, then the stale results of the other track
write_exercises 'int add(int a, int b) { return a + b }' 'int twice(int x) { return x + x; }'
progress 90
check "compile error: build fails with file and line" "says '^  BUILD FAILS +scratch\.add' && says 'exercises/90_scratch/scratch\.cc:4:'"
check "compile error: never done" "never_says '^  done'"
check "compile error: exit status 1" "status_is 1"
(cd "$ws" && timeout 900 bazel test --color=no --curses=no //tests/90_scratch:scratch_test >/dev/null 2>&1)
check "stale: the solutions track passed (its test.xml is on disk)" \
  "grep -q 'value=\"solutions\"' '$ws/bazel-testlogs/tests/90_scratch/scratch_test/test.xml'"
progress 90
check "stale: still build fails, not done" "says '^  BUILD FAILS +scratch\.add' && never_says '^  done'"
write_exercises "$stub_add" "$stub_twice"
(cd "$ws" && timeout 900 bazel test --color=no --curses=no //tests/90_scratch:scratch_test >/dev/null 2>&1)
progress 90
check "stale: the stub again reads not started, not done" "says '^  not started +scratch\.add' && never_says '^  done'"

echo "e2e: $passed passed, $failed failed"
((failed == 0))
