#!/bin/sh
# Build the Flux message decoder fuzz target (libFuzzer, clang) and run it
# for a bounded time on a scratch copy of the seed corpus.
#
# Usage: scripts/fuzz.sh [SECONDS] [BUILDDIR]
#   SECONDS   total fuzzing time (default 60)
#   BUILDDIR  where msg_fuzz is built (default ${TMPDIR:-/tmp}/flux-c-fuzz)
#
# Exits non-zero if the build fails or the fuzzer finds a crash, a leak,
# an ASAN/UBSAN error or a failed round-trip check; the reproducer is then
# kept and its path printed.  Replay one with: BUILDDIR/msg_fuzz FILE
set -eu

secs=${1:-60}
case $secs in
    '' | *[!0-9]*)
        echo "usage: $0 [SECONDS] [BUILDDIR]" >&2
        exit 2
        ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
builddir=${2:-${TMPDIR:-/tmp}/flux-c-fuzz}
mkdir -p "$builddir"
builddir=$(cd "$builddir" && pwd)

cd "$top"
# UBSAN findings must abort to count as crashes, hence no recovery.
clang -g -O1 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined \
    -Wall -Wextra -Werror -Wno-unused-parameter \
    -I src/common $(pkg-config --cflags jansson) \
    src/common/libflux/fuzz/msg_fuzz.c src/common/libflux/message*.c \
    $(pkg-config --libs jansson) -o "$builddir/msg_fuzz"

work=$(mktemp -d "${TMPDIR:-/tmp}/msg_fuzz.XXXXXX")
mkdir "$work/corpus" "$work/artifacts"
cp src/common/libflux/fuzz/corpus/* "$work/corpus/"

rc=0
"$builddir/msg_fuzz" -max_total_time="$secs" -timeout=10 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    "$work/corpus" || rc=$?

if [ "$rc" -ne 0 ]; then
    echo "fuzz.sh: msg_fuzz failed (exit $rc); reproducers:" >&2
    ls -l "$work/artifacts" >&2
    exit "$rc"
fi
rm -rf "$work"
echo "fuzz.sh: no crash in ${secs}s"
