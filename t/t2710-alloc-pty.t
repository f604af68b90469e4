#!/bin/sh
test_description='a pty in the job shell: flux run -o pty.interactive and
flux alloc driven through a pty (script(1)): the task on a pty of the
terminal size, keys (ctrl-C too) relayed, window-size changes followed,
the exit code, the terminal restored; flux job attach later; -o pty and
pty.ranks; flux alloc --bg without a command; flux jobs instance.*
fields.  Every wait is bounded.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

if ! command -v script >/dev/null; then
	skip_all="script(1) is not installed"
	test_done
fi

T="timeout -k 10 180"

# pty_start NAME CMD: run the shell command CMD under script(1) on a new
# pty of 33 rows and 77 columns.  What is typed (pty_type) comes through
# the fifo NAME.in; all output goes to NAME.out as it comes; CMD's exit
# code to NAME.rc, and TERM-RESTORED is printed if the terminal's mode is
# the same after CMD as before.
pty_start () {
	name=$1; shift
	rm -f $name.in $name.out $name.rc && mkfifo $name.in || return 1
	{ $T script -qfec "stty rows 33 cols 77; b=\$(stty -g); $*; rc=\$?;
		test \"\$b\" = \"\$(stty -g)\" && echo TERM-RESTORED; exit \$rc" \
		/dev/null <$name.in >$name.out 2>&1; echo $? >$name.rc; } &
	exec 8>$name.in
}
pty_type () {
	printf "$1" >&8
}
# pty_wait NAME PATTERN: until NAME.out has PATTERN (at most 60 s)
pty_wait () {
	for i in $(seq 600); do
		grep -q "$2" $1.out 2>/dev/null && return 0
		sleep 0.1
	done
	echo "pty_wait: no $2 in $1.out:"; cat $1.out
	exec 8>&- # script(1) ends the session at the end of its input
	return 1
}
# pty_end NAME: until CMD ended (at most 120 s); then close the input
pty_end () {
	for i in $(seq 1200); do test -s $1.rc && break; sleep 0.1; done
	exec 8>&-
	cat -A $1.out
	test -s $1.rc
}

test_expect_success 'alloc and batch --help: the shared option lines, the same' '
	flux alloc --help >alloc.help &&
	flux batch --help >batch.help &&
	sed -n "/--nodes=/,/--flags=/p" alloc.help |
		grep -v -e "--bg " -e "job id and exit" -e "COMMAND, until" >alloc.shared &&
	sed -n "/--nodes=/,/--flags=/p" batch.help |
		grep -v -e "--wrap " -e "^  *script\$" >batch.shared &&
	test_cmp alloc.shared batch.shared &&
	test_line_count = 17 alloc.shared &&
	for opt in --nodes= --ntasks= --cores-per-task= --gpus-per-task= \
		--exclusive --time-limit= --broker-opts= --urgency= \
		--dependency= --setattr= --setopt= "--env=RULE" --env-remove= \
		--cwd= --flags=; do
		test $(grep -c -- "$opt" alloc.shared) = 1 || return 1
	done &&
	grep -- "--bg " alloc.help && grep -- "--wrap " batch.help &&
	grep -- "--job-name=" alloc.help && grep -- "--job-name=" batch.help
'
test_expect_success 'start an instance of 2 brokers' '
	start_instance top 2 --test-exit-mode=leader
'
test_expect_success 'run -o pty.interactive: a shell on a pty of the terminal size' '
	pty_start run1 "flux run -o pty.interactive env PS1=ready: sh" &&
	pty_wait run1 ready: &&
	pty_type "tty; stty size; echo \$0; exit 3\r" &&
	pty_end run1 &&
	test "$(cat run1.rc)" = 3 &&
	grep "^/dev/pts/" run1.out &&
	grep "^33 77" run1.out &&
	grep "^sh" run1.out &&
	grep TERM-RESTORED run1.out
'
cat >int.sh <<'SCRIPT'
trap 'echo caught SIGINT; exit 7' INT
echo waiting
while :; do sleep 1; done
SCRIPT
test_expect_success 'run -o pty.interactive: ctrl-C reaches the task as SIGINT' '
	pty_start int "flux run -o pty.interactive sh int.sh" &&
	pty_wait int waiting &&
	pty_type "\003" &&
	pty_end int &&
	test "$(cat int.rc)" = 7 &&
	grep "caught SIGINT" int.out &&
	! grep "interrupt sent" int.out &&
	grep TERM-RESTORED int.out
