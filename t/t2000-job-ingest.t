#!/bin/sh
test_description='job-ingest: the jobspec corpus through the real module,
the KVS keys of a job, access checks (owner, preset and real guests),
malformed requests, a job manager that refuses, batching, ids across a
reload and on rank 1.  A fake job manager (t/module/fake-jm.c) stands in
for job-manager.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"
SUBMITREQ="$FLUX_BUILD_DIR/t/submitreq"
FAKEJM="$FLUX_BUILD_DIR/t/module/.libs/fake-jm.so"
CORPUS="$SHARNESS_TEST_SRCDIR/jobspec"
MODULES=content,content-sqlite@0,kvs,kvs-watch

# the key of job ID's entry NAME
jobkey () {
	echo "$(flux job id --to=kvs $1).$2"
}
# the number of jobs the fake job manager accepted
jm_count () {
	$RPC -r 0 job-manager.fake-jobs | jq .count
}

test_expect_success 'start 2 brokers with job-ingest and the fake job manager' '
	start_instance broker 2 -Sbroker.modules=$MODULES,job-ingest &&
	flux module load --name=job-manager $FAKEJM
'
test_expect_success 'job-ingest runs on rank 1 too' '
	for i in $(seq 100); do
		$RPC -r 1 job-ingest.stats-get >/dev/null 2>&1 && break
		sleep 0.1
	done &&
	$RPC -r 1 job-ingest.stats-get >stats1.json &&
	jq -e ".submitted == 0" stats1.json
'
test_expect_success 'a valid jobspec is accepted and its id printed in f58' '
	flux job submit $CORPUS/valid/slot-core.json >id &&
	grep -q "^[fƒ][1-9A-HJ-NP-Za-km-z]*$" id &&
	test $(jm_count) -eq 1
'
test_expect_success 'job.<id>.jobspec is the jobspec' '
	flux kvs get $(jobkey $(cat id) jobspec) | jq -S . >js.out &&
	jq -S . $CORPUS/valid/slot-core.json >js.exp &&
	test_cmp js.exp js.out
'
test_expect_success 'job.<id>.J is the jobspec signed none for our uid' '
	J=$(flux kvs get $(jobkey $(cat id) J)) &&
	echo "$J" | cut -d. -f3 >sig &&
	echo none >sig.exp && test_cmp sig.exp sig &&
	echo "$J" | cut -d. -f1 | base64 -d | tr "\\000" " " >hdr &&
	grep -q "version i1" hdr && grep -q "mechanism snone" hdr &&
	grep -q "userid i$(id -u)" hdr &&
	echo "$J" | cut -d. -f2 | base64 -d | jq -S . >payload &&
	test_cmp js.exp payload
'
test_expect_success 'job.<id>.eventlog holds the submit event' '
	flux kvs get -r $(jobkey $(cat id) eventlog) >eventlog &&
	test_line_count = 1 eventlog &&
	jq -e ".name == \"submit\" and .timestamp > 0" eventlog &&
	jq -c .context eventlog >context &&
	echo "{\"userid\":$(id -u),\"urgency\":16,\"flags\":0,\"version\":1}" \
		>context.exp &&
	test_cmp context.exp context
'
test_expect_success 'the job manager got {id, userid, urgency, t_submit, flags, jobspec}' '
	$RPC -r 0 job-manager.fake-jobs | jq -c ".jobs[-1]" >jmjob &&
	test $(jq .id jmjob) = $(flux job id --to=dec $(cat id)) &&
	jq -e ".userid == $(id -u) and .urgency == 16 and .flags == 0" jmjob &&
	test "$(jq .t_submit jmjob)" = "$(jq .timestamp eventlog)" &&
	jq -S .jobspec jmjob >jmjs && test_cmp js.exp jmjs
