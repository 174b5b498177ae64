#!/usr/bin/env bash
# Every C++ source and header is formatted by the committed .clang-format (STYLE.md 15).
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
for f in $(git ls-files '*.cpp' '*.h' 2>/dev/null || find . -name '*.cpp' -o -name '*.h'); do
  if ! clang-format --dry-run -Werror "$f" 2>/dev/null; then
    echo "not formatted: $f (clang-format -i $f)"
    bad=$((bad + 1))
  fi
done
total=$(git ls-files '*.cpp' '*.h' | wc -l)
echo "format: $((total - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
