#!/bin/sh
test_description='rexec (RFC 42) on every broker and flux exec: output,
labels, exit codes, stdin, cwd, environment, signals, bad requests,
guests refused, processes killed with their client, list'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc-cred"
RANKRPC="$FLUX_BUILD_DIR/t/rpc"
CMD='{"cmdline":["true"],"env":{},"opts":{},"channels":[]}'


test_expect_success 'one broker: flux exec runs a command' '
	flux start flux exec hostname >one.out &&
	test_line_count = 1 one.out &&
	test "$(cat one.out)" = "$(hostname)"
'
# The broker inherits fd 9 without close-on-exec: its processes do not.
test_expect_success 'a process gets no fd but its stdio from the broker' '
	flux start flux exec -r 0 sh -c "ls /proc/\$\$/fd" 9</dev/null \
		</dev/null >fds.out &&
	cat fds.out &&
	test "$(sort -n fds.out | tr "\n" " ")" = "0 1 2 "
'
test_expect_success 'start a 4-broker instance (counting messages)' '
	FLUX_BROKER_MSGCOUNT=1 && export FLUX_BROKER_MSGCOUNT &&
	start_instance rexec 4 &&
	unset FLUX_BROKER_MSGCOUNT &&
	flux exec -r 0 true
'
test_expect_success 'rexec is loaded on every rank' '
	for r in 0 1 2 3; do
		$RANKRPC -r $r rexec.list >list.$r || return 1
		grep "\"rank\":$r" list.$r || return 1
	done
'
test_expect_success 'flux exec -r all hostname prints 4 lines' '
	flux exec -r all hostname >all.out &&
	test_line_count = 4 all.out
'
test_expect_success 'the default is all ranks; -x leaves some out' '
	flux exec echo x >def.out && test_line_count = 4 def.out &&
	flux exec -x 0,2 echo x >ex.out && test_line_count = 2 ex.out
'
test_expect_success '-l labels each line with its rank' '
	flux exec -l -r 1-2 sh -c "echo a; echo b" | sort >label.out &&
	cat >label.exp <<-EOF &&
	1: a
	1: b
	2: a
	2: b
	EOF
	test_cmp label.exp label.out
'
test_expect_success 'stderr is relayed to stderr' '
	flux exec -r 3 sh -c "echo oops >&2" 2>err.out >out.out &&
	grep oops err.out && ! test -s out.out
'
test_expect_success 'false exits 1, with a summary line' '
	test_expect_code 1 flux exec -r 0-1 false 2>false.err &&
	grep "^\[0-1\]: Exit 1" false.err
'
test_expect_success '-q leaves the summary out' '
	test_expect_code 1 flux exec -q -r 0 false 2>quiet.err &&
	! test -s quiet.err
'
test_expect_success 'the worst status wins' '
	test_expect_code 7 flux exec -r 0-3 sh -c "exit \$((\$(flux getattr rank) + 4))"
'
test_expect_success 'killed by signal 9 exits 137' '
	test_expect_code 137 flux exec -r 2 sh -c "kill -9 \$\$" 2>kill.err &&
	grep "^2: Killed" kill.err
'
test_expect_success 'a missing command exits 127 with an error per rank' '
	test_expect_code 127 env FLUX_EXEC_BULK=0 \
		flux exec -r 0-1 /nonexistent/cmd 2>nx.err &&
	grep "flux-exec: Error: rank 1: /nonexistent/cmd: No such file" nx.err
'
test_expect_success 'through bulk-exec, one error line for the ranks alike' '
	test_expect_code 127 flux exec -r 0-1 /nonexistent/cmd </dev/null \
		2>nxb.err &&
	grep "flux-exec: Error: rank \[0-1\]: /nonexistent/cmd: No such file" \
		nxb.err &&
	test_line_count = 1 nxb.err
'
test_expect_success 'stdin is copied to every rank' '
	echo hi | flux exec -r 0-1 cat >stdin.out &&
	printf "hi\nhi\n" >stdin.exp &&
	test_cmp stdin.exp stdin.out
