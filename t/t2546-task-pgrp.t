#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='every task of a job leads a process group of its own
and the shell signals the group (as flux-core, libsubprocess SETPGRP):
cancel, flux job kill, the time limit and the kill sequence reach what a
task started, not only the task (issue 21).  The kill-timeout is 60 s
here, so a job that ends within 30 s of its cancel was ended by the
signal, not by the final SIGKILL.  A shell killed from outside (kill
-9) or stopped through the kill sequence: its tasks die with it
(PR_SET_PDEATHSIG), what they started by the agent'"'"'s SIGKILL of the
groups the shell reported.  The nosetpgrp shell option.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

# a duration no other test uses, to find our processes by their argv
D=300.$$
T="timeout -k 10 120"

# a task sh whose child runs in the background: "sh -c 'cmd & wait'";
# NAME.child.TASKRANK gets the child's pid
bg_task () {
	echo "sleep $D & echo \$! >$1.child.\$FLUX_TASK_RANK; wait"
}

test_expect_success 'start a broker; job-exec with kill-timeout=60s' '
	start_instance a 1 &&
	flux module reload job-exec kill-timeout=60s
'
test_expect_success 'cancel: a child of each task is gone at once' '
	id=$(flux submit -n2 sh -c "$(bg_task cancel)") &&
	wait_file cancel.child.0 && wait_file cancel.child.1 &&
	flux cancel $id &&
	flux job wait-event -t 30 $id clean &&
	gone $(cat cancel.child.0) &&
	gone $(cat cancel.child.1)
'
test_expect_success '"a; sleep" canceled: the foreground child is gone too' '
	id=$(flux submit sh -c "true; echo \$\$ >fg.sh; exec 3>&1; sleep $D") &&
	wait_file fg.sh &&
	for i in $(seq 300); do
		pgrep -f "^sleep $D\$" >fg.child && break
		sleep 0.1
	done &&
	flux cancel $id &&
	flux job wait-event -t 30 $id clean &&
	gone $(cat fg.child)
'
test_expect_success 'flux job kill -s USR1 reaches a child of the task sh' '
	cat >usr1.sh <<-EOF &&
	trap "echo parent >>usr1.got" USR1
	sh -c "trap \"echo child >>usr1.got; exit 0\" USR1; echo \\\$\\\$ >usr1.child
		while :; do sleep 0.1; done" &
	wait; wait
	EOF
	id=$(flux submit sh usr1.sh) &&
	wait_file usr1.child &&
	flux job kill -s SIGUSR1 $id &&
	flux job wait-event -t 30 $id clean &&
	grep -x child usr1.got &&
	grep -x parent usr1.got &&
	flux job eventlog $id | grep "finish status=0"
'
test_expect_success 'a time limit ends a task tree (SIGALRM to the group)' '
	id=$(flux submit -t 2s sh -c "$(bg_task tl)") &&
	wait_file tl.child.0 &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id | grep "exception type=\"timeout\"" &&
	gone $(cat tl.child.0)
'
test_expect_success 'kill sequence: tasks ignoring SIGTERM die by SIGKILL, children too' '
	flux module reload job-exec kill-timeout=1s &&
	id=$(flux submit -n2 sh -c "trap \"\" TERM; $(bg_task term)") &&
	wait_file term.child.0 && wait_file term.child.1 &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean &&
	flux job eventlog $id | grep "finish status=9" &&
	gone $(cat term.child.0) &&
	gone $(cat term.child.1)
'
# A process that leaves its task's group and session (setsid) is out of
# reach of the signals to the groups, but a child of the shell (its
# subreaper) once its parent is gone: the kill sequence's SIGURG makes
# the shell SIGKILL its children and their groups (t2547: the rest).
test_expect_success 'a process that calls setsid dies with the kill sequence' '
	id=$(flux submit sh -c "trap \"\" TERM;
		setsid sh -c \"echo \\\$\\\$ >sid.child; exec sleep $D\" & wait") &&
	wait_file sid.child &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean &&
	gone $(cat sid.child) 5
'
# The shell killed from outside: its tasks die with it (their death
# signal), their children by the agent's SIGKILL of the groups the shell
# reported.  Within seconds, not at the 60 s kill-timeout (there is no
# kill sequence here at all).
test_expect_success 'job-exec with kill-timeout=60s again' '
	flux module reload job-exec kill-timeout=60s