'
# the task: exit 4 once a SIGWINCH came with the new size; the terminal
# is resized (by a process in the background of script(1)'s pty) once
# the task is waiting
cat >winch.sh <<'SCRIPT'
trap 'test "$(stty size)" = "40 100" && echo resized && exit 4' WINCH
echo waiting
while :; do sleep 1; done
SCRIPT
cat >resize.sh <<'SCRIPT'
trap "" TTOU
for i in $(seq 600); do grep -q waiting winch.out && break; sleep 0.1; done
stty rows 40 cols 100 </dev/tty
SCRIPT
test_expect_success 'run -o pty.interactive: a window-size change reaches the task' '
	pty_start winch "sh resize.sh & flux run -o pty.interactive sh winch.sh" &&
	pty_end winch &&
	test "$(cat winch.rc)" = 4 &&
	grep "^resized" winch.out
'
test_expect_success 'the interactive output is in the output eventlog too' '
	id=$(flux job last) &&
	flux job eventlog -p guest.output $id >winch.log &&
	grep "resized" winch.log
'
test_expect_success 'alloc -N2 through a pty: an interactive shell with job control' '
	pty_start alloc "PS1=ready: SHELL=/bin/sh flux alloc -N2" &&
	pty_wait alloc ready: &&
	pty_type "tty; stty size; echo \$0; flux getattr size\r" &&
	pty_wait alloc "^2" &&
	pty_type "case \$- in *m*) echo JOBCONTROL-ON;; esac; exit 3\r" &&
	pty_end alloc &&
	test "$(cat alloc.rc)" = 3 &&
	grep "^/dev/pts/" alloc.out &&
	grep "^33 77" alloc.out &&
	grep "^/bin/sh" alloc.out &&
	# typed before the shell printed its next prompt, the command runs
	# after it: its output may follow "ready:" on the same line
	grep -E "^(ready:)?JOBCONTROL-ON" alloc.out &&
	grep TERM-RESTORED alloc.out
'
test_expect_success 'submit -o pty.interactive, then flux job attach without a terminal' '
	id=$(flux submit -o pty.interactive sh -c "tty; echo hello-pty; exit 2") &&
	test_expect_code 2 $T flux job attach $id </dev/null >attach.out &&
	grep hello-pty attach.out &&
	grep /dev/pts/ attach.out
'
test_expect_success '-o pty: every task on a pty, its output captured' '
	$T flux run -n2 -o pty sh -c "tty >/dev/null && echo \$FLUX_TASK_RANK:tty:\$FLUX_TERMINUS_SESSION" |
		tr -d "\r" | sort >pty.out &&
	test "$(cat pty.out)" = "$(printf "0:tty:0\n1:tty:1")"
'
test_expect_success '-o pty.ranks=1: only task 1 on a pty' '
	$T flux run -n2 -o pty.ranks=1 sh -c "tty >/dev/null && echo \$FLUX_TASK_RANK:tty || echo \$FLUX_TASK_RANK:no" |
		tr -d "\r" | sort >ranks.out &&
	test "$(cat ranks.out)" = "$(printf "0:no\n1:tty")"
'
test_expect_success '-o pty.ranks=foo is refused' '
	test_must_fail $T flux run -o pty.ranks=foo true 2>bad.err &&
	grep "pty.ranks=foo" bad.err
'
test_expect_success 'alloc --bg without a command: the instance is up' '
	id=$($T flux alloc --bg -N2) &&
	echo $id >bg.id &&
	test "$($T flux proxy $id flux run -N2 hostname | sort -u)" = "$(hostname)" &&
	$T flux proxy $id flux exec -r all flux getattr broker.pid >pids &&
	test_line_count = 2 pids &&
	for pid in $(cat pids); do kill -0 $pid || return 1; done
'
test_expect_success 'flux jobs: instance.* fields of a running sub-instance' '
	id=$(cat bg.id) &&
	$T flux proxy $id flux submit --wait true &&
	flux jobs -n -o "{id.f58} {instance.stats.total}" $id >total.out &&
	test "$(cat total.out)" = "$id 2" &&
	flux jobs -n -o "{instance.stats}|{instance.progress}|{instance.utilization!P}|{instance.resources.all.ncores}|{instance.resources.free.ncores}" $id >stats.out &&
	test "$(cat stats.out)" = "PD:0 R:0 CD:2 F:0|1.0|0%|2|2" &&
	flux jobs -o "{instance.stats.total:>6}" $id >head.out &&
	test "$(head -1 head.out | tr -s " ")" = " NJOBS" &&
	test_must_fail flux jobs -o "{instance.resources.bogus.ncores}" 2>bogus.err &&
	grep "Unknown format field" bogus.err
