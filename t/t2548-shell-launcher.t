#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='the shell launcher (doc/guide/exec.md "The shell
launcher"): the instance owner'"'"'s job shells are forked by one resident
flux-shell --launcher, not spawned.  Output, exit codes, signals, kill,
cancel and time limit are as before; no zombie is left; kill -9 of the
launcher fails the running job and the next job gets a new launcher; a
reload of the agent under a running shell; the off switch (module option
and configuration) and the fallback to posix_spawn.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

T="timeout -k 10 120"
SHELL_BIN="$FLUX_BUILD_DIR/src/shell/flux-shell"

stats () {
	flux module stats exec-agent | jq -r ".shells.$1"
}
# zombies PID: the zombie children of PID (none: empty)
zombies () {
	ps -o pid=,stat= --ppid $1 | awk '$2 ~ /^Z/ {print $1}'
}
# the job's task writes its shell's pid and the shell's parent's pid
# to NAME.shell and NAME.parent, then waits for NAME.go (120 s at most)
waiting_job () {
	name=$1; shift
	flux submit "$@" sh -c "echo \$PPID >$name.shell.tmp &&
		ps -o ppid= -p \$PPID | tr -d \" \" >$name.parent &&
		mv $name.shell.tmp $name.shell &&
		n=0; while ! test -e $name.go && test \$n -lt 1200; do
		sleep 0.1; n=\$((n+1)); done"
}
wait_file () {
	for i in $(seq 600); do test -s $1 && return 0; sleep 0.1; done
	return 1
}
status () {
	flux job eventlog $1 | sed -n "s/.* finish status=\([0-9]*\).*/\1/p"
}

test_expect_success 'start an instance of 1 broker' '
	start_instance one 1 &&
	BROKER=$(flux getattr broker.pid)
'
test_expect_success 'the launcher starts with the first job, a child of the broker' '
	test "$(stats launcher.pid)" = 0 &&
	$T flux run true &&
	L=$(stats launcher.pid) &&
	test "$L" -gt 0 &&
	test "$(ps -o ppid= -p $L | tr -d " ")" = $BROKER &&
	test "$(readlink /proc/$L/exe)" = "$(readlink -f $SHELL_BIN)" &&
	tr "\0" " " </proc/$L/cmdline | grep -e "--launcher [0-9]" &&
	test "$(stats forked)" = 1 && test "$(stats launcher.starts)" = 1
'
test_expect_success 'a job shell is a child of the launcher, in a session of its own' '
	$T flux run sh -c "ps -o ppid=,sid=,pgid= -p \$PPID; echo \$PPID" >par.out &&
	set -- $(cat par.out) &&
	test "$1" = $L && test "$2" = "$4" && test "$3" = "$4" &&
	test "$(stats forked)" = 2 &&
	test "$(stats launcher.starts)" = 1
