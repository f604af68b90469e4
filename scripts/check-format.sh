#!/bin/bash
# Check that every C file follows .clang-format.  Prints TAP (one test per
# file) so the test summary counts it.  Usage: scripts/check-format.sh [-i]
#   -i  reformat the files in place instead of checking
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
# tracked files and new ones not yet added (but not ignored ones)
files=$(git ls-files --cached --others --exclude-standard \
    'src/*.c' 'src/*.h' 'bench/*.c' 't/*.c' 2>/dev/null)
if [ "$1" = "-i" ]; then
    clang-format -i $files
    exit 0
fi
n=0 bad=0
echo "1..$(echo "$files" | wc -w)"
for f in $files; do
    n=$((n + 1))
    if clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
        echo "ok $n - $f"
    else
        echo "not ok $n - $f is not clang-formatted (scripts/check-format.sh -i)"
        bad=$((bad + 1))
    fi
done
[ $bad -eq 0 ]
