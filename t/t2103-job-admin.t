#!/bin/sh
test_description='flux job last (job-manager.history.get), flux job purge,
flux job stats and flux jobs --stats-only on a whole instance with
simulated execution, across a restart of the instance'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

CRED="$FLUX_BUILD_DIR/t/rpc-cred"
SUBMIT="$FLUX_BUILD_DIR/t/jm-submit"
export FLUX_F58_FORCE_ASCII=1
STATE=$(pwd)/state
SIM="--setattr=system.exec.test.run_duration=0.01s"

# run CMD... in the instance with the statedir
# job-list learns of jobs from the job manager's journal, a moment after
# submit or cancel returns: the stats tests wait for it, within a bound.
inst () { timeout -k 10 300 flux start "-Sstatedir=$STATE" sh -c "$*"; }

test_expect_success 'flux job last with no job: history is empty' '
	mkdir state &&
	test_must_fail inst flux job last 2>empty.err &&
	grep "flux-job: job history is empty" empty.err
'
test_expect_success 'submit 6 jobs; flux job last gives the newest' '
	inst "flux submit --cc=1-6 $SIM true >ids && flux queue drain &&
		flux job last >last.out" &&
	test_line_count = 6 ids &&
	tail -n 1 ids >last.exp &&
	test_cmp last.exp last.out
'
test_expect_success 'flux job last N and slices, newest first' '
	inst "flux job last 3 >l3.out && flux job last [::-1] >all.out &&
		flux job last [-1:] >oldest.out && flux job last [1::2] >odd.out &&
		flux job last [:100] >many.out" &&
	tail -n 3 ids | tac >l3.exp && test_cmp l3.exp l3.out &&
	test_cmp ids all.out &&
	head -n 1 ids >oldest.exp && test_cmp oldest.exp oldest.out &&
	tac ids | sed -n "2p;4p;6p" >odd.exp && test_cmp odd.exp odd.out &&
	tac ids >many.exp && test_cmp many.exp many.out
'
test_expect_success 'flux job last: bad slices and empty selections' '
	test_must_fail inst flux job last [x] 2>bad.err &&
	grep "invalid slice: \[x\]" bad.err &&
	test_must_fail inst flux job last [::0] 2>zero.err &&
	grep "invalid slice" zero.err &&
	test_must_fail inst flux job last [6:] 2>none.err &&
	grep "no jobs in the slice \[6:\]" none.err &&
	test_must_fail inst flux job last 0 2>n0.err &&
	grep "N" n0.err &&
	test_must_fail inst flux job last 1 2 2>two.err &&
	grep "expected at most one" two.err &&
	flux job last --help | grep "Usage: flux job last"
'
test_expect_success 'history.get: a malformed request gets EPROTO' '
	test_must_fail inst "$CRED job-manager.history.get \"{}\"" 2>proto.err &&
	grep "malformed history.get request" proto.err &&
	test_must_fail inst "$CRED job-manager.history.get \"{\\\"slice\\\":1}\"" &&
	inst flux job last >/dev/null
'
test_expect_success 'after a restart of the instance the history is the same' '
	inst "flux job last [:] >restart.out" &&
	test_cmp many.exp restart.out
'
test_expect_success 'flux job purge counts without --force' '
	inst "flux job purge --num-limit=2 >count.out" &&
	echo "4 inactive jobs would be purged (use --force)" >count.exp &&
	test_cmp count.exp count.out &&
	inst "flux jobs -a -n | wc -l" >n.out && echo 6 >n.exp && test_cmp n.exp n.out
'
test_expect_success 'flux job purge --force, in batches; the history follows' '
	inst "flux job purge -f --num-limit=2 --batch=3 >purge.out &&
		flux job last [:] >after.out && flux job stats >stats.json" &&
	echo "purged 4 inactive jobs" >purge.exp &&
	test_cmp purge.exp purge.out &&
	head -n 2 many.exp >after.exp && test_cmp after.exp after.out &&
	jq -e ".inactive_purged == 4 and .job_states.inactive == 2" stats.json
