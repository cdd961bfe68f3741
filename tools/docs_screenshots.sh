#!/usr/bin/env bash
# Takes screenshots of the built docs in headless Chromium, to check by eye that the Chinese text
# renders (a CJK font is installed: tools/setup.sh installs fonts-noto-cjk) and that reference
# answers are folded away. Needs Debian's chromium (apt-get install chromium; not part of
# setup.sh, it is large) and a built site (bash docs/build.sh). docs/screenshots/ keeps the shots
# taken for issue 20 (the interview page, the glossary, chapter 4's Chinese answers, chapter 12's
# folded reference answers); after changing how the pages look, retake them with
# `tools/docs_screenshots.sh docs/screenshots`.
#   tools/docs_screenshots.sh [out_dir]     default: /tmp/book-docs-screenshots
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/book-docs-screenshots}
command -v chromium >/dev/null || { echo "screenshots: chromium is missing (apt-get install chromium)" >&2; exit 1; }
[[ -f docs/html/interview.html ]] || { echo "screenshots: build the docs first (bash docs/build.sh)" >&2; exit 1; }
[[ -n "$(fc-list :lang=zh 2>/dev/null)" ]] || echo "screenshots: warning: no Chinese font installed; the Chinese will show as boxes" >&2
mkdir -p "$out"
site="file://$(pwd)/docs/html"
shot() {  # name, page (with #anchor), window size
  local profile
  profile=$(mktemp -d)
  # The flags that work on a machine with no network (see the machine notes): no sandbox as
  # root, no GPU, no background connections; the virtual time lets MathJax finish.
  timeout 180 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars --virtual-time-budget=15000 \
    --window-size="$3" --screenshot="$out/$1.png" "$site/$2" 2>/dev/null
  rm -rf "$profile"
  echo "screenshots: $out/$1.png"
}
shot interview interview.html 1200,1700
shot glossary glossary.html 1200,1400
shot ch04_interview "ch04.html#ch04_iv_mixed_precision" 1200,1500
shot ch12_folded_answers "ch12.html#ch12_edit_family" 1200,1300
