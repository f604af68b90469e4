#!/bin/sh
test_description='the submission options flux-core users expect, end to
end in 4 brokers: --rlimit (the submitter'"'"'s resource limits reach the
tasks), --taskmap, --tasks-per-node, --signal, -u, --begin-time, --env
expansion, --env-file, --add-file, flux submit --wait-event, flux job
taskmap; and the shell'"'"'s warnings reach flux run through the output
eventlog.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

T="timeout -k 10 120"
# nodes: "TASK: RANK" lines (flux run -l ... flux getattr rank) on stdin,
# sorted by task, with each broker rank replaced by its index among the
# job's ranks (the scheduler may give a job any free ranks)
nodes () {
	sort -n | awk -F": " "{ t[NR] = \$1; r[NR] = \$2; seen[\$2] = 1 }
		END { n = 0; for (k in seen) ranks[n++] = k + 0;
		      for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
			if (ranks[j] < ranks[i]) { x = ranks[i]; ranks[i] = ranks[j]; ranks[j] = x }
		      for (i = 0; i < n; i++) idx[ranks[i]] = i;
		      for (i = 1; i <= NR; i++) print t[i] \": \" idx[r[i] + 0] }"
}
# dry JQ ARGS...: flux submit --dry-run ARGS, filtered by jq -c JQ
dry () {
	filter=$1; shift
	flux submit --dry-run "$@" | jq -c "$filter"
}

test_expect_success 'dry run: the soft limits go with the job, but the system ones' '
	(ulimit -S -n 321 && dry .attributes.system.shell.options.rlimit true) >rl &&
	jq -e ".nofile == 321" rl &&
	jq -e ".stack != null and .core != null and .nproc != null" rl &&
	jq -e ".memlock == null and .nice == null and .rtprio == null" rl &&
	jq -e ".msgqueue == null and .rttime == null and .sigpending == null" rl
'
test_expect_success 'dry run: --rlimit rules, in order, comma-separated' '
	dry .attributes.system.shell.options.rlimit \
		--rlimit=-nofile,core=0 --rlimit=memlock --rlimit=cpu=unlimited \
		true >rl2 &&
	jq -e ".nofile == null and .core == 0 and .memlock != null" rl2 &&
	jq -e ".cpu == -1" rl2 &&
	dry .attributes.system.shell.options.rlimit --rlimit=-s* true >rl3 &&
	jq -e ".stack == null and .nofile != null" rl3 &&
	dry .attributes.system.shell --rlimit=-* true >rl4 &&
	test "$(cat rl4)" = null
'
test_expect_success 'dry run: bad --rlimit rules are usage errors' '
	test_must_fail flux submit --dry-run --rlimit=bogus true 2>rle1 &&
	grep "no limit matches" rle1 &&
	test_must_fail flux submit --dry-run --rlimit=bogus=1 true 2>rle2 &&
	grep "unknown limit" rle2 &&
	test_must_fail flux submit --dry-run --rlimit=nofile=lots true 2>rle3 &&
	grep "a number or unlimited" rle3
'
test_expect_success 'dry run: --taskmap sets the shell option, --tasks-per-node the shape' '
	dry .attributes.system.shell.options.taskmap --taskmap=cyclic true >tm1 &&
	test "$(cat tm1)" = "{\"scheme\":\"cyclic\"}" &&
	dry .attributes.system.shell.options.taskmap --taskmap=cyclic:2 true >tm2 &&
	test "$(cat tm2)" = "{\"scheme\":\"cyclic\",\"value\":\"2\"}" &&
	dry "[.resources[0].type,.resources[0].count,.resources[0].with[0].count,.tasks[0].count]" \
		-N3 --tasks-per-node=2 true >tpn &&
	test "$(cat tpn)" = "[\"node\",3,2,{\"per_slot\":1}]" &&
	test_must_fail flux submit --dry-run --taskmap=hostfile true 2>tme &&
	grep "block, cyclic or manual" tme &&
	test_must_fail flux submit --dry-run --tasks-per-node=2 true 2>tpe1 &&
	grep "requires --nodes" tpe1 &&
	test_must_fail flux submit --dry-run -N2 -n4 --tasks-per-node=2 true \
		2>tpe2 &&
	grep "not both" tpe2
'
test_expect_success 'dry run: --signal=[SIG][@TIME], defaults SIGUSR1 and 60s' '
	dry .attributes.system.shell.options.signal --signal=USR2@2m true >s1 &&
	jq -e ".signum == 12 and .timeleft == 120" s1 &&
	dry .attributes.system.shell.options.signal --signal=@5 true >s2 &&
	jq -e ".signum == 10 and .timeleft == 5" s2 &&
	dry .attributes.system.shell.options.signal --signal=SIGTERM true >s3 &&
	jq -e ".signum == 15 and .timeleft == 60" s3 &&
	test_must_fail flux submit --dry-run --signal=FOO true 2>se1 &&
	grep "invalid signal" se1 &&
	test_must_fail flux submit --dry-run --signal=@soon true 2>se2 &&
	grep "not a duration" se2
'
test_expect_success 'dry run: --begin-time forms give a begin-time dependency' '
	now=$(date +%s) &&
	dry ".attributes.system.dependencies[0]" --begin-time=+1h true >b1 &&
	jq -e ".scheme == \"begin-time\"" b1 &&
	v=$(jq -r .value b1) &&
	test ${v%.*} -ge $((now + 3600)) && test ${v%.*} -le $((now + 3602)) &&
	dry ".attributes.system.dependencies[0].value" --begin-time=@1234.5 true \
		>b2 &&
	test "$(cat b2)" = "\"1234.500000\"" &&
	exp=$(date -d "2031-02-03 04:05:06" +%s) &&
	dry ".attributes.system.dependencies[0].value" \
		--begin-time="2031-02-03 04:05:06" true >b3 &&
	test "$(cat b3)" = "\"$exp.000000\"" &&
	dry ".attributes.system.dependencies[0].value" --begin-time=23:59:59 \
		true >b4 &&
	v=$(jq -r . b4) && test ${v%.*} -ge $now &&
	test ${v%.*} -le $((now + 86400)) &&
	test_must_fail flux submit --dry-run --begin-time=someday true 2>be &&
	grep "expected +DURATION" be
'
test_expect_success 'dry run: --env expands $VAR and ${VAR}, $$ is a dollar' '
	X=outer dry .attributes.system.environment \
		--env="A=1" --env="B=\${A}2" --env="C=\$X/\$B" --env="D=\$\$5" \
		true >env1 &&
	jq -e ".A == \"1\" and .B == \"12\" and .C == \"outer/12\"" env1 &&
	jq -e ".D == \"\$5\"" env1 &&
	test_must_fail flux submit --dry-run --env="E=\$NOT_SET_ANYWHERE" true \
		2>env1.err &&
	grep "variable NOT_SET_ANYWHERE is not set" env1.err &&
	test_must_fail flux submit --dry-run --env="E=\${A" true 2>env2.err &&
	grep "must start" env2.err
'
test_expect_success 'dry run: --env-file applies the rules of a file in order' '
	printf "# a comment\nF1=one\n\n  F2=\${F1}two  \n-HOME\n" >rules &&
	dry .attributes.system.environment --env=HOME=x --env-file=rules \
		--env=F3=\$F2 true >env2 &&
	jq -e ".F1 == \"one\" and .F2 == \"onetwo\" and .F3 == \"onetwo\"" env2 &&
	jq -e ".HOME == null" env2 &&
	test_must_fail flux submit --dry-run --env-file=nosuchfile true 2>ef.err &&
	grep "nosuchfile: No such file" ef.err &&
	echo "^self" >self &&
	test_must_fail flux submit --dry-run --env-file=self true 2>self.err &&
	grep "nested too deep" self.err
'
test_expect_success 'dry run: --add-file stores files, text or base64, with their mode' '
	printf "hello\n" >a.txt && chmod 640 a.txt &&
	printf "\377\376\000x" >b.bin &&
	dry .attributes.system.files --add-file=a.txt --add-file=bin=b.bin \
		--add-file="inline=l1
l2" true >files.json &&
	jq -e ".\"a.txt\" == {\"data\":\"hello\n\",\"mode\":416,\"encoding\":\"utf-8\"}" files.json &&
	jq -e ".bin.encoding == \"base64\" and .bin.data == \"//4AeA==\"" files.json &&
	jq -e ".inline == {\"data\":\"l1\nl2\",\"mode\":384,\"encoding\":\"utf-8\"}" files.json &&
	test_must_fail flux submit --dry-run --add-file=script=a.txt true 2>af1 &&
	grep "reserved" af1 &&
	test_must_fail flux submit --dry-run --add-file=a.txt --add-file=a.txt \
		true 2>af2 &&
	grep "added twice" af2 &&
	test_must_fail flux submit --dry-run --add-file=nosuch true 2>af3 &&
	grep "nosuch: No such file" af3 &&
	test_must_fail flux submit --dry-run --add-file=. true 2>af4 &&
	grep "not a file name\|not a regular file" af4 &&
	mkfifo fifo &&
	test_must_fail timeout 10 flux submit --dry-run --add-file=fifo true \
		2>af5 &&
	grep "fifo: not a regular file" af5
'
test_expect_success 'start an instance of 4 brokers' '
	start_instance four 4 &&
	test "$(flux resource list -n -o "{nnodes}" -s free)" = 4
'
test_expect_success 'the tasks get the limits of the submitter, not of the broker' '
	pid=$(flux getattr broker.pid) &&
	grep "Max open files" /proc/$pid/limits >broker.limits &&
	(ulimit -S -n 123 && ulimit -S -c 0 &&
	 $T flux run -N2 -n2 sh -c "ulimit -S -n; ulimit -S -c") >lim.out &&
	test "$(sort -u lim.out | tr "\n" " ")" = "0 123 " &&
	test_must_fail grep -w 123 broker.limits
'
test_expect_success '--rlimit=-nofile leaves the broker'"'"'s, NAME=VALUE sets one' '
	broker_nofile=$(flux exec -r 0 sh -c "ulimit -S -n") &&
	(ulimit -S -n 123 && $T flux run --rlimit=-nofile sh -c "ulimit -S -n") \
		>keep.out &&
	test "$(cat keep.out)" = "$broker_nofile" &&
	$T flux run --rlimit=nofile=77 sh -c "ulimit -S -n" >set.out &&
	test "$(cat set.out)" = 77
'
test_expect_success 'the limits bind the tasks, not the shell: nofile=8 with 4 tasks' '
	$T flux run -n4 --rlimit=nofile=8 sh -c "ulimit -S -n" >small.out &&
	test "$(sort -u small.out)" = 8
'
test_expect_success 'a limit over the hard limit is clamped, and flux run says so' '
	hard=$(ulimit -H -n) &&
	test "$hard" != unlimited &&
	$T flux run -N2 -n2 --rlimit=nofile=$((hard + 1000)) sh -c "ulimit -S -n" \
		>over.out 2>over.err &&
	test "$(sort -u over.out)" = "$hard" &&
	cat over.err &&
	grep "flux-shell\[0\]: .*WARN: rlimit: nofile: limited to the hard limit $hard" over.err &&
	grep "flux-shell\[1\]: .*WARN: rlimit: nofile: limited to the hard limit $hard" over.err &&
	id=$(flux job last) &&
	flux job eventlog -p output $id | grep "log rank=0 level=4" &&
	flux job eventlog -p exec $id | grep "log rank=0 level=4"
'
test_expect_success '--tasks-per-node=2 -N4: 2 tasks on each broker, in blocks' '
	$T flux run -N4 --tasks-per-node=2 -l sh -c "flux getattr rank" \
		| nodes >tpn.out &&
	printf "0: 0\n1: 0\n2: 1\n3: 1\n4: 2\n5: 2\n6: 3\n7: 3\n" >tpn.exp &&
	test_cmp tpn.exp tpn.out
'
test_expect_success '--taskmap=cyclic deals the tasks round the nodes' '
	$T flux run -N4 --tasks-per-node=2 --taskmap=cyclic -l \
		sh -c "flux getattr rank" | nodes >cyc.out &&
	printf "0: 0\n1: 1\n2: 2\n3: 3\n4: 0\n5: 1\n6: 2\n7: 3\n" >cyc.exp &&
	test_cmp cyc.exp cyc.out &&
	$T flux run -N2 -n4 --taskmap=cyclic:2 -l sh -c "flux getattr rank" \
		| nodes >cyc2.out &&
	printf "0: 0\n1: 0\n2: 1\n3: 1\n" >cyc2.exp &&
	test_cmp cyc2.exp cyc2.out
'
test_expect_success '--taskmap=manual: an RFC 34 map that fits the counts' '
	$T flux run -N2 -n4 --taskmap="manual:[[0,2,1,2]]" -l \
		sh -c "flux getattr rank" | nodes >man.out &&
	printf "0: 0\n1: 1\n2: 0\n3: 1\n" >man.exp &&
	test_cmp man.exp man.out &&
	# the job fails: 1, or 143 when the other shell got the SIGTERM of the
	# exception before it failed itself
	! $T flux run -N2 -n4 --taskmap="manual:[[0,1,4,1]]" true 2>man.err &&
	grep "does not match the task counts" man.err
'
# a task that exits 0 on SIG (printing it) and 3 after 100 s without it
catcher () {
	echo "trap \"echo got $1; exit 0\" $1; sleep 100 & wait; exit 3"
}
test_expect_success '--signal: every task gets SIG that long before the time limit' '
	$T flux run -N2 -n2 -t 5s --signal=USR2@4s -l bash -c "$(catcher USR2)" \
		>sig.out 2>sig.err &&
	sort sig.out >sig.sorted &&
	printf "0: got USR2\n1: got USR2\n" >sig.exp &&
	test_cmp sig.exp sig.sorted &&
	grep "flux-shell\[0\]: .*signal: sending USR2" sig.err &&
	test $(grep -c "sending USR2" sig.err) = 1
'
test_expect_success '--signal on a job without a time limit sends nothing' '
	$T flux run --signal=@1000 sh -c "trap \"exit 5\" USR1; sleep 1" &&
	flux job eventlog -p exec $(flux job last) >nosig.ev &&
	test_must_fail grep sending nosig.ev
'
test_expect_success '--signal: a shorter time limit (flux update) moves the signal' '
	id=$(flux submit -t 1000s --signal=@900 --output=upd.out \
		bash -c "$(catcher USR1)") &&
	flux job wait-event -t 60 $id start &&
	flux update $id duration=910s &&
	flux job wait-event -t 60 $id clean &&
	test "$(cat upd.out)" = "got USR1" &&
	test "$(flux job eventlog $id | sed -n "s/.*finish status=//p")" = 0
'
test_expect_success '-u: output without a newline arrives while the task runs' '
	$T flux run -u sh -c "printf \"prompt> \"; sleep 5; echo done" \
		| { timeout 3 head -c 8 >prompt.out; cat >/dev/null; } &&
	test "$(cat prompt.out)" = "prompt> " &&
	$T flux run sh -c "printf \"prompt> \"; sleep 5; echo done" \
		| { timeout 3 head -c 8 >noprompt.out; cat >/dev/null; } &&
	test_must_be_empty noprompt.out
'
test_expect_success '-u -l: a line in pieces keeps one label; ranks do not mix' '
	$T flux run -N2 -n2 -u -l sh -c \
		"if test \$FLUX_TASK_RANK = 0; then
			printf a; sleep 0.3; printf b; sleep 0.3; echo c
		 else sleep 2; echo z; fi" >pieces1.out &&
	printf "0: abc\n1: z\n" >pieces1.exp &&
	test_cmp pieces1.exp pieces1.out &&
	$T flux run -N2 -n2 -u -l sh -c \
		"printf a; sleep 0.3; printf b; sleep 0.3; echo c" >pieces.out &&
	cat pieces.out &&
	test $(grep -c "^[01]: " pieces.out) = $(wc -l <pieces.out) &&
	for r in 0 1; do
		test "$(sed -n "s/^$r: //p" pieces.out | tr -d "\n")" = abc ||
		return 1
	done
'
test_expect_success 'bad output buffering options fail the job with a reason' '
	! $T flux run -o output.stderr.buffer.type=line true 2>buf.err &&
	grep "output.stderr.buffer.type must be none" buf.err &&
	! $T flux run -o output.batch-timeout=100 true 2>bt.err &&
	grep "output.batch-timeout must be a duration" bt.err
'
test_expect_success 'output of 60 commits (folded by the kvs) reaches run and attach whole' '
	$T flux run -o output.batch-timeout=0.01 sh -c \
		"for i in \$(seq 60); do echo line\$i; sleep 0.03; done" >many.out &&
	seq 60 | sed "s/^/line/" >many.exp &&
	test_cmp many.exp many.out &&
	id=$(flux job last) &&
	$T flux job attach $id >many2.out &&
	test_cmp many.exp many2.out &&
	key=$(flux job id --to=kvs $id).guest.output &&
	n=$(flux kvs get --treeobj $key | jq ".data | length") &&
	echo "the output eventlog is in $n blobs" &&
	test $n -gt 16 && test $n -lt 40
'
test_expect_success '--begin-time=+2s: the job waits in DEPEND, then runs' '
	t0=$(date +%s.%N) &&
	id=$(flux submit --begin-time=+2s true) &&
	flux jobs -no "{state}" $id >bt.state &&
	test "$(cat bt.state)" = DEPEND &&
	flux job wait-event -t 60 $id clean &&
	t=$(flux job eventlog $id | awk "/ alloc / {print \$1}") &&
	echo "$t - $t0 >= 1.9" | bc -l | grep -x 1
'
test_expect_success 'flux job taskmap: the map of a job, its forms and queries' '
	id=$($T flux submit -N4 -n8 --taskmap=cyclic true) &&
	flux job wait-event -t 60 $id clean &&
	test "$(flux job taskmap $id)" = "[[0,4,1,2]]" &&
	test "$(flux job taskmap --to=raw $id)" = "0,4;1,5;2,6;3,7" &&
	test "$(flux job taskmap --to=pmi $id)" = "(vector,(0,4,1),(0,4,1))" &&
	flux job taskmap --to=multiline $id >ml.out &&
	printf "0: 0\n1: 1\n2: 2\n3: 3\n4: 0\n5: 1\n6: 2\n7: 3\n" >ml.exp &&
	test_cmp ml.exp ml.out &&
	test "$(flux job taskmap --taskids=1 $id)" = "1,5" &&
	test "$(flux job taskmap --ntasks=3 $id)" = 2 &&
	test "$(flux job taskmap --nodeid=6 $id)" = 2 &&
	test "$(flux job taskmap --hostname=6 $id)" = "$(hostname)" &&
	flux job taskmap --to=hosts $id >hosts.out &&
	test $(grep -c ": $(hostname)\$" hosts.out) = 8 &&
	test "$(flux job taskmap --nodeid=3 "[[0,2,2,1]]")" = 1 &&
	test "$(flux job taskmap $id --to=raw)" = "0,4;1,5;2,6;3,7"
'
test_expect_success 'flux job taskmap: errors name the problem' '
	test_must_fail flux job taskmap --taskids=4 $id 2>tm1.err &&
	grep "no such node in the map (4 nodes)" tm1.err &&
	test_must_fail flux job taskmap --nodeid=8 $id 2>tm2.err &&
	grep "task 8: no such task" tm2.err &&
	test_must_fail flux job taskmap --ntasks=1 --nodeid=1 $id 2>tm3.err &&
	grep "give one of" tm3.err &&
	held=$(flux submit --urgency=hold true) &&
	test_must_fail flux job taskmap $held 2>tm4.err &&
	grep "has not started" tm4.err &&
	flux cancel $held -m "no longer wanted" &&
	flux job wait-event -t 60 $held exception >held.exc &&
	grep "note=\"no longer wanted\"" held.exc &&
	test_must_fail flux job taskmap --hostname=0 "[[0,1,1,1]]" 2>tm5.err &&
	grep "only for a JOBID" tm5.err &&
	test_must_fail flux job taskmap "[[0,1]]" 2>tm6.err &&
	grep "neither a job id nor a task map" tm6.err
'
test_expect_success '--add-file: every node finds the files in {{tmpdir}}' '
	$T flux run -N2 -n2 -l --add-file=a.txt --add-file=bin=b.bin \
		sh -c "cat {{tmpdir}}/a.txt; stat -c %a {{tmpdir}}/a.txt;
			cmp {{tmpdir}}/bin \"$(pwd)/b.bin\" && echo same" >af.out &&
	sort af.out >af.sorted &&
	printf "0: 640\n0: hello\n0: same\n1: 640\n1: hello\n1: same\n" >af.exp &&
	test_cmp af.exp af.sorted
'
test_expect_success 'flux submit --wait-event=start returns while the job runs' '
	id=$($T flux submit --wait-event=start sleep 300) &&
	flux job eventlog $id >wev &&
	grep -w start wev &&
	test_must_fail grep -w finish wev &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean
'
test_expect_success 'flux submit --wait-event: every job of --cc, 1 if one never runs' '
	$T flux submit --cc=1-3 --wait-event=start --quiet true &&
	test_must_fail $T flux submit --wait-event=start -n 100 true 2>never.err &&
	grep "unsatisfiable" never.err
'
test_expect_success 'flux batch still refuses --wait-event' '
	test_must_fail flux batch --wait-event=start --wrap true 2>b.err &&
	grep "not an option of this command" b.err
'
test_expect_success 'a broker started under a low nofile raises it to its hard limit' '
	hard=$(ulimit -H -n) &&
	(ulimit -S -n 256 &&
	 $T flux start -s 1 sh -c "grep \"open files\" /proc/\$(flux getattr broker.pid)/limits") \
		>nofile.out &&
	cat nofile.out &&
	test "$(awk "{print \$4, \$5}" nofile.out)" = "$hard $hard"
'
test_expect_success 'stop the instance' '
	stop_instance four
'
test_done