'
test_expect_success 'every valid jobspec of the corpus (JSON and YAML) is accepted' '
	n=0 &&
	for f in $CORPUS/valid/*.json $CORPUS/valid/*.yaml; do
		flux job submit $f >/dev/null || { echo "$f refused"; return 1; }
		n=$((n+1))
	done &&
	test $n -ge 5
'
test_expect_success 'every invalid jobspec of the corpus gets its one-line error' '
	n=0 &&
	for f in $CORPUS/invalid/*.json; do
		exp=$(cat ${f%.json}.err) &&
		test_must_fail flux job submit $f 2>err &&
		test_line_count = 1 err &&
		if ! grep -qF "$exp" err; then
			echo "$f: expected \"$exp\", got:"; cat err; return 1
		fi
		n=$((n+1))
	done &&
	test $n -ge 30
'
test_expect_success 'an invalid jobspec is refused with EINVAL and not stored' '
	before=$(jm_count) &&
	test_expect_code 22 $SUBMITREQ $CORPUS/invalid/version-2.json \
		2>einval.err &&
	grep "version 2 is not supported (only version 1)" einval.err &&
	test $(jm_count) -eq $before
'
test_expect_success 'urgency and flags are checked (owner)' '
	J=$CORPUS/valid/slot-core.json &&
	test_expect_code 22 $SUBMITREQ -u 32 $J 2>u32.err &&
	grep "urgency 32 is out of range (0-31)" u32.err &&
	test_expect_code 22 $SUBMITREQ -u -1 $J &&
	test_expect_code 71 $SUBMITREQ -f 1 $J 2>f1.err &&
	grep "unknown submit flags 0x1" f1.err &&
	test_expect_code 71 $SUBMITREQ -f 16 $J &&
	$SUBMITREQ -u 31 -f 4 $J >u31 &&
	$SUBMITREQ -u 0 -f 2 $J >u0 &&
	$RPC -r 0 job-manager.fake-jobs | jq -c ".jobs[-2:]|map([.urgency,.flags])" \
		>uf.out &&
	echo "[[31,4],[0,2]]" >uf.exp &&
	test_cmp uf.exp uf.out
'
test_expect_success 'NOVALIDATE lets the owner submit what does not validate' '
	echo "{\"version\":2}" >v2.json &&
	$SUBMITREQ -f 8 v2.json >nov &&
	flux kvs get $(jobkey $(cat nov) jobspec) >nov.js &&
	jq -e ".version == 2" nov.js &&
	test_expect_code 22 $SUBMITREQ -f 8 $CORPUS/invalid/bad-json.json
'
test_expect_success 'the signer must be the requester' '
	test_expect_code 1 $SUBMITREQ -s 4242 $CORPUS/valid/slot-core.json \
		2>signer.err &&
	grep "signer=4242 != requestor=$(id -u)" signer.err
'
test_expect_success 'J must be J' '
	echo "not.a.J.at.all" >bad.J &&
	test_expect_code 22 $SUBMITREQ -J bad.J 2>badJ.err &&
	grep "J has 5 parts, expected 3" badJ.err &&
	printf "%s" "dmVyc2lvbgBpMQBtZWNoYW5pc20Ac211bmdlAHVzZXJpZABpMAA=.e30=.x" \
		>munge.J &&
	test_expect_code 22 $SUBMITREQ -J munge.J 2>munge.err &&
	grep "J signature is not a MUNGE credential" munge.err &&
	printf "%s" "dmVyc2lvbgBpMQBtZWNoYW5pc20Ac2N1cnZlAHVzZXJpZABpMAA=.e30=.x" \
		>curve.J &&
	test_expect_code 22 $SUBMITREQ -J curve.J 2>curve.err &&
	grep "unknown mechanism curve" curve.err
'
test_expect_success 'a munge J is verified: a credential that does not decode is EPERM' '
	printf "%s" "dmVyc2lvbgBpMQBtZWNoYW5pc20Ac211bmdlAHVzZXJpZABpMAA=.e30=.MUNGE:AAAA:" \
		>badcred.J &&
	test_expect_code 1 $SUBMITREQ -J badcred.J 2>badcred.err &&
	grep "J signature: munge: " badcred.err
'
test_expect_success 'guests (preset credentials): mechanism none is the owner'"'"'s' '
	J=$CORPUS/valid/slot-core.json &&
	test_expect_code 1 $SUBMITREQ -g 4242 $J 2>g.err &&
	grep "only the instance owner may submit with signing mechanism none" \
		g.err &&
	test_expect_code 22 $SUBMITREQ -g 4242 -u 17 $J 2>g17.err &&
	grep "only the instance owner may use urgency > 16" g17.err &&
	test_expect_code 22 $SUBMITREQ -g 4242 -f 4 $J 2>gw.err &&
	grep "waitable" gw.err &&
	test_expect_code 1 $SUBMITREQ -g 4242 -f 8 $J 2>gn.err &&
	grep "skip validation" gn.err &&
	test_expect_code 1 $SUBMITREQ -g 4242 -s 4343 $J 2>gs.err &&
	grep "signer=4343 != requestor=4242" gs.err
'
test_expect_success 'malformed requests get EPROTO and job-ingest keeps serving' '
	for p in "{}" "[]" "{\"J\":1,\"urgency\":16,\"flags\":0}" \
	    "{\"J\":\"x\",\"urgency\":16}" \
	    "{\"J\":\"x\",\"urgency\":16,\"flags\":0,\"jobs\":[]}"; do
		test_expect_code 71 $RPC job-ingest.submit "$p" 2>proto.err ||
			return 1
	done &&
	test_expect_code 71 $RPC job-ingest.submit &&
	flux job submit $CORPUS/valid/slot-core.json >/dev/null
'
test_expect_success 'a refusal by the job manager reaches the submitter, nothing is left in the KVS' '
	flux kvs ls -R job | grep -c "eventlog" >keys.before || true &&
	$RPC -r 0 job-manager.fake-reject \
		"{\"errnum\":1,\"text\":\"the queue is closed\"}" &&
	test_must_fail flux job submit $CORPUS/valid/slot-core.json 2>rej.err &&
	grep "the queue is closed" rej.err &&
	$RPC -r 0 job-manager.fake-reject "{\"errnum\":0}" &&
	flux kvs ls -R job | grep -c "eventlog" >keys.after || true &&
	test_cmp keys.before keys.after
'
test_expect_success 'ids go on increasing after job-ingest is reloaded' '
	last=$(flux job submit $CORPUS/valid/slot-core.json) &&
	flux module remove job-ingest &&
	flux module load job-ingest &&
	next=$(flux job submit $CORPUS/valid/slot-core.json) &&
	test $(flux job id $next) -gt $(flux job id $last)
'
test_expect_success 'rank 1 assigns ids with generator id 1' '
	id1=$($SUBMITREQ -r 1 $CORPUS/valid/slot-core.json) &&
	test $(( (id1 >> 10) & 16383 )) -eq 1 &&
	id0=$($SUBMITREQ -r 0 $CORPUS/valid/slot-core.json) &&
	test $(( (id0 >> 10) & 16383 )) -eq 0 &&
	flux kvs get $(jobkey $id1 eventlog) | jq -e ".name == \"submit\""
'
test_expect_success 'many jobs at once are batched' '
	flux module remove job-ingest &&
	flux module load job-ingest &&
	before=$(jm_count) &&
	flux submit --cc=1-300 --quiet true &&
	test $(jm_count) -eq $((before + 300)) &&
	$RPC job-ingest.stats-get >stats.json &&
	jq -e ".submitted == 300 and .batches < 300 and .max_batch > 1" \
		stats.json
'
test_expect_success 'with the kvs gone a submission waits kvs-wait, then fails clearly' '
	flux module reload job-ingest kvs-wait=1s &&
	flux module remove kvs &&
	t0=$(date +%s%N) &&
	test_must_fail flux job submit $CORPUS/valid/slot-core.json 2>gone.err &&
	ms=$(( ($(date +%s%N) - t0) / 1000000 )) &&
	test $ms -ge 900 && test $ms -lt 10000 &&
	grep "the kvs is not loaded (waited 1s for it)" gone.err
'
test_expect_success 'a submission made while the kvs is away goes through when it is back' '
	flux job submit $CORPUS/valid/slot-core.json >late.id 2>late.err &
	pid=$! &&
	sleep 0.3 &&
	flux module load kvs &&
	wait $pid &&
	flux kvs get $(jobkey $(cat late.id) eventlog) | jq -e ".name == \"submit\""
'
test_expect_success 'a bad kvs-wait fails the load, and says why in the log' '
	test_must_fail flux module reload job-ingest kvs-wait=soon 2>bad.err &&
	grep "Invalid argument (see flux dmesg)" bad.err &&
	flux dmesg | grep "job-ingest.*invalid argument: kvs-wait=soon" &&
	flux module load job-ingest
'
test_expect_success 'the instance shuts down cleanly' '
	stop_instance broker
'
test_expect_success 'a real guest (uid 65534) cannot submit with mechanism none' '
	cat >guest.sh <<-EOT &&
	chmod 755 \$(flux getattr rundir) || exit 1
	flux module load --name=job-manager $FAKEJM || exit 1
	flux module load job-ingest || exit 1
	G="setpriv --reuid=65534 --regid=65534 --clear-groups"
	\$G $SUBMITREQ $CORPUS/valid/slot-core.json; echo "none \$?"
	\$G $SUBMITREQ -u 17 $CORPUS/valid/slot-core.json; echo "urgency \$?"
	FLUX_MUNGE_SOCKET=/nonexistent/munge.socket \
		\$G flux job submit <$CORPUS/valid/slot-core.json; echo "munge \$?"
	flux job submit <$CORPUS/valid/slot-core.json >/dev/null; echo "owner \$?"
	EOT
	flux start -Saccess.allow-guest-user=true -Sbroker.modules=$MODULES \
		sh guest.sh >guest.out 2>guest.err &&
	printf "none 1\nurgency 22\nmunge 1\nowner 0\n" >guest.exp &&
	test_cmp guest.exp guest.out &&
	grep "only the instance owner may submit with signing mechanism none" \
		guest.err &&
	grep "only the instance owner may use urgency > 16" guest.err &&
	grep "munge: .*nonexistent" guest.err
'
test_done
