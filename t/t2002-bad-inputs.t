#!/bin/sh
test_description='inputs that cannot be honoured are refused at once: a
duration past any timer, a jobspec past the size limit, a field width of
flux jobs that would write gigabytes'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"
# AddressSanitizer keeps freed memory in quarantine: the broker's RSS
# after a refused 10 MB message says nothing there, so it is not bounded.
if ldd "$(command -v flux-broker)" 2>/dev/null | grep -q libasan; then
	test_set_prereq SANITIZER
fi

FAKEJM="$FLUX_BUILD_DIR/t/module/.libs/fake-jm.so"
MODULES=content,content-sqlite@0,kvs,kvs-watch,job-ingest

test_expect_success 'start an instance with job-ingest and the fake job manager' '
	start_instance broker 1 -Sbroker.modules=$MODULES &&
	flux module load --name=job-manager $FAKEJM
'
test_expect_success 'a duration of 1e308 is refused at submit' '
	flux submit --dry-run true >js.json &&
	jq ".attributes.system.duration = 1e308" js.json >big-duration.json &&
	test_must_fail flux job submit big-duration.json 2>dur.err &&
	cat dur.err &&
	grep "duration must be at most 1e+09" dur.err
'
test_expect_success 'a duration of 1e9 s (about 31 years) is accepted' '
	jq ".attributes.system.duration = 1e9" js.json >ok-duration.json &&
	flux job submit ok-duration.json
'
test_expect_success 'a 10 MB jobspec is refused, with the limit in the message' '
	python3 -c "import json,sys; js=json.load(open(\"js.json\")); \
js[\"attributes\"][\"user\"]={\"pad\": \"x\" * (10*1024*1024)}; \
json.dump(js, open(\"big.json\", \"w\"))" &&
	pid=$(flux getattr broker.pid) &&
	rss0=$(awk "/^VmRSS/ {print \$2}" /proc/$pid/status) &&
	test_must_fail flux job submit big.json 2>big.err &&
	rss1=$(awk "/^VmRSS/ {print \$2}" /proc/$pid/status) &&
	echo "broker RSS: $rss0 kB before, $rss1 kB after" &&
	cat big.err &&
	grep "jobspec is 104[0-9]* bytes, above the limit of 2097152" big.err &&
	{ test $((rss1 - rss0)) -lt 60000 || test_have_prereq SANITIZER; }
'
test_expect_success 'the limit is job-ingest max-jobspec-size' '
	flux module reload job-ingest max-jobspec-size=100 &&
	test_must_fail flux job submit js.json 2>small.err &&
	grep "above the limit of 100 (job-ingest max-jobspec-size)" small.err &&
	flux module reload job-ingest max-jobspec-size=20000000 &&
	flux job submit big.json &&
	test_must_fail flux module reload job-ingest max-jobspec-size=0 &&
	flux module reload -f job-ingest
'
test_expect_success 'flux jobs: a field width above 1000 is refused' '
	test_must_fail flux jobs -o "{id:>99999999999}" 2>width.err &&
	cat width.err &&
	grep "field width 99999999999 is above 1000" width.err
'
test_expect_success 'stop the instance' '
	stop_instance broker
'
test_done
