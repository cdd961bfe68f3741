#!/usr/bin/env bash
# Builds the documentation site into docs/html; open docs/html/index.html in a browser.
# Warnings are errors: an undocumented public function or a broken reference fails the build.
# Before Doxygen: tools/docs_pages checks every exercise catalog (tests/NN_slug/exercises.txt)
# against the files it names and writes the generated pages (the exercise list, the interview
# questions) into docs/generated. After it: the same tool fails the build if a line of any
# exercise's reference body is shown in the site outside a folded answer (\answer ... \endanswer).
set -euo pipefail
cd "$(dirname "$0")/.."
for need in doxygen dot bazel; do
  command -v "$need" >/dev/null || { echo "docs: '$need' is missing; run tools/setup.sh" >&2; exit 1; }
done
[[ -r /usr/share/javascript/mathjax/MathJax.js ]] || { echo "docs: MathJax is missing (Debian package libjs-mathjax); run tools/setup.sh" >&2; exit 1; }
if command -v fc-list >/dev/null && [[ -z "$(fc-list :lang=zh 2>/dev/null)" ]]; then
  echo "docs: warning: no Chinese font is installed, so a browser on this machine shows the Chinese text as boxes (tools/setup.sh installs fonts-noto-cjk)" >&2
fi

bazel_quiet=(--noshow_progress --ui_event_filters=-info,-stdout,-stderr --color=no --curses=no)
bazel build "${bazel_quiet[@]}" //tools:docs_pages
rm -rf docs/generated
bazel-bin/tools/docs_pages generate docs/generated

rm -rf docs/html
if ! doxygen docs/Doxyfile; then
  echo "docs: doxygen failed; its warnings:" >&2
  cat docs/doxygen-warnings.log >&2
  exit 1
fi
if [[ -s docs/doxygen-warnings.log ]]; then
  cat docs/doxygen-warnings.log >&2
  echo "docs: $(wc -l < docs/doxygen-warnings.log) warning lines (they are errors here)" >&2
  exit 1
fi
bazel-bin/tools/docs_pages check-answers docs/html
# Markdown emphasis Doxygen left unrendered shows as literal asterisks (**粗体** between Chinese
# characters is not emphasis: it needs a word boundary, so write <b>粗体</b> there). Fail on any in
# the text of the pages written in Markdown (the API pages' `char**` are code, not text).
asterisks=$(find docs/html -maxdepth 1 -name '*.html' |
  grep -vE '/(class|struct|namespace|union|dir_)|_8(h|cc|cu|cuh)|_source|/(annotated|hierarchy|functions|globals|files|namespaces)' |
  sort | xargs perl -CSD -0777 -ne 's/<code\b.*?<\/code>//gs; s/<div class="fragment">.*?<!-- fragment -->//gs;
    s/<(pre|script)\b.*?<\/\1>//gs; s/<[^>]*>//g;
    while (/(.{0,30})\*\*(.{0,30})/g) { my ($a, $b) = ($1, $2); s/\n/ /g for $a, $b; print "$ARGV: ...$a**$b...\n" }')
if [[ -n "$asterisks" ]]; then
  echo "$asterisks" >&2
  echo "docs: literal ** in the pages above: Markdown emphasis that did not render (next to Chinese text use <b>...</b>)" >&2
  exit 1
fi
# MathJax from the Debian package, copied so the site works offline and from any folder.
cp -r /usr/share/javascript/mathjax docs/html/mathjax
echo "docs: open $(pwd)/docs/html/index.html"