'
test_expect_success 'stdin from a file, larger than one read' '
	seq 1 100000 >big.in &&
	flux exec -r 1,3 cat <big.in >big.out &&
	test_line_count = 200000 big.out &&
	sort -n big.out | uniq -c | awk "\$1 != 2" >big.bad &&
	! test -s big.bad
'
test_expect_success '-n sends EOF to stdin at once' '
	flux exec -n -r 0 cat >noinput.out </dev/zero &&
	! test -s noinput.out
'
# Without standard input to forward (-n, or stdin is /dev/null), no write
# credits are asked for: 5 responses per rank (started, 2 EOFs, finished,
# ENODATA), not 6 (add-credit first).
test_expect_success 'no stdin to forward: no add-credit response' '
	FLUX_HANDLE_TRACE=1 flux exec -r 1 true </dev/null 2>tr1.err &&
	test $(grep -c "< response rexec.exec" tr1.err) -eq 5 &&
	FLUX_HANDLE_TRACE=1 flux exec -n -r 1 true </dev/zero 2>tr2.err &&
	test $(grep -c "< response rexec.exec" tr2.err) -eq 5 &&
	: | FLUX_HANDLE_TRACE=1 flux exec -r 1 true 2>tr3.err &&
	test $(grep -c "< response rexec.exec" tr3.err) -ge 6 &&
	flux exec -r 0-1 cat </dev/null >null.out &&
	! test -s null.out
'
test_expect_success 'stdin on /dev/null: a rank that reads late still gets EOF' '
	timeout 60 flux exec -r all sh -c "sleep 0.3; cat" </dev/null >late.out &&
	! test -s late.out
'
# A process group of its own (setpgrp, as flux-core's), in the broker's
# session; its stdin and output are pipes.
test_expect_success 'a process leads a group of its own, stdio on pipes' '
	FLUX_EXEC_BULK=0 flux exec -r 1 sh -c \
		"ps -o pid=,pgid=,sid= -p \$\$; readlink /proc/\$\$/fd/0 /proc/\$\$/fd/1" \
		</dev/null >grp.out &&
	cat grp.out &&
	head -1 grp.out | awk "{exit !(\$1 == \$2 && \$1 != \$3)}" &&
	test $(grep -c "^pipe:" grp.out) -eq 2
'
# The broker ignores SIGPIPE and its threads block signals: none of that
# reaches a process.  A real-time signal the broker inherited ignored is
# reset too (glibc keeps 32 and 33: posix_spawn children of make, for
# one, have them ignored).
test_expect_success 'a process starts with no signal blocked or ignored' '
	flux exec -r 1 grep -E "^Sig(Blk|Ign)" /proc/self/status \
		</dev/null >sig.out &&
	cat sig.out &&
	blk=$(awk "/^SigBlk/ {print \$2}" sig.out) &&
	ign=$(awk "/^SigIgn/ {print \$2}" sig.out) &&
	test $((0x$blk)) -eq 0 &&
	test $((0x$ign & ~(3 << 31))) -eq 0
'
test_expect_success 'output that is not UTF-8 arrives unchanged' '
	printf "a\377b\n" >bin.exp &&
	flux exec -r 1 printf "a\\377b\\n" >bin.out &&
	test_cmp bin.exp bin.out
'
test_expect_success '-d sets the working directory; the default is ours' '
	test "$(flux exec -r 1 -d / pwd)" = / &&
	test "$(flux exec -r 1 pwd)" = "$(pwd)"
'
test_expect_success 'a working directory that is not there: said so, exit 127' '
	test_expect_code 127 env FLUX_EXEC_BULK=0 flux exec -r 1 -d /nonexistent \
		true </dev/null 2>cwd1.err &&
	grep "rank 1: true: working directory /nonexistent: No such file" cwd1.err &&
	test_expect_code 127 flux exec -r 1-2 -d /nonexistent true \
		</dev/null 2>cwd2.err &&
	grep "rank \[1-2\]: true: working directory /nonexistent: No such" cwd2.err
