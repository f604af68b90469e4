#!/bin/sh
test_description='instances inside jobs (RFC 8): flux batch with RFC 36
directives, flux alloc (with a command, --bg, and through a pty), flux uri,
flux proxy, nesting to depth 3, 1,000 jobs in a batch sub-instance, cancel
of a sub-instance, a lost node, the sub-instance state removed at exit.
Every wait is bounded.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

# start_instance NAME SIZE [FLUX-START-ARGS...]: FLUX_URI of a new
# instance in the background, kept alive until NAME.keepalive is removed
start_instance () {
	name=$1 size=$2; shift 2
	touch $name.keepalive &&
	flux start -s $size "$@" \
		sh -c "echo \$FLUX_URI >$name.uri.tmp &&
		mv $name.uri.tmp $name.uri && n=0 &&
		while test -e $name.keepalive && test \$n -lt 9000; do
			sleep 0.1; n=\$((n+1)); done" \
		>$name.log 2>&1 3>&- 4>&- &
	echo $! >$name.pid &&
	for i in $(seq 600); do test -s $name.uri && break; sleep 0.1; done &&
	FLUX_URI=$(cat $name.uri) && export FLUX_URI &&
	for i in $(seq 600); do
		test "$(flux resource list -n -o "{nnodes}" -s free,allocated \
			2>/dev/null | head -n 1)" = $size && break
		sleep 0.1
	done
}
T="timeout -k 10 180"
clean () {
	flux job wait-event -t 180 $1 clean >/dev/null
}
status () {
	flux job eventlog $1 | sed -n "s/.* finish status=\([0-9]*\).*/\1/p"
}
# the one output file flux batch wrote in directory $1
outfile () {
	ls $1/flux-*.out
}
# the f58 id with an ASCII f, as output file names have it
plain () {
	flux job id --to=f58plain $1 2>/dev/null || echo $1 | sed "s/ƒ/f/"
}

test_expect_success 'start an instance of 2 brokers' '
	start_instance top 2 --test-exit-mode=leader &&
	test "$(flux getattr instance-level)" = 0
'

cat >hello.sh <<'SCRIPT'
#!/bin/sh
# a batch script with directives
#flux: -N2
#flux: --job-name="my job"   # quoted, with a comment
echo level=$(flux getattr instance-level) size=$(flux getattr size)
echo jobid=$(flux getattr jobid)
echo parent=$(flux getattr parent-uri)
echo uri=$FLUX_URI
echo nodes=$(flux resource list -n -s free -o "{nnodes}")
echo cores=$(flux resource list -n -s free -o "{ncores}")
flux run -N2 -n2 echo task
exit 3
SCRIPT
chmod +x hello.sh

test_expect_success 'batch --dry-run: the script in files, flux broker, directives' '
	flux batch --dry-run hello.sh >dry.json &&
	jq -e ".tasks[0].command == [\"flux\",\"broker\",\"{{tmpdir}}/script\"]" dry.json &&
	jq -e ".attributes.system.files.script.mode == 448" dry.json &&
	jq -e ".attributes.system.files.script.data" dry.json | grep -q "my job" &&
	jq -e ".resources[0].type == \"node\" and .resources[0].count == 2" dry.json &&
	jq -e ".attributes.system.job.name == \"my job\"" dry.json &&
	jq -e ".attributes.system.shell.options.output.stdout.path == \"flux-{{id}}.out\"" dry.json
'
test_expect_success 'batch: the command line overrides a directive' '
	flux batch --dry-run -N1 --job-name=other hello.sh >dry2.json &&
	jq -e ".resources[0].count == 1" dry2.json &&
	jq -e ".attributes.system.job.name == \"other\"" dry2.json
'
test_expect_success 'batch: script arguments follow {{tmpdir}}/script' '
	flux batch --dry-run hello.sh a "b c" >dry3.json &&
	jq -e ".tasks[0].command == [\"flux\",\"broker\",\"{{tmpdir}}/script\",\"a\",\"b c\"]" dry3.json
