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
# One clang-format for all the files (one per file took a minute here):
# it names each file it would change in a "FILE:LINE:COL: error:" line.
out=$(clang-format --dry-run -Werror $files 2>&1)
rc=$?
n=0 bad=0
echo "1..$(echo "$files" | wc -w)"
for f in $files; do
    n=$((n + 1))
    case "$out" in
    "$f:"* | *"
$f:"*)
        echo "not ok $n - $f is not clang-formatted (scripts/check-format.sh -i)"
        bad=$((bad + 1)) ;;
    *) echo "ok $n - $f" ;;
    esac
done
# a failure that named no file (clang-format itself broken)
if [ $rc -ne 0 ] && [ $bad -eq 0 ]; then
    echo "$out" | head -5 >&2
    echo "not ok $((n + 1)) - clang-format failed (status $rc)"
    exit 1
fi
[ $bad -eq 0 ]