'
test_expect_success 'the environment passes through, FLUX_URI is the local broker' '
	test "$(REXEC_TEST=xyz flux exec -r 2 printenv REXEC_TEST)" = xyz &&
	test "$(flux exec -r 2 flux getattr rank)" = 2
'
test_expect_success '--setopt sets subprocess options' '
	test_expect_code 1 flux exec -r 0 --setopt stdout_BUFSIZE=0 true 2>opt.err &&
	grep "Invalid argument" opt.err
'
test_expect_success 'SIGTERM to flux exec is forwarded and ends sleep 100' '
	flux exec -r 1-2 sleep 100 &
	pid=$! &&
	wait_list 1 sleep 1 && wait_list 2 sleep 1 &&
	kill -TERM $pid &&
	test_expect_code 143 wait $pid
'
test_expect_success 'a client that disconnects takes its processes with it' '
	flux exec -r 3 sleep 100 &
	pid=$! &&
	wait_list 3 sleep 1 &&
	kill -9 $pid &&
	wait_list 3 sleep 0
'
# Without output credit, `yes` grew rank 3's broker by hundreds of MB a
# second until the instance fell over; with it but pausing only after
# the read in hand (32K lines of "y"), rank 3 held about 100 MB.  A
# window and a line now: about 10 MB.
test_expect_success 'a client that does not read: its process waits, memory stays' '
	{ flux exec -r 3 yes | sleep 300 & } &&
	reader=$! &&
	wait_list 3 yes 1 &&
	sleep 3 &&
	pid=$(flux exec -r 3 flux getattr broker.pid) &&
	kb=$(awk "/^VmRSS/ {print \$2}" /proc/$pid/status) &&
	echo "rank 3: $kb KiB" &&
	{ asan_build || test $kb -lt 32768; } &&
	ypid=$($RANKRPC -r 3 rexec.list | jq ".procs[] | select(.cmd==\"yes\") | .pid") &&
	blocked $ypid &&
	kill $reader &&
	wait_list 3 yes 0
'
test_expect_success 'output credit: many windows of lines flow to the end' '
	flux exec -r 1 sh -c "yes 0123456789 | head -n 100000" >many.out &&
	test_line_count = 100000 many.out
'
# disconnects RANK: the rexec.disconnect requests RANK's broker got
disconnects () {
	FLUX_URI=$(cat uri.$1) flux module stats broker \
		| jq ".msgcount[\"parent request rexec.disconnect\"] // 0"
}
test_expect_success 'a client gone owes rexec.disconnect only where its processes run' '
	for r in 1 2 3; do
		flux exec -r $r flux getattr local-uri >uri.$r || return 1
	done &&
	for r in 1 2 3; do
		FLUX_URI=$(cat uri.$r) flux module stats --clear broker || return 1
	done &&
	{ FLUX_EXEC_BULK=0 flux exec -r 1-3 \
		sh -c "test \$(flux getattr rank) != 2 || exec sleep 100" & } &&
	pid=$! &&
	wait_list 2 sh 1 && wait_list 1 sh 0 && wait_list 3 sh 0 &&
	sleep 0.5 && # the ends of the streams of ranks 1 and 3 reach rank 0
	kill -9 $pid &&
	wait_list 2 sh 0 &&
	echo "$(disconnects 1) $(disconnects 2) $(disconnects 3)" >disc.out &&
	echo "0 1 0" >disc.exp &&
	test_cmp disc.exp disc.out
'
test_expect_success 'a client whose processes all ended owes none' '
	FLUX_URI=$(cat uri.1) flux module stats --clear broker &&
	flux exec -r 1 true &&
	{ flux exec -r 1 sleep 100 & } &&
	pid=$! &&
	wait_list 1 sleep 1 &&
	kill -9 $pid &&
	wait_list 1 sleep 0 &&
	test "$(disconnects 1)" = 1
