#!/bin/sh
test_description='flux submit: options to jobspec (--dry-run), --cc and
--bcc, ids in f58, urgency and flags reaching the job manager, --wait on
the eventlog; flux job submit (JSON, YAML, stdin); flux job id
conversions.  A fake job manager (t/module/fake-jm.c) stands in for
job-manager.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"
FAKEJM="$FLUX_BUILD_DIR/t/module/.libs/fake-jm.so"
CORPUS="$SHARNESS_TEST_SRCDIR/jobspec"
# job-info: flux submit --wait follows jobs through job-info.eventlog-watch
MODULES=content,content-sqlite@0,kvs,kvs-watch,job-ingest,job-info

# dry run with the given options, print the jobspec through jq FILTER
dry () {
	filter=$1; shift
	flux submit --dry-run "$@" | jq -c "$filter"
}
last_jobs () {
	$RPC job-manager.fake-jobs | jq -c ".jobs[-$1:]"
}

test_expect_success 'dry run: one task of one core, duration 0, cwd, environment' '
	dry . hostname >js &&
	jq -e ".version == 1" js &&
	jq -c .resources js >res &&
	echo "[{\"type\":\"slot\",\"count\":1,\"with\":[{\"type\":\"core\",\"count\":1}],\"label\":\"task\"}]" >res.exp &&
	test_cmp res.exp res &&
	jq -c .tasks js >tasks &&
	echo "[{\"command\":[\"hostname\"],\"slot\":\"task\",\"count\":{\"per_slot\":1}}]" >tasks.exp &&
	test_cmp tasks.exp tasks &&
	jq -e ".attributes.system.duration == 0" js &&
	test "$(jq -r .attributes.system.cwd js)" = "$(pwd)" &&
	test "$(jq -r .attributes.system.environment.HOME js)" = "$HOME"
'
test_expect_success 'dry run: -n -N -c -g -x shapes' '
	dry ".resources" -n4 -c2 -g1 true >r1 &&
	echo "[{\"type\":\"slot\",\"count\":4,\"with\":[{\"type\":\"core\",\"count\":2},{\"type\":\"gpu\",\"count\":1}],\"label\":\"task\"}]" >r1.exp &&
	test_cmp r1.exp r1 &&
	dry "[.resources[0].type,.resources[0].count,.resources[0].with[0].count,.tasks[0].count]" \
		-N2 -n4 true >r2 &&
	echo "[\"node\",2,2,{\"per_slot\":1}]" >r2.exp && test_cmp r2.exp r2 &&
	dry "[.resources[0].with[0].count,.tasks[0].count]" -N2 -n3 true >r3 &&
	echo "[2,{\"total\":3}]" >r3.exp && test_cmp r3.exp r3 &&
	dry "[.resources[0].count,.resources[0].exclusive,.tasks[0].count]" \
		-N3 -x true >r4 &&
	echo "[3,true,{\"per_slot\":1}]" >r4.exp && test_cmp r4.exp r4
'
test_expect_success 'dry run: bad shapes are usage errors' '
	test_must_fail flux submit --dry-run -x true 2>x.err &&
	grep "exclusive requires --nodes" x.err &&
	test_must_fail flux submit --dry-run -N3 -n2 true 2>n.err &&
	grep "nodes=3 is more than --ntasks=2" n.err &&
	test_must_fail flux submit --dry-run -n0 true &&
	test_must_fail flux submit --dry-run --urgency=32 true &&
	test_must_fail flux submit --dry-run 2>cmd.err &&
	grep "missing COMMAND" cmd.err &&
	test_must_fail flux submit --dry-run --flags=bogus true &&
	test_must_fail flux submit --dry-run --cc=3-1 true &&
	test_must_fail flux submit --dry-run -t 5x true
'
test_expect_success 'dry run: -t is minutes or an FSD' '
	test $(dry .attributes.system.duration -t 5 true) = 300 &&
	test $(dry .attributes.system.duration -t 30s true) = 30 &&
	test $(dry .attributes.system.duration --time-limit=1.5h true) = 5400
'
test_expect_success 'dry run: --setattr and --setopt' '
	dry ".attributes" \
		--setattr=system.exec.test.run_duration=0.01s \
		-S user.list=[1,2] -S foo=1 -S .system.bar=\"s\" -S flag \
		-S "user.word=hello world" -o verbose -o rlimit=\"x\" true \
		>attrs &&
	jq -e ".system.exec.test.run_duration == \"0.01s\"" attrs &&
	jq -e ".user.list == [1,2] and .user.word == \"hello world\"" attrs &&
	jq -e ".system.foo == 1 and .system.bar == \"s\" and .system.flag == 1" attrs &&
	jq -e ".system.shell.options == {\"verbose\":1,\"rlimit\":\"x\"}" attrs &&
	test_must_fail flux submit --dry-run -S system.duration.x=1 true
