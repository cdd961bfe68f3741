#!/usr/bin/env bash
# Builds the documentation site into docs/html; open docs/html/index.html in a browser.
# Warnings are errors: an undocumented public function or a broken reference fails the build.
set -euo pipefail
cd "$(dirname "$0")/.."
for need in doxygen dot; do
  command -v "$need" >/dev/null || { echo "docs: '$need' is missing; run tools/setup.sh" >&2; exit 1; }
done
[[ -r /usr/share/javascript/mathjax/MathJax.js ]] || { echo "docs: MathJax is missing (Debian package libjs-mathjax); run tools/setup.sh" >&2; exit 1; }
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
# MathJax from the Debian package, copied so the site works offline and from any folder.
cp -r /usr/share/javascript/mathjax docs/html/mathjax
echo "docs: open $(pwd)/docs/html/index.html"