'
test_expect_success 'flux jobs: instance.* fields are empty for other jobs' '
	jid=$(flux submit true) && flux job wait-event -t 60 $jid clean &&
	test "$(flux jobs -n -o "[{instance.stats}]" $jid)" = "[]"
'
test_expect_success 'alloc --bg: flux cancel ends it, nothing is left running' '
	id=$(cat bg.id) &&
	flux cancel $id &&
	flux job wait-event -t 120 $id clean &&
	test "$(flux jobs -n -o {status} $id)" = CANCELED &&
	for pid in $(cat pids); do
		! kill -0 $pid 2>/dev/null || { ps -fp $pid; return 1; }
	done
'
test_expect_success 'run -o pty.interactive: ctrl-] detaches, the job goes on' '
	pty_start det "flux run -o pty.interactive env PS1=ready: sh" &&
	pty_wait det ready: &&
	pty_type "echo id=\$FLUX_JOB_ID\r" &&
	pty_wait det "^id=" &&
	pty_type "echo be\035fore-lost\r" &&
	pty_end det &&
	test "$(cat det.rc)" = 0 &&
	grep "\[detached: flux job attach .* to reattach\]" det.out &&
	grep TERM-RESTORED det.out &&
	grep "^id=" det.out | tr -d "\r" | sed "s/^id=//" >det.id &&
	id=$(cat det.id) &&
	test "$(flux jobs -n -o {state} $id)" = RUN
'
test_expect_success 'flux job attach reattaches to the detached session' '
	id=$(cat det.id) &&
	pty_start re "flux job attach $id" &&
	for i in $(seq 300); do
		grep -q ready: re.out && break
		pty_type "\r"; sleep 0.2
	done &&
	pty_wait re ready: &&
	pty_type "echo again; exit 4\r" &&
	pty_end re &&
	test "$(cat re.rc)" = 4 &&
	grep "^again" re.out &&
	grep TERM-RESTORED re.out &&
	! grep "fore-lost" re.out &&
	flux job wait-event -t 60 $id clean
'
# seconds from the job's start to its finish (the shell's end)
run_time () {
	flux job eventlog $1 | awk "\$2 == \"start\" { s = \$1 }
		\$2 == \"finish\" { printf \"%.1f\n\", \$1 - s }"
}
test_expect_success 'an interactive job nobody attaches to ends with its task' '
	id=$(flux submit -o pty.interactive sh -c "echo nobody-attached") &&
	flux job wait-event -t 60 $id clean &&
	t=$(run_time $id) && echo "start to finish: $t s" &&
	test "$(echo "$t < 5" | bc 2>/dev/null || awk "BEGIN { print ($t < 5) }")" = 1 &&
	$T flux job attach $id </dev/null >late.out &&
	grep nobody-attached late.out
'
test_expect_success 'a late attach on a terminal shows its output once' '
	id=$(flux job last) &&
	pty_start late "flux job attach $id" &&
	pty_end late &&
	test "$(cat late.rc)" = 0 &&
	test "$(grep -c nobody-attached late.out)" = 1
'
test_expect_success 'uncaptured: the session still waits for a first client' '
	id=$(flux submit -o pty.interactive -o pty.capture=0 sh -c "echo unseen") &&
	pty_start unc "flux job attach $id" &&
	pty_end unc &&
	grep unseen unc.out &&
	flux job wait-event -t 60 $id clean
'
test_expect_success 'a client attaching while the task runs gets the backlog' '
	id=$(flux submit -o pty.interactive sh -c "echo early-out; sleep 3; echo late-out") &&
	for i in $(seq 600); do
		flux job eventlog -p guest.output $id 2>/dev/null |
			grep -q early-out && break
		sleep 0.1
	done &&
	pty_start bl "flux job attach $id" &&
	pty_end bl &&
	test "$(grep -c early-out bl.out)" = 1 &&
	test "$(grep -c late-out bl.out)" = 1
'
test_expect_success 'stop the instance' '
	stop_instance top
'
test_done
