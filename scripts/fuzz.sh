#!/bin/sh
# Build the fuzz targets (libFuzzer, clang) and run each for a bounded
# time on a scratch copy of its seed corpus:
#   msg_fuzz     the Flux message decoders (src/common/libflux/fuzz)
#   router_fuzz  the broker's router and services (src/broker/fuzz); its
#                seeds are written by src/broker/fuzz/mkcorpus.c
#   parse_fuzz   the parsers of client-supplied text in src/common: jobspec
#                (JSON, YAML), J, tree objects, KVS transactions, eventlogs,
#                R, idsets, hostlists, durations, job ids, TOML
#                (src/common/fuzz)
#   imp_fuzz     flux-imp's parsers: J, its config (JSON, YAML), the exec
#                input, the privsep message (src/imp/fuzz)
#
# Usage: scripts/fuzz.sh [SECONDS] [BUILDDIR]
#   SECONDS   fuzzing time, a quarter per target (default 60); the
#             targets run as many at once as there are CPUs
#   BUILDDIR  where the targets are built (default ${TMPDIR:-/tmp}/flux-c-fuzz)
#
# Exits non-zero if a build fails or a fuzzer finds a crash, a leak,
# an ASAN/UBSAN error or a failed check; the reproducer is then
# kept and its path printed.  Replay one with: BUILDDIR/TARGET FILE
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
ncpu=$(nproc 2>/dev/null || echo 1)

# The targets build at once, each clang in the background (spawn); then
# built waits for them all and fails if one did.
pids=""
spawn() {
    "$@" &
    pids="$pids $!"
}
built() {
    ok=1
    for pid in $pids; do
        wait "$pid" || ok=0
    done
    pids=""
    [ "$ok" -eq 1 ] || { echo "fuzz.sh: a target did not build" >&2; exit 1; }
}

# UBSAN findings must abort to count as crashes, hence no recovery.
cflags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
    -Wall -Wextra -Werror -Wno-unused-parameter"
spawn clang $cflags \
    -I src/common $(pkg-config --cflags jansson) \
    src/common/libflux/fuzz/msg_fuzz.c src/common/libflux/message*.c \
    src/common/libflux/json*.c \
    $(pkg-config --libs jansson) -o "$builddir/msg_fuzz"