'
test_expect_success 'a forked shell is given its shell-info: it does not ask' '
	given=$(stats \"info-given\") && asked=$(stats \"info-asked\") &&
	$T flux run -n2 sh -c "printenv FLUX_SHELL_INFO; echo \$FLUX_TASK_RANK" \
		>info.out &&
	test_debug "cat info.out" &&
	sort info.out >info.sorted &&
	printf "0\n1\n" >info.expected &&
	test_cmp info.expected info.sorted &&
	test "$(stats \"info-given\")" = $((given + 1)) &&
	test "$(stats \"info-asked\")" = $asked
'
# a jobspec of 140 KB (its environment: two variables of 70 KB, each
# under the 128 KiB of one exec string): the answer would not fit in the
# START packet (128 KiB), so the forked shell asks for it
test_expect_success 'a shell-info too big for the START packet: the shell asks' '
	given=$(stats \"info-given\") && asked=$(stats \"info-asked\") &&
	big=$(head -c 70000 /dev/zero | tr "\0" y) &&
	BIGA=$big BIGB=$big $T flux run --env=BIGA --env=BIGB \
		sh -c "echo \${#BIGA} \${#BIGB}" >big.out &&
	test "$(cat big.out)" = "70000 70000" &&
	test "$(stats \"info-given\")" = $given &&
	test "$(stats \"info-asked\")" = $((asked + 1)) &&
	test "$(stats \"spawned-instead\")" = 0
'
test_expect_success 'a shell given a malformed shell-info fails the job, clearly' '
	FLUX_SHELL_INFO="{bad" FLUX_KVS_NAMESPACE=job-1 \
		test_must_fail $SHELL_BIN 1 2>badinfo.err &&
	grep "FLUX_SHELL_INFO: .*expected" badinfo.err
'
test_expect_success 'the shell runs as flux-shell, with the job'"'"'s environment' '
	$T flux run --env=LTEST=abc sh -c "cat /proc/\$PPID/comm; echo \$LTEST \$FLUX_KVS_NAMESPACE" >env.out &&
	head -1 env.out | grep "^flux-shell$" &&
	tail -1 env.out | grep "^abc job-"
'
test_expect_success 'ps and pgrep -f show a forked shell as SHELL ID' '
	$T flux run sh -c "ps -o args= -p \$PPID; flux job id --to=dec \$FLUX_JOB_ID; pgrep -fx \"\$(ps -o args= -p \$PPID)\"; echo \$PPID" >title.out &&
	set -- $(cat title.out) &&
	test "$(basename $1)" = flux-shell && test "$2" = "$3" &&
	test "$4" = "$5"
'
test_expect_success 'the launcher binds its symbols at once (LD_BIND_NOW), not the tasks' '
	tr "\0" "\n" </proc/$L/environ | grep -x LD_BIND_NOW=1 &&
	test_expect_code 1 $T flux run --env=-LD_BIND_NOW printenv LD_BIND_NOW
'
test_expect_success 'output, stderr and exit codes come through' '
	$T flux run sh -c "echo out; echo err >&2" >o.out 2>o.err &&
	grep "^out$" o.out && grep "^err$" o.err &&
	test_expect_code 3 $T flux run sh -c "exit 3" &&
	test_expect_code 137 $T flux run sh -c "kill -9 \$\$" &&
	test_expect_code 127 $T flux run nosuchcmd 2>nocmd.err
'
test_expect_success 'a multi-task job: every task runs' '
	$T flux run -n2 -l sh -c "echo \$FLUX_TASK_RANK" | sort >n2.out &&
	printf "0: 0\n1: 1\n" >n2.exp &&
	test_cmp n2.exp n2.out
'
test_expect_success 'flux job kill reaches the tasks of a forked shell' '
	id=$(waiting_job kill) &&
	wait_file kill.shell &&
	test "$(cat kill.parent)" = $L &&
	flux job kill $id &&
	flux job wait-event -t 60 $id clean &&
	test "$(status $id)" = $(((128 + 15) << 8))
'
test_expect_success 'cancel ends a job of a forked shell' '
	id=$(waiting_job cancel) &&
	wait_file cancel.shell &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id | grep "exception.*type=\"cancel\""
'
test_expect_success 'a time limit kills it (exit 142)' '
	test_expect_code 142 $T flux run -t 1s sleep 100
'
test_expect_success 'no zombie is left under the broker or the launcher' '
	eventually "zombies $L" "" &&
	eventually "zombies $BROKER" "" &&
	test $(ps -o pid= --ppid $L | wc -l) = 0
'
test_expect_success 'kill -9 of the launcher fails the running job, not hanging' '
	id=$(waiting_job dead) &&
	wait_file dead.shell &&
	test "$(cat dead.parent)" = $L &&
	kill -9 $L &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id >dead.ev &&
	{ grep "exception" dead.ev || test "$(status $id)" != 0; } &&
	flux dmesg | grep "exec-agent.*the shell launcher died: 1 running job shell lost" &&
	gone $(cat dead.shell) &&
	test "$(stats launcher.deaths)" = 1 && test "$(stats launcher.lost)" = 1
'
test_expect_success 'the next job gets a new launcher' '
	$T flux run echo again >again.out &&
	grep "^again$" again.out &&
	L2=$(stats launcher.pid) &&
	test "$L2" -gt 0 && test "$L2" != "$L" &&
	test "$(stats launcher.starts)" = 2 &&
	test_must_fail kill -0 $L 2>/dev/null &&
	L=$L2
'
test_expect_success 'no zombie after the launcher died' '
	eventually "zombies $L" "" &&
	eventually "zombies $BROKER" ""
'
test_expect_success 'a reload of exec-agent under a running shell: it is ended, the launcher exits' '
	id=$(waiting_job reload) &&
	wait_file reload.shell &&
	test "$(cat reload.parent)" = $L &&
	flux module reload exec-agent &&
	flux job wait-event -t 60 $id clean &&
	gone $(cat reload.shell) &&
	gone $L &&
	eventually "zombies $BROKER" "" &&
	$T flux run true &&
	L=$(stats launcher.pid) && test "$L" -gt 0
'
test_expect_success 'shell-launcher=0: shells are spawned by the broker' '
	flux module reload exec-agent shell-launcher=0 &&
	$T flux run sh -c "ps -o ppid= -p \$PPID" >off.out &&
	test "$(tr -d " " <off.out)" = $BROKER &&
	test "$(stats forked)" = 0 &&
	test "$(stats \"info-given\")" = 0 &&
	test "$(stats \"info-asked\")" = 1 &&
	test "$(stats launcher.enabled)" = false &&
	test "$(stats launcher.pid)" = 0
'
test_expect_success 'job-shell= given: no launcher unless shell-launcher=1' '
	flux module reload exec-agent job-shell=$SHELL_BIN &&
	$T flux run true &&
	test "$(stats forked)" = 0 &&
	flux module reload exec-agent job-shell=$SHELL_BIN shell-launcher=1 &&
	$T flux run true &&
	test "$(stats forked)" = 1
'
test_expect_success 'a launcher that exits at its start: shells are spawned instead' '
	NL=$TMPDIR/notlauncher.sh &&
	cat >$NL <<-EOF &&
	#!/bin/sh
	test "\$1" = --launcher && exit 1
	exec $SHELL_BIN "\$@"
	EOF
	chmod +x $NL &&
	flux module reload exec-agent job-shell=$NL shell-launcher=1 &&
	$T flux run echo spawned >sp.out &&
	grep "^spawned$" sp.out &&
	$T flux run true &&
	test "$(stats forked)" = 0 &&
	test "$(stats started)" = 2 &&
	test "$(stats launcher.enabled)" = false &&
	flux dmesg | grep "exec-agent.*the shell launcher exited at its start"
'
# The launcher cannot even be spawned (a job shell that is not there, as
# on a node where flux-shell was not installed): the broker used to abort
# (uv_close of a handle never initialized); the job fails, the broker
# lives, and the next agent starts shells again.
test_expect_success 'a job shell that does not exist: the job fails, the broker lives' '
	flux module reload exec-agent job-shell=$TMPDIR/nonexistent/flux-shell \
		shell-launcher=1 &&
	test_must_fail $T flux run true 2>ne.err &&
	grep "job shell: .*nonexistent/flux-shell: no such file or directory" \
		ne.err &&
	flux dmesg | grep "exec-agent.*nonexistent/flux-shell --launcher: No such file or directory: job shells are spawned" &&
	test "$(flux getattr broker.pid)" = $BROKER &&
	flux module reload exec-agent &&
	$T flux run echo back >back.out &&
	grep "^back$" back.out
'
test_expect_success 'a job of a shell override (jobspec) is spawned' '
	flux module reload exec-agent &&
	$T flux run -S exec.job_shell=$SHELL_BIN sh -c "ps -o ppid= -p \$PPID" >ov.out &&
	test "$(tr -d " " <ov.out)" = $BROKER &&
	test "$(stats forked)" = 0
'
test_expect_success 'stop the instance: the launcher goes with it' '
	$T flux run true &&
	L=$(stats launcher.pid) &&
	stop_instance one &&
	gone $L
'
test_expect_success 'exec.shell-launcher = false in the configuration' '
	mkdir $TMPDIR/conf.d &&
	printf "[exec]\nshell-launcher = false\n" >$TMPDIR/conf.d/exec.toml &&
	$T flux start -s 1 -Sconfig.path=$TMPDIR/conf.d sh -c "
		flux run sh -c \"ps -o ppid= -p \\\$PPID\" | tr -d \" \" >cf.out &&
		flux getattr broker.pid >cf.exp &&
		flux module stats exec-agent | jq -e \".shells.forked == 0\"" &&
	test_cmp cf.exp cf.out
'
test_expect_success 'a broker environment too large for a request: spawned instead' '
	BIG1=$(head -c 100000 /dev/zero | tr "\0" x) &&
	BIG2=$BIG1 &&
	export BIG1 BIG2 &&
	$T flux start -s 1 sh -c "
		flux run echo big >big.out &&
		flux module stats exec-agent | jq -e \".shells.forked == 0\" &&
		flux module stats exec-agent | jq -e \".shells.\\\"spawned-instead\\\" == 1\" &&
		flux dmesg | grep \"exec-agent.*this shell is spawned\"" &&
	unset BIG1 BIG2 &&
	grep "^big$" big.out
'
test_done