'
# shell_disconnects RANK: the <uid>-shell-<id>.disconnect requests RANK's
# broker routed
shell_disconnects () {
	FLUX_URI=$(cat uri.$1) flux module stats broker | jq "[.msgcount
		| to_entries[] | select(.key | test(\"shell-.*[.]disconnect\"))
		| .value] | add // 0"
}
test_expect_success 'the shells of a job owe each other no disconnect' '
	echo $FLUX_URI >uri.0 &&
	for r in 0 1 2 3; do
		FLUX_URI=$(cat uri.$r) flux module stats --clear broker || return 1
	done &&
	id=$(flux submit -N4 -n4 echo hi) &&
	flux job attach $id >shells.out &&
	test_line_count = 4 shells.out &&
	flux job wait-event -t 60 $id clean &&
	sleep 0.5 &&
	n=0 &&
	for r in 0 1 2 3; do
		n=$((n + $(shell_disconnects $r))) || return 1
	done &&
	test $n = 0
'
test_expect_success 'list shows a running process, its pid and state' '
	flux exec -r 0 sleep 100 &
	pid=$! &&
	wait_list 0 sleep 1 &&
	$RANKRPC -r 0 rexec.list >list.out &&
	grep "\"state\":\"R\"" list.out &&
	grep "\"pid\":[1-9]" list.out &&
	kill -INT $pid &&
	test_expect_code 130 wait $pid
'
test_expect_success 'bad exec payloads get EPROTO' '
	test_expect_code 71 $RPC -s rexec.exec "{}" 2>p1.err &&
	test_expect_code 71 $RPC -s rexec.exec "[]" &&
	test_expect_code 71 $RPC -s rexec.exec "{\"cmd\":{},\"flags\":3}" 2>p2.err &&
	grep "error parsing command string" p2.err &&
	test_expect_code 71 $RPC -s rexec.exec \
		"{\"cmd\":{\"cmdline\":[],\"env\":{},\"opts\":{},\"channels\":[]},\"flags\":3}" 2>p3.err &&
	grep "command string is empty" p3.err &&
	test_expect_code 71 $RPC -s rexec.exec "{\"cmd\":$CMD,\"flags\":\"x\"}" &&
	test_expect_code 71 $RPC rexec.kill "{\"pid\":\"x\"}" &&
	test_expect_code 71 $RPC rexec.wait "[1]"
'
test_expect_success 'other refusals: EINVAL, ESRCH, ENOENT' '
	test_expect_code 22 $RPC rexec.exec "{\"cmd\":$CMD,\"flags\":8}" &&
	test_expect_code 3 $RPC rexec.kill "{\"pid\":999999,\"signum\":15}" 2>k.err &&
	grep "pid 999999 does not belong to any subprocess" k.err &&
	test_expect_code 22 $RPC rexec.kill "{\"pid\":1,\"signum\":0}" &&
	test_expect_code 2 $RPC -s rexec.attach "{\"pid\":999999,\"flags\":3}"
'
test_expect_success 'a guest is refused EPERM on every method' '
	for m in exec kill list wait attach; do
		test_expect_code 1 $RPC -u 4242 -R 2 rexec.$m \
			"{\"cmd\":$CMD,\"flags\":3,\"pid\":1,\"signum\":1}" \
			2>guest.err || return 1
		grep -i "owner" guest.err || return 1
	done
'
test_expect_success 'background and waitable: exec, list, wait' '
	$RPC rexec.exec "{\"cmd\":{\"cmdline\":[\"sh\",\"-c\",\"echo bg; exit 3\"],\"env\":{},\"opts\":{},\"channels\":[],\"label\":\"bgjob\"},\"flags\":16}" >bg.out &&
	grep "\"type\":\"started\"" bg.out &&
	$RPC rexec.wait "{\"pid\":0,\"label\":\"bgjob\"}" >wait.out &&
	grep "\"status\":768" wait.out &&
	grep "bg" wait.out
'
test_expect_success 'the brokers still work after all that' '
	flux exec -r all true &&
	flux module list | grep rexec
'
test_expect_success 'stop the instance: rexec unloads and kills what runs' '
	flux exec -r 1 sleep 100 &
	execpid=$! &&
	wait_list 1 sleep 1 &&
	stop_instance rexec &&
	{ wait $execpid; rc=$?; } &&
	test $rc -ne 0
'
test_done