'
test_expect_success 'dry run: --env rules, --cwd, --job-name, --dependency' '
	FOO=1 FOOBAR=2 BAZ=3 dry .attributes.system \
		--env=-* --env=FOO* --env=-FOOBAR --env=X=y \
		--cwd=/tmp --job-name=myjob \
		--dependency=afterok:f1 --dependency="string:foo?type=out&scope=user" \
		true >sys &&
	jq -e ".environment == {\"FOO\":\"1\",\"X\":\"y\"}" sys &&
	jq -e ".cwd == \"/tmp\" and .job.name == \"myjob\"" sys &&
	jq -c .dependencies sys >deps &&
	echo "[{\"scheme\":\"afterok\",\"value\":\"f1\"},{\"scheme\":\"string\",\"value\":\"foo\",\"type\":\"out\",\"scope\":\"user\"}]" >deps.exp &&
	test_cmp deps.exp deps &&
	BAZ=3 dry .attributes.system.environment.BAZ --env-remove=BAZ true >baz &&
	echo null >baz.exp && test_cmp baz.exp baz &&
	test_must_fail flux submit --dry-run --dependency=afterok true &&
	test_must_fail flux submit --dry-run --dependency=afterok: true
'
test_expect_success 'dry run: --cc substitutes {cc}, --bcc does not' '
	flux submit --dry-run --cc=1-3,7 echo {cc} x{cc}y | \
		jq -c .tasks[0].command >cc.out &&
	cat >cc.exp <<-EOF &&
	["echo","1","x1y"]
	["echo","2","x2y"]
	["echo","3","x3y"]
	["echo","7","x7y"]
	EOF
	test_cmp cc.exp cc.out &&
	flux submit --dry-run --bcc=1-2 echo {cc} | jq -c .tasks[0].command \
		>bcc.out &&
	printf "[\"echo\",\"{cc}\"]\n[\"echo\",\"{cc}\"]\n" >bcc.exp &&
	test_cmp bcc.exp bcc.out &&
	flux submit --dry-run --cc=1-3 echo {cc} >cc3.out &&
	test $(jq -c "del(.tasks[0].command)" cc3.out | sort -u | wc -l) -eq 1 &&
	flux submit --dry-run --cc=1-3 echo plain | sort -u >plain.out &&
	test $(wc -l <plain.out) -eq 1 &&
	jq -e ".tasks[0].command == [\"echo\", \"plain\"]" plain.out
'
test_expect_success 'start an instance with job-ingest and the fake job manager' '
	start_instance broker 1 -Sbroker.modules=$MODULES &&
	flux module load --name=job-manager $FAKEJM
'
test_expect_success 'flux submit prints the id in f58; the jobspec is stored' '
	flux submit -n2 --setattr=system.exec.test.run_duration=0.01s \
		hostname >id &&
	test_line_count = 1 id &&
	grep -q "^f[1-9A-HJ-NP-Za-km-z]*$" id &&
	flux kvs get $(flux job id --to=kvs $(cat id)).jobspec >js &&
	jq -e ".resources[0].count == 2" js &&
	jq -e ".attributes.system.exec.test.run_duration == \"0.01s\"" js
'
test_expect_success 'under a UTF-8 locale ids print with U+0192' '
	if locale -a 2>/dev/null | grep -qi "^c.utf-\?8$"; then
		LC_ALL=C.UTF-8 flux submit true >idu &&
		grep -q "^ƒ" idu &&
		LC_ALL=C.UTF-8 FLUX_F58_FORCE_ASCII=1 flux submit true >ida &&
		grep -q "^f" ida
	fi
'
test_expect_success 'urgency and flags reach the job manager' '
	flux submit --urgency=0 --flags=waitable,debug true >/dev/null &&
	last_jobs 1 | jq -c ".[]|[.urgency,.flags]" >uf &&
	echo "[0,6]" >uf.exp &&
	test_cmp uf.exp uf
'
test_expect_success '--urgency takes the names hold, default and expedite' '
	for u in hold default EXPEDITE; do
		flux submit --urgency=$u true >/dev/null &&
		last_jobs 1 | jq -c ".[]|.urgency" >>un || return 1
	done &&
	printf "0\n16\n31\n" >un.exp &&
	test_cmp un.exp un &&
	test_must_fail flux submit --urgency=soon true 2>un.err &&
	grep "urgency" un.err
'
test_expect_success 'a refused job: error on stderr, exit 1' '
	test_must_fail flux submit -S duration=-1 true 2>neg.err &&
	grep "attributes.system.duration must be a number >= 0" neg.err