'
test_expect_success 'batch: an unknown option in a directive is refused with its line' '
	printf "#!/bin/sh\n#flux: -N1\n#flux: --no-such-option\ntrue\n" >bad1.sh &&
	test_must_fail flux batch --dry-run bad1.sh 2>bad1.err &&
	grep "bad1.sh: line 3: unknown option" bad1.err
'
test_expect_success 'batch: a bad value in a directive is refused with its line' '
	printf "#!/bin/sh\n\n#flux: --nodes=zero\n" >bad2.sh &&
	test_must_fail flux batch --dry-run bad2.sh 2>bad2.err &&
	grep "bad2.sh: line 3: --nodes" bad2.err
'
test_expect_success 'batch: a directive after the first command is refused' '
	printf "#!/bin/sh\n#flux: -N1\nhostname\n#flux: -n2\n" >bad3.sh &&
	test_must_fail flux batch --dry-run bad3.sh 2>bad3.err &&
	grep "line 4: directive after the end of the directives (line 3)" bad3.err
'
test_expect_success 'batch: an unterminated quote is refused with its line' '
	printf "#!/bin/sh\n#flux: --job-name=\"abc\n" >bad4.sh &&
	test_must_fail flux batch --dry-run bad4.sh 2>bad4.err &&
	grep "line 2: unterminated double quote" bad4.err
'
test_expect_success 'batch: an operand in a directive is refused' '
	printf "#!/bin/sh\n#flux: -N1 oops\n" >bad5.sh &&
	test_must_fail flux batch --dry-run bad5.sh 2>bad5.err &&
	grep "line 2: unexpected argument .oops." bad5.err
'
test_expect_success 'batch: a script without #! is refused' '
	printf "echo hi\n" >nobang.sh &&
	test_must_fail flux batch --dry-run nobang.sh 2>nobang.err &&
	grep "does not begin with #!" nobang.err
'
test_expect_success 'batch: a 2-node sub-instance runs the script' '
	mkdir b1 && (cd b1 && flux batch ../hello.sh >id) &&
	id=$(cat b1/id) &&
	clean $id &&
	cat $(outfile b1) &&
	test "$(status $id)" = $((3<<8)) &&
	grep "^level=1 size=2$" $(outfile b1) &&
	grep "^jobid=$(plain $id)$" $(outfile b1) &&
	grep "^parent=$FLUX_URI$" $(outfile b1) &&
	! grep "^uri=$FLUX_URI$" $(outfile b1) &&
	grep "^nodes=2$" $(outfile b1) &&
	grep "^cores=2$" $(outfile b1) &&
	test $(grep -c "^task$" $(outfile b1)) = 2 &&
	test "$(flux jobs -n -o "{name}" $id)" = "my job"
'
test_expect_success 'batch: the job exit code is the script exit code' '
	mkdir b2 && (cd b2 && flux batch --wrap sh -c "exit 0" >id) &&
	id=$(cat b2/id) && clean $id && test "$(status $id)" = 0 &&
	flux job status $id
'
test_expect_success 'batch: --wrap, script on stdin, --output' '
	mkdir b3 && (cd b3 &&
		flux batch --wrap --output=wrap.out echo hello wrap >id &&
		printf "#!/bin/sh\necho from stdin\n" | flux batch >id2) &&
	clean $(cat b3/id) && clean $(cat b3/id2) &&
	grep "^hello wrap$" b3/wrap.out &&
	grep "^from stdin$" b3/flux-*.out
'
test_expect_success 'batch: a script submits 1,000 (simulated) jobs and waits for them' '
	cat >ensemble.sh <<-\SCRIPT &&
	#!/bin/sh
	#flux: -N2
	flux submit --cc=1-1000 --quiet --flags=waitable \
		--setattr=system.exec.test.run_duration=0s true &&
	flux job wait --all && echo waited &&
	flux jobs -a -n -o "{result}" | sort | uniq -c
	SCRIPT
	mkdir b4 && (cd b4 && flux batch ../ensemble.sh >id) &&
	id=$(cat b4/id) && clean $id &&
	cat $(outfile b4) &&
	test "$(status $id)" = 0 &&
	grep "^waited$" $(outfile b4) &&
	grep "^ *1000 COMPLETED$" $(outfile b4)