'
test_expect_success 'flux job purge JOBID; an active job is refused' '
	inst "flux job purge -f \$(flux job last) >one.out &&
		flux job last >left.out &&
		id=\$(flux submit --urgency=hold $SIM true) &&
		! flux job purge -f \$id 2>active.err;
		flux cancel \$id && flux queue drain" &&
	echo "purged 1 inactive job" >one.exp && test_cmp one.exp one.out &&
	sed -n 2p many.exp >left.exp && test_cmp left.exp left.out &&
	grep "cannot purge an active job" active.err
'
test_expect_success 'flux job purge: usage errors' '
	test_must_fail inst flux job purge 2>u1.err &&
	grep "give --age-limit, --num-limit or JOBIDs" u1.err &&
	test_must_fail inst flux job purge --num-limit=1 f1 2>u2.err &&
	grep "not both" u2.err &&
	test_must_fail inst flux job purge --batch=0 --num-limit=1 2>u3.err &&
	grep "batch" u3.err &&
	test_must_fail inst flux job purge --age-limit=soon 2>u4.err &&
	grep "age-limit" u4.err &&
	test_must_fail inst flux job purge -f notanid 2>u5.err &&
	grep "invalid job id notanid" u5.err
'
test_expect_success 'flux job purge --age-limit' '
	inst "flux job purge --age-limit=1h >age1.out &&
		flux job purge -f --age-limit=0 >age0.out &&
		flux job last" >lastall.out 2>lastall.err;
	echo "0 inactive jobs would be purged (use --force)" >age1.exp &&
	test_cmp age1.exp age1.out &&
	echo "purged 2 inactive jobs" >age0.exp && test_cmp age0.exp age0.out &&
	grep "job history is empty" lastall.err
'
test_expect_success 'flux jobs --stats-only exits 0 while a job is active, else 1' '
	inst "id=\$(flux submit --urgency=hold $SIM true) &&
		n=0 && until flux jobs --stats-only >active.out; do
			test \$n -lt 300 || exit 1; n=\$((n+1)); sleep 0.1; done &&
		flux cancel \$id && flux queue drain &&
		n=0 && while flux jobs --stats-only >idle.out; do
			test \$n -lt 300 || exit 1; n=\$((n+1)); sleep 0.1; done" &&
	grep "^0 running, 0 completed, 0 failed, 0 canceled, 0 timeout, 1 pending" active.out &&
	grep "^0 running, 0 completed, 0 failed, 1 canceled, 0 timeout, 0 pending" idle.out
'
test_expect_success 'each user sees only their own jobs' '
	guest=$(($(id -u)+4242)) &&
	inst "$SUBMIT -n 2 -U $guest >gids && flux queue drain &&
		$CRED -u $guest -R 2 job-manager.history.get \"{\\\"slice\\\":\\\"[:]\\\"}\" >guest.json &&
		flux job last [:] >mine.out" &&
	jq -c .jobs guest.json >guest.out &&
	tac gids | jq -s -c . >guest.exp &&
	test_cmp guest.exp guest.out &&
	test_line_count = 1 mine.out &&
	FLUX_F58_FORCE_ASCII=1 flux job id --to=f58 $(head -n 1 gids) >g1 &&
	! grep -f g1 mine.out
'
test_expect_success 'purging most of 300 jobs leaves the newest in the history' '
	inst "flux submit --cc=1-300 $SIM true >ids300 && flux queue drain &&
		flux job purge -f --num-limit=10 --batch=1000 >p300.out &&
		flux job last [:] >last300.out &&
		flux submit $SIM true >>ids300 && flux queue drain &&
		flux job last 3 >new3.out" &&
	echo "purged 293 inactive jobs" >p300.exp && test_cmp p300.exp p300.out &&
	sed -n 291,300p ids300 | tac >last300.exp && test_cmp last300.exp last300.out &&
	tail -n 3 ids300 | tac >new3.exp && test_cmp new3.exp new3.out
'
test_done