'
test_expect_success '--cc=1-10 submits 10 jobs, ids in order, with {cc}' '
	flux submit --cc=1-10 echo {cc} >cc.ids &&
	test_line_count = 10 cc.ids &&
	flux job id <cc.ids >cc.dec &&
	sort -n cc.dec | uniq >cc.sorted &&
	test_cmp cc.dec cc.sorted &&
	last_jobs 10 | jq -c ".[]|.jobspec.tasks[0].command[1]" | tr -d "\"" \
		>cc.args &&
	seq 1 10 >cc.args.exp &&
	test_cmp cc.args.exp cc.args
'
test_expect_success '--quiet prints nothing; 1000 jobs with --cc' '
	flux submit --quiet --cc=1-1000 true >quiet.out &&
	test_must_be_empty quiet.out &&
	test $($RPC job-manager.fake-jobs | jq .count) -ge 1000
'
test_expect_success '--wait waits for the clean event and exits with the exit code' '
	rm -f wait.id &&
	{ flux submit --wait true >wait.id; echo $? >wait.rc; } &
	for i in $(seq 100); do test -s wait.id && break; sleep 0.1; done &&
	key=$(flux job id --to=kvs $(cat wait.id)).eventlog &&
	sleep 0.2 &&
	test ! -e wait.rc &&
	flux kvs eventlog append $key start "{}" &&
	flux kvs eventlog append $key finish "{\"status\":768}" &&
	flux kvs eventlog append $key clean &&
	for i in $(seq 100); do test -s wait.rc && break; sleep 0.1; done &&
	echo 3 >wait.rc.exp &&
	test_cmp wait.rc.exp wait.rc
'
test_expect_success '--wait: a signaled job exits 128+signal, the highest wins' '
	rm -f w2.ids w2.rc &&
	{ flux submit --wait --cc=1-2 true >w2.ids; echo $? >w2.rc; } &
	for i in $(seq 100); do test $(wc -l <w2.ids) -eq 2 && break; sleep 0.1; done &&
	k1=$(flux job id --to=kvs $(head -1 w2.ids)).eventlog &&
	k2=$(flux job id --to=kvs $(tail -1 w2.ids)).eventlog &&
	flux kvs eventlog append $k1 finish "{\"status\":9}" &&
	flux kvs eventlog append $k1 clean &&
	flux kvs eventlog append $k2 finish "{\"status\":256}" &&
	flux kvs eventlog append $k2 clean &&
	for i in $(seq 100); do test -s w2.rc && break; sleep 0.1; done &&
	echo 137 >w2.rc.exp &&
	test_cmp w2.rc.exp w2.rc
'
test_expect_success 'flux job submit: JSON file, YAML on stdin, --urgency, --flags' '
	flux job submit $CORPUS/valid/slot-core.json >j1 &&
	flux job submit --urgency=3 --flags=waitable <$CORPUS/valid/example1.yaml \
		>j2 &&
	last_jobs 1 | jq -c ".[]|[.urgency,.flags,.jobspec.resources[0].count]" \
		>j2.out &&
	echo "[3,4,4]" >j2.exp && test_cmp j2.exp j2.out &&
	test_must_fail flux job submit nosuchfile 2>nf.err &&
	grep nosuchfile nf.err &&
	echo "a: [1" | test_must_fail flux job submit 2>y.err &&
	grep "YAML:" y.err
'
test_expect_success 'flux job id: every form, stdin, errors' '
	for form in 6731191091817518 0x17e9fb8df16c2e 0017.e9fb.8df1.6c2e \
	    job.0017.e9fb.8df1.6c2e fuZZybuNNy ƒuZZybuNNy; do
		test $(flux job id $form) = 6731191091817518 || return 1
	done &&
	cat >forms.exp <<-EOF &&
	6731191091817518
	0x17e9fb8df16c2e
	0017.e9fb.8df1.6c2e
	job.0017.e9fb.8df1.6c2e
	fuZZybuNNy
	EOF
	for to in dec hex dothex kvs f58plain; do
		flux job id --to=$to fuZZybuNNy || return 1
	done >forms.out &&
	test_cmp forms.exp forms.out &&
	FLUX_F58_FORCE_ASCII=1 flux job id --to=f58 6731191091817518 >f58 &&
	echo fuZZybuNNy >f58.exp && test_cmp f58.exp f58 &&
	printf "0x1\n2\n" | flux job id --to=f58plain >stdin.out &&
	printf "f2\nf3\n" >stdin.exp && test_cmp stdin.exp stdin.out &&
	test_must_fail flux job id notanid 2>bad.err &&
	grep "invalid job id" bad.err &&
	test_must_fail flux job id --to=words 1
'
test_expect_success 'the instance shuts down cleanly' '
	stop_instance broker
'
test_done