'
test_expect_success 'batch: a script runs real jobs in its sub-instance' '
	cat >real.sh <<-\SCRIPT &&
	#!/bin/sh
	#flux: -N2
	for i in $(seq 20); do flux submit --quiet --flags=waitable -N2 true; done
	flux job wait --all && echo waited
	SCRIPT
	mkdir b5 && (cd b5 && flux batch ../real.sh >id) &&
	clean $(cat b5/id) && grep "^waited$" b5/flux-*.out
'
test_expect_success 'alloc: CMD runs in a 2-node sub-instance, exit code is its own' '
	$T flux alloc -N2 flux getattr size >size.out &&
	test "$(cat size.out)" = 2 &&
	test_expect_code 7 $T flux alloc -N1 sh -c "exit 7"
'
test_expect_success 'alloc: nesting to depth 3, each level on its job R' '
	$T flux alloc -N2 flux alloc -N2 flux alloc -N1 \
		sh -c "flux getattr instance-level &&
			flux resource list -n -s free -o {nnodes} &&
			flux uri --parent && flux run hostname" >depth.out &&
	cat depth.out &&
	test "$(sed -n 1p depth.out)" = 3 &&
	test "$(sed -n 2p depth.out)" = 1 &&
	sed -n 3p depth.out | grep "^local://" &&
	test "$(sed -n 3p depth.out)" != "$FLUX_URI" &&
	test "$(sed -n 4p depth.out)" = "$(hostname)"
'
test_expect_success 'alloc: driven through a pty (script(1)), an interactive shell' '
	printf "flux getattr instance-level\nflux getattr size\nexit 5\n" |
		SHELL=/bin/sh $T script -qec "flux alloc -N2" /dev/null >pty.out
	echo $? >pty.rc &&
	cat pty.out &&
	test "$(cat pty.rc)" = 5 &&
	grep "1" pty.out && grep "2" pty.out
'
test_expect_success 'alloc --bg; flux uri JOBID; flux uri --local; flux proxy' '
	id=$($T flux alloc --bg -N2 sleep 600) &&
	echo $id >bg.id &&
	flux uri $id >bg.uri &&
	grep "^ssh://$(hostname)/" bg.uri &&
	flux uri --local $id >bg.local &&
	grep "^local:///" bg.local &&
	test "$($T flux proxy $id flux getattr instance-level)" = 1 &&
	test "$($T flux proxy $id flux uri --parent)" = "$FLUX_URI" &&
	test "$(FLUX_URI=$(cat bg.local) flux getattr jobid)" = "$(plain $id)" &&
	test_expect_code 4 $T flux proxy $id sh -c "exit 4"
'
test_expect_success 'flux uri/proxy: a job id path ID/ID2 reaches a nested instance' '
	id=$($T flux alloc --bg -N2 flux alloc -N1 sleep 600) &&
	echo $id >nest.id &&
	for i in $(seq 300); do
		i2=$($T flux proxy $id flux jobs -n -o {id}) &&
		test -n "$i2" && break
		sleep 0.1
	done &&
	test -n "$i2" &&
	$T flux uri --wait $id/$i2 >nest.uri &&
	test "$($T flux proxy --wait $id/$i2 flux getattr instance-level)" = 2 &&
	flux cancel $id && clean $id
'
test_expect_success 'flux uri/proxy: errors' '
	test_must_fail flux uri 12345 2>err1 && grep "not found" err1 &&
	id=$(flux submit --setattr=system.exec.test.run_duration=600s true) &&
	flux job wait-event -t 60 $id start &&
	test_must_fail flux uri $id 2>err2 && grep "has no URI" err2 &&
	flux cancel $id && clean $id &&
	test_must_fail flux uri $id 2>err3 && grep "has ended" err3 &&
	test_must_fail flux proxy $id true 2>err4 && grep "has ended" err4 &&
	test_must_fail flux uri 2>err5 && grep "TARGET" err5 &&
	test_must_fail flux uri --parent 2>err6 && grep "no parent" err6