# The broker without main() and PMI boot, with all of libflux, the overlay
# and libidset.  There is no configure step: an empty config.h stands in
# for the generated one (_GNU_SOURCE is what sources need from it).
: >"$builddir/config.h"
spawn clang $cflags -Wno-missing-field-initializers -D_GNU_SOURCE \
    -I "$builddir" -I src/common -I src -I src/broker \
    $(pkg-config --cflags jansson libuv libzmq) \
    src/broker/fuzz/router_fuzz.c \
    $(ls src/broker/*.c | grep -v -e '/main\.c$' -e '/boot\.c$' -e '/boot_pmi\.c$' -e '/conf\.c$' \
        -e '/boot_config\.c$') \
    src/overlay/*.c src/common/libflux/*.c src/common/libidset/*.c \
    src/common/libutil/fsd.c src/common/libutil/fluid.c src/common/libjob/job.c \
    $(pkg-config --libs jansson libuv libzmq) -ldl -lpthread -lm \
    -o "$builddir/router_fuzz"
spawn clang -g -O1 -Wall -Wextra -Werror -Wno-unused-parameter \
    -I src/common $(pkg-config --cflags jansson) \
    src/broker/fuzz/mkcorpus.c src/common/libflux/message*.c \
    src/common/libflux/json*.c \
    $(pkg-config --libs jansson) -o "$builddir/mkcorpus"

# The parsers with what they need of libflux (errprintf, base64, jsonparse)
# and libcontent (blobrefs).  libyaml is dlopen()ed by its soname, which
# configure finds; the fuzz build asks the linker the same way.
yaml_soname=$(readelf -d "$(pkg-config --variable=libdir yaml-0.1)/libyaml.so" \
    2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
spawn clang $cflags -Wno-missing-field-initializers -D_GNU_SOURCE \
    -DYAML_SONAME="\"${yaml_soname:-libyaml-0.so.2}\"" \
    -DMUNGE_SONAME="\"libmunge.so.2\"" \
    -I "$builddir" -I src/common \
    $(pkg-config --cflags jansson libuv yaml-0.1) \
    src/common/fuzz/parse_fuzz.c src/common/libflux/*.c \
    src/common/libjob/jobspec.c src/common/libjob/jobspec_yaml.c \
    src/common/libjob/sign.c src/common/libkvs/treeobj.c \
    src/common/libkvs/kvs_txn.c src/common/libkvs/kvs_util.c \
    src/common/libcontent/blobref.c src/common/libcontent/sha1.c \
    src/common/libcontent/sha256.c src/common/libeventlog/eventlog.c \
    src/common/librlist/rlist.c src/common/librlist/rlist_R.c \
    src/common/librlist/rlist_alloc.c src/common/libidset/idset.c \
    src/common/libhostlist/hostlist.c src/common/libutil/fsd.c \
    src/common/libutil/fluid.c src/common/libutil/toml.c \
    $(pkg-config --libs jansson libuv) -ldl -lpthread -lm \
    -o "$builddir/parse_fuzz"

# flux-imp's parsers, with libcontent's SHA-256 (no libflux, as flux-imp)
spawn clang $cflags -Wno-missing-field-initializers -D_GNU_SOURCE \
    -I src/imp -I src/common/libcontent \
    $(pkg-config --cflags jansson yaml-0.1 munge) \
    src/imp/fuzz/imp_fuzz.c src/imp/imperr.c src/imp/b64.c src/imp/sign.c \
    src/imp/conf.c src/imp/input.c src/common/libcontent/sha256.c \
    $(pkg-config --libs jansson yaml-0.1 munge) -o "$builddir/imp_fuzz"
built

# start TARGET SECONDS: fuzz a scratch copy of $work/TARGET.seeds in the
# background (with TMPDIR there too: router_fuzz makes its socket
# directory in it), its output to $work/TARGET.out
running=""
start() {
    mkdir "$work/$1" "$work/$1.artifacts"
    cp "$work/$1.seeds"/* "$work/$1/"
    TMPDIR="$work" "$builddir/$1" -max_total_time="$2" -timeout=10 -max_len=4096 \
        -print_final_stats=1 -artifact_prefix="$work/$1.artifacts/" \
        "$work/$1" >"$work/$1.out" 2>&1 &
    running="$running $1:$!"
}

# finish: wait for every target started, print each one's output in
# turn, and exit with the first failure's status
finish() {
    first=0
    for tp in $running; do
        rc=0
        wait "${tp#*:}" || rc=$?
        cat "$work/${tp%%:*}.out"
        if [ "$rc" -ne 0 ]; then
            echo "fuzz.sh: ${tp%%:*} failed (exit $rc); reproducers:" >&2
            ls -l "$work/${tp%%:*}.artifacts" >&2
            [ "$first" -ne 0 ] || first=$rc
        fi
    done
    running=""
    [ "$first" -eq 0 ] || exit "$first"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX")
mkdir "$work/msg_fuzz.seeds" "$work/router_fuzz.seeds" "$work/parse_fuzz.seeds"
mkdir "$work/imp_fuzz.seeds"
cp src/imp/fuzz/corpus/* "$work/imp_fuzz.seeds/"
cp src/common/libflux/fuzz/corpus/* "$work/msg_fuzz.seeds/"
cp src/common/fuzz/corpus/* "$work/parse_fuzz.seeds/"
"$builddir/mkcorpus" "$work/router_fuzz.seeds"

# SECONDS of fuzzing in all, a quarter each (at least 1: libFuzzer reads
# 0 as "no limit"), as many targets at once as there are CPUs
quarter=$((secs / 4))
[ "$quarter" -ge 1 ] || quarter=1
n=0
for target in msg_fuzz router_fuzz imp_fuzz parse_fuzz; do
    t=$quarter
    [ "$target" != parse_fuzz ] || t=$((secs - 3 * quarter > 0 ? secs - 3 * quarter : 1))
    start "$target" "$t"
    n=$((n + 1))
    [ $((n % ncpu)) -ne 0 ] || finish
done
finish
rm -rf "$work"
echo "fuzz.sh: no crash in ${secs}s of fuzzing"
