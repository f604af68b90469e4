#!/bin/bash
# What appending to one key many times costs the KVS: the rate of
# commits that each append one event to one eventlog (bench/kvs-commit
# --append, the way a job's eventlogs and its output grow), the bytes
# the content store was given and the file bytes it stored, and how many
# blobs the value's valref holds at the end.  Without folding (apply.c),
# the directory holding the valref grows by a blobref with each append
# and is rewritten by every commit: bytes grow as n^2.
#
# Usage: bench/kvs-append.sh [BUILD_DIR] [COUNTS]
#   BUILD_DIR  a build directory (default: the one this script is in)
#   COUNTS     numbers of appends, one instance each (default "1000 5000")
# Needs jq.
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
counts=${2:-"1000 5000"}
flux=$build/src/cmd/flux
commit=$build/bench/kvs-commit
[ -x "$flux" ] && [ -x "$commit" ] || {
    echo "kvs-append: no flux or bench/kvs-commit in $build" >&2
    exit 1
}
command -v jq >/dev/null || {
    echo "kvs-append: needs jq" >&2
    exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$build/src/cmd:$PATH"
unset FLUX_URI
export KA_COMMIT=$commit

printf "%8s %12s %12s %14s %14s %8s\n" appends "commits/s" "value bytes" \
    "bytes stored" "file bytes" refs
for n in $counts; do
    rm -rf "$work/state" && mkdir "$work/state"
    KA_N=$n "$flux" start -Sstatedir="$work/state" bash -c '
        set -e
        rate=$($KA_COMMIT --append 1 $KA_N ka | awk "{print \$(NF-1)}")
        flux content flush
        refs=$(flux kvs get --treeobj ka.0 | jq ".data | length")
        vbytes=$(flux kvs get --raw ka.0 | wc -c)
        flux module stats content-sqlite \
            | jq -r --arg n $KA_N --arg r "$rate" --arg refs $refs \
                --arg vb $vbytes \
                "[\$n, \$r, \$vb, .stored.bytes, .stored.file_bytes, \$refs]
                 | @tsv"
    ' | awk '{ printf "%8d %12s %12d %14d %14d %8d\n", $1, $2, $3, $4, $5, $6 }'
done
