#!/bin/bash
# Set up everything and run the whole test suite:
#   1. install the Debian build/test dependencies
#   2. build and run `make check` (unit + integration tests)
#   3. rebuild with AddressSanitizer+UBSan and run the unit tests again
#   4. fuzz the message decoder, the broker router and the parsers of
#      client-supplied data for a bounded time
#      (FUZZ_SECONDS, default 60, split among the targets)
# Prints "N passed, N failed" last and exits non-zero on any failure.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-$(nproc)}
fuzz_seconds=${FUZZ_SECONDS:-60}
status=0
broken=0 # suites whose make check failed without a failed test

"$top/scripts/install-deps.sh" || { echo "install-deps failed"; exit 1; }
(cd "$top" && ./autogen.sh >/dev/null) || { echo "autogen failed"; exit 1; }
mkdir -p "$top/build"

# failed_blocks LOG OUT: what each failed test of a sharness script ran
# and printed.  OUT holds one block per test that ran (skipped ones have
# none), each opened by sharness's "expecting success:" (or "checking
# known breakage:") line, so the k-th block is the k-th test of LOG that
# was not skipped.  With no failed test in LOG (a hang, a crash) the end
# of OUT is what there is.
failed_blocks() {
    awk -v out="$2" '
        FNR == NR {
            if ($0 !~ /^(not )?ok [0-9]+/) next
            n = ($1 == "not") ? $3 : $2
            if ($0 ~ /^ok [0-9]+ # skip/) next
            k++
            if ($1 == "not" && $0 !~ /# TODO/) failed[k] = n
            next
        }
        /^(expecting success|checking known breakage): / { b++ }
        b in failed { text[b] = text[b] $0 "\n" }
        END {
            for (i = 1; i <= b; i++) if (i in failed) {
                printf "--- %s: test %d, its commands and output\n", out, failed[i]
                # the last 80 lines of a long block
                m = split(text[i], l, "\n")
                for (j = (m > 81 ? m - 80 : 1); j < m; j++) print l[j]
                shown++
            }
            if (!shown) exit 1
        }' "$1" "$2" 2>/dev/null \
        || { echo "--- $2"; tail -60 "$2"; }
}

# run_suite NAME BUILDDIR [configure args...]
run_suite() {
    local name=$1 dir=$2; shift 2
    echo "=== $name: configure $* (at ${SECONDS}s)"
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && "$top/configure" -q "$@") || { echo "$name: configure failed"; return 1; }
    make -C "$dir" -j"$jobs" >"$dir/build.log" 2>&1 \
        || { tail -50 "$dir/build.log"; echo "$name: build failed"; return 1; }
    echo "=== $name: make check (at ${SECONDS}s)"
    make -C "$dir" -j"$jobs" check >"$dir/check.log" 2>&1
    local rc=$?
    grep -aE '^(PASS|FAIL|ERROR|XPASS|SKIP):' "$dir/check.log" | grep -v '^PASS' || true
    if [ $rc -ne 0 ]; then
        if ! grep -qlE ':test-result: (FAIL|ERROR|XPASS)' \
                $(find "$dir" -name '*.trs') /dev/null 2>/dev/null; then
            # no test failed: something did not build (counted as a failure)
            grep -aE 'error|\*\*\*' "$dir/check.log" | head -20
            broken=$((broken + 1))
        fi
        # show the logs of failed tests
        grep -lE ':test-result: (FAIL|ERROR|XPASS)' $(find "$dir" -name '*.trs') 2>/dev/null \
            | while read -r trs; do
                echo "--- ${trs%.trs}.log"; tail -20 "${trs%.trs}.log"
                # a test killed at its time bound says so on stderr, which
                # the TAP driver puts first in the log
                grep -a '^bounded-test.sh:' "${trs%.trs}.log"
                # a sharness test's output (t/sharness-setup.sh)
                if [ -f "${trs%.trs}.out" ]; then
                    failed_blocks "${trs%.trs}.log" "${trs%.trs}.out"
                fi
            done
        echo "$name: make check failed"
    fi
    return $rc
}

# code style: .clang-format is the rule (scripts/check-format.sh -i fixes)
fmt_pass=0 fmt_fail=0
if command -v clang-format >/dev/null; then
    echo "=== clang-format check"
    "$top/scripts/check-format.sh" >"$top/build/format.log" 2>&1 || status=1
    fmt_pass=$(grep -c '^ok' "$top/build/format.log")
    fmt_fail=$(grep -c '^not ok' "$top/build/format.log")
    grep '^not ok' "$top/build/format.log" || true
fi

run_suite "default build" "$top/build/ci" || status=1
if [ "${SKIP_ASAN:-}" != 1 ]; then
    # LeakSanitizer is on by default: every process is leak-checked at its
    # exit but the flux command and the tests' and benchmarks' helper
    # programs, which turn it off for themselves (__asan_default_options,
    # src/common/libutil/noleakcheck.h): it cost a third of the ASAN
    # suite's time.
    # ASAN_OPTIONS=detect_leaks=1 would check them too.
    # A freed block stays poisoned (its use reported) until 16 MB more
    # have been freed after it, not ASAN's 256 MB: a broker's freed
    # messages are reused sooner, and its pages are touched fewer times
    # (t2510 faulted 8% less and took 7% less CPU; a fault is costly on
    # this machine, bench/floors fault).  The caller's ASAN_OPTIONS win.
    caller_asan_options=${ASAN_OPTIONS-}
    export ASAN_OPTIONS="quarantine_size_mb=16${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    run_suite "ASAN build" "$top/build/ci-asan" \
        --enable-sanitizer=address,undefined || status=1
    ASAN_OPTIONS=$caller_asan_options
fi

# valgrind over the message/handle unit tests (the core of every message path)
vg_pass=0 vg_fail=0
if [ "${SKIP_VALGRIND:-}" != 1 ] && command -v valgrind >/dev/null; then
    echo "=== valgrind: libflux unit tests (at ${SECONDS}s)"
    for t in message future handle msgpipe; do
        if "$top/build/ci/libtool" --mode=execute valgrind -q \
               --leak-check=full --errors-for-leak-kinds=definite,indirect \
               --error-exitcode=99 "$top/build/ci/src/common/libflux/test/$t.t" \
               >"$top/build/ci/valgrind-$t.log" 2>&1; then
            vg_pass=$((vg_pass + 1))
        else
            echo "valgrind: $t.t failed"; tail -30 "$top/build/ci/valgrind-$t.log"
            vg_fail=$((vg_fail + 1)); status=1
        fi
    done
fi

fuzz_pass=0 fuzz_fail=0
if [ "$fuzz_seconds" -gt 0 ]; then
    echo "=== fuzz the message decoder, the broker router and the parsers for ${fuzz_seconds}s (at ${SECONDS}s)"
    # libFuzzer's progress lines go to a log; the end of it is shown on failure
    mkdir -p "$top/build/fuzz"
    if "$top/scripts/fuzz.sh" "$fuzz_seconds" "$top/build/fuzz" \
           >"$top/build/fuzz/fuzz.log" 2>&1; then
        fuzz_pass=1
        grep -E '^(Done [0-9]+ runs|fuzz\.sh:)' "$top/build/fuzz/fuzz.log"
    else
        fuzz_fail=1; status=1
        tail -60 "$top/build/fuzz/fuzz.log"
        echo "fuzz: failed (log: build/fuzz/fuzz.log)"
    fi
fi

pass=$(cat $(find "$top/build" -name '*.trs' 2>/dev/null) /dev/null \
       | grep -cE ':test-result: (PASS|XFAIL|SKIP)')
fail=$(cat $(find "$top/build" -name '*.trs' 2>/dev/null) /dev/null \
       | grep -cE ':test-result: (FAIL|ERROR|XPASS)')
pass=$((pass + fuzz_pass + vg_pass + fmt_pass))
fail=$((fail + fuzz_fail + vg_fail + fmt_fail + broken))
[ "$fail" -gt 0 ] && status=1
# the failures again, by name, just above the summary (a CI log's tail)
if [ "$status" -ne 0 ]; then
    echo "=== failures"
    grep -HE ':test-result: (FAIL|ERROR|XPASS)' $(find "$top/build" -name '*.trs') \
        /dev/null 2>/dev/null | sed -e "s|^$top/build/||" -e 's|\.trs:| |' | head -40
    grep '^not ok' "$top/build/format.log" 2>/dev/null || true
    [ "$vg_fail" -gt 0 ] && echo "valgrind: $vg_fail failed (above)"
    [ "$fuzz_fail" -gt 0 ] && echo "fuzz: failed (above)"
    [ "$broken" -gt 0 ] && echo "$broken suite(s) did not build (above)"
fi
echo "=== done in ${SECONDS}s"
echo "$pass passed, $fail failed"
exit $status