'
# a task that writes its shell pid and its own, then runs bg_task
k9_task () {
	echo "echo \$PPID >$1.shell.\$FLUX_TASK_RANK;
		echo \$\$ >$1.task.\$FLUX_TASK_RANK; $(bg_task $1)"
}
test_expect_success 'kill -9 of the shell: its tasks and their children are gone' '
	id=$(flux submit -n2 sh -c "$(k9_task k9)") &&
	wait_file k9.child.0 && wait_file k9.child.1 &&
	wait_file k9.shell.0 &&
	kill -9 $(cat k9.shell.0) &&
	gone $(cat k9.task.0) 5 && gone $(cat k9.task.1) 5 &&
	gone $(cat k9.child.0) 5 && gone $(cat k9.child.1) 5 &&
	flux job wait-event -t 30 $id clean &&
	flux job eventlog $id >k9.ev &&
	grep "exception type=\"exec\" severity=0" k9.ev &&
	grep "Killed" k9.ev
'
test_expect_success 'a shell stopped through the kill sequence: its tasks trees are gone' '
	flux module reload job-exec kill-timeout=1s &&
	id=$(flux submit -n2 sh -c "$(k9_task st)") &&
	wait_file st.child.0 && wait_file st.child.1 &&
	wait_file st.shell.0 &&
	kill -STOP $(cat st.shell.0) &&
	flux cancel $id &&
	flux job wait-event -t 60 $id clean &&
	gone $(cat st.task.0) 5 && gone $(cat st.task.1) 5 &&
	gone $(cat st.child.0) 5 && gone $(cat st.child.1) 5
'
test_expect_success 'the task of a killed shell that exited early: its child is gone too' '
	flux module reload job-exec kill-timeout=60s &&
	id=$(flux submit -n2 sh -c "
		if test \$FLUX_TASK_RANK = 0; then
			echo \$PPID >ex.shell
			sleep $D </dev/null >/dev/null 2>&1 & echo \$! >ex.child; exit 0
		fi; sleep $D") &&
	wait_file ex.child && wait_file ex.shell &&
	flux job wait-event -t 30 -p exec $id shell.task-exit &&
	kill -9 $(cat ex.shell) &&
	gone $(cat ex.child) 5 &&
	flux job wait-event -t 30 $id clean
'
# -o nosetpgrp (flux-core): tasks stay in the shell's process group and
# each signal goes to the task alone; what a task started is reached by
# the kill sequence's SIGKILL of the shell's group (kill-timeout=1s).
test_expect_success 'nosetpgrp: the task is in the shell'"'"'s group' '
	id=$(flux submit -o nosetpgrp sh -c \
		"ps -o pgid= -p \$\$ >np.task; ps -o pgid= -p \$PPID >np.shell") &&
	flux job wait-event -t 30 $id clean &&
	test $(cat np.task) -eq $(cat np.shell) &&
	id=$(flux submit sh -c "ps -o pgid= -p \$\$ >gp.task; echo \$\$ >gp.pid") &&
	flux job wait-event -t 30 $id clean &&
	test $(cat gp.task) -eq $(cat gp.pid)
'
test_expect_success 'nosetpgrp: a signal reaches the task, not its child' '
	flux module reload job-exec kill-timeout=1s &&
	cat >np1.sh <<-EOF &&
	trap "echo parent >>np1.got" USR1
	sh -c "trap \\"echo child >>np1.got\\" USR1; echo \\\$\\\$ >np1.child
		while :; do sleep 0.1; done" &
	while :; do wait; done
	EOF
	id=$(flux submit -o nosetpgrp sh np1.sh) &&
	wait_file np1.child &&
	flux job kill -s SIGUSR1 $id &&
	wait_file np1.got &&
	sleep 1 &&
	flux cancel $id &&
	flux job wait-event -t 30 $id clean &&
	grep -x parent np1.got &&
	test_must_fail grep -x child np1.got &&
	gone $(cat np1.child)
'
test_expect_success 'nosetpgrp: cancel ends the task, the kill sequence its child' '
	id=$(flux submit -o nosetpgrp sh -c "$(bg_task npc)") &&
	wait_file npc.child.0 &&
	flux cancel $id &&
	flux job wait-event -t 30 $id clean &&
	gone $(cat npc.child.0)
'
test_expect_success 'nosetpgrp: kill -9 of the shell ends the task and its child' '
	id=$(flux submit -o nosetpgrp sh -c "$(k9_task npk)") &&
	wait_file npk.child.0 && wait_file npk.shell.0 &&
	kill -9 $(cat npk.shell.0) &&
	gone $(cat npk.task.0) 5 && gone $(cat npk.child.0) 5 &&
	flux job wait-event -t 30 $id clean
'
test_expect_success 'no process of these jobs is left' '
	flux module reload job-exec &&
	for i in $(seq 100); do
		pgrep -f "sleep $D" >left || break
		sleep 0.1
	done &&
	test_must_fail pgrep -f "sleep $D"
'
test_expect_success 'stop the broker' '
	stop_instance a
'
test_done