'
# the sleeps of this test and the pstree one, unique to this run: another
# run of this test (or t2620's sleep 301) on the machine must not change
# the counts.  The sub-instance of bg.id has a core on each of its two
# nodes: the -N2 job runs, the other one waits for it.
S=$$
test_expect_success 'cancel of a sub-instance ends its jobs; its state is removed' '
	id=$(cat bg.id) &&
	rundir=$(sed "s|^local://||; s|/local-0$||" bg.local) &&
	test -d $rundir &&
	$T flux proxy $id sh -c "flux submit --quiet -N2 sleep ${S}2 &&
		flux submit --quiet sleep ${S}1" &&
	for i in $(seq 300); do
		test $(pgrep -c -f "^sleep ${S}[12]$") = 2 && break; sleep 0.1
	done &&
	test $(pgrep -c -f "^sleep ${S}2$") = 2 &&
	flux cancel $id && clean $id &&
	flux job eventlog $id | grep "exception.*type=\"cancel\"" &&
	for i in $(seq 300); do
		pgrep -f "^sleep ${S}[12]$" || break; sleep 0.1
	done &&
	! pgrep -f "^sleep ${S}[12]$" &&
	! test -d $rundir
'
test_expect_success 'a statedir asked for outlives the sub-instance' '
	$T flux alloc -N1 "--broker-opts=-Sstatedir=$PWD/state" \
		flux kvs put a=1 &&
	test -d state && ls state | grep -q . &&
	$T flux alloc -N1 "--broker-opts=-Sstatedir=$PWD/state" \
		flux kvs get a >state.out &&
	test "$(cat state.out)" = 1
'
test_expect_success 'flux pstree shows the nesting, --details=stats the counts; cancel ends the jobs at every depth' '
	id=$($T flux alloc --bg -N2 -n4 --job-name=outer sh -c \
		"flux submit --quiet --cc=1-2 sleep ${S}7 &&
		flux alloc -N1 --job-name=inner \
			sh -c \"flux submit --quiet sleep ${S}8 && sleep ${S}9\"") &&
	for i in $(seq 300); do
		flux pstree >tree.out &&
		grep -q "inner$" tree.out && grep -q "2\*\[sleep:R\]" tree.out &&
		grep -q "^        └── sleep:R$" tree.out && break
		sleep 0.1
	done &&
	cat tree.out &&
	grep "^└── outer$" tree.out &&
	grep "^    ├── 2\*\[sleep:R\]$" tree.out &&
	grep "^    └── inner$" tree.out &&
	grep "^        └── sleep:R$" tree.out &&
	flux pstree -L 1 >tree1.out && ! grep "^        └── sleep:R$" tree1.out &&
	flux pstree --details=stats >stats.out &&
	cat stats.out &&
	grep "outer \[PD:0 R:3 CD:0 F:0\]" stats.out &&
	grep "inner \[PD:0 R:1 CD:0 F:0\]" stats.out &&
	flux jobs -n -o "{id} {user.uri}" $id | grep "ssh://" &&
	test_must_fail flux pstree --details=bogus &&
	for i in $(seq 300); do
		test $(pgrep -c -f "^sleep ${S}[789]$") = 4 && break
		sleep 0.1
	done &&
	test $(pgrep -c -f "^sleep ${S}[789]$") = 4 &&
	flux cancel $id && clean $id &&
	for i in $(seq 300); do
		pgrep -f "^sleep ${S}[789]$" || break; sleep 0.1
	done &&
	! pgrep -f "^sleep ${S}[789]$"
'
# (a leaf is not critical by default: t2560 loses one and the job goes on)
test_expect_success 'a sub-instance whose critical node is lost ends with an exception' '
	id=$($T flux alloc --bg -N2 --broker-opts=-Sbroker.critical-ranks=0-1 \
		sleep 600) &&
	rank1=$(flux exec -r 1 flux getattr broker.pid) &&
	kill -9 $rank1 &&
	flux job wait-event -t 120 $id exception >lost.exc &&
	grep "node-failure" lost.exc &&
	clean $id
'
test_expect_success 'man pages and --help' '
	for c in batch alloc uri proxy pstree; do
		flux $c --help | grep "Usage: flux $c" || return 1
	done
'
test_expect_success 'stop the instance' '
	rm -f top.keepalive &&
	$T sh -c "while kill -0 $(cat top.pid) 2>/dev/null; do sleep 0.1; done"
'
test_done
