#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='flux exec --bg, --waitable and --label, and flux sproc
ps, kill and wait (PROTOCOLS-exec.md 1.5, 1.7; flux-sproc(1)), on 2
brokers'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

# a duration no other test uses, to find our processes by their argv
D=300.$$

test_expect_success 'start 2 brokers' '
	start_instance a 2
'
test_expect_success 'flux exec --bg prints rank: pid per rank and returns' '
	timeout -k 10 60 flux exec --bg sleep ${D}1 >bg.out &&
	test $(wc -l <bg.out) -eq 2 &&
	grep -q "^0: [0-9][0-9]*$" bg.out &&
	grep -q "^1: [0-9][0-9]*$" bg.out &&
	pid0=$(sed -n "s/^0: //p" bg.out) &&
	test "$(ps -o args= -p $pid0)" = "sleep ${D}1"
'
test_expect_success 'flux sproc ps lists them, running' '
	flux sproc ps -r 0 >ps.out &&
	head -n 1 ps.out | grep "^ *PID STAT FLAGS  *LABEL  *COMMAND$" &&
	pid0=$(sed -n "s/^0: //p" bg.out) &&
	grep "^ *$pid0 R   bg  *- *sleep$" ps.out &&
	flux sproc ps -n -r 1 >ps1.out &&
	pid1=$(sed -n "s/^1: //p" bg.out) &&
	grep "^ *$pid1 R " ps1.out &&
	test_must_fail grep PID ps1.out
'
test_expect_success 'flux sproc kill by pid; a non-waitable process is gone' '
	pid0=$(sed -n "s/^0: //p" bg.out) &&
	flux sproc kill -r 0 TERM $pid0 &&
	for i in $(seq 100); do
		flux sproc ps -n -r 0 | grep -q "^ *$pid0 " || break
		sleep 0.1
	done &&
	test_must_fail flux sproc wait -r 0 $pid0 2>wait0.err &&
	grep "flux-sproc: wait pid $pid0:" wait0.err &&
	pid1=$(sed -n "s/^1: //p" bg.out) &&
	flux sproc kill -r 1 9 $pid1
'
test_expect_success '--bg --waitable --label: wait -o gives output and exit code' '
	flux exec -r 1 --bg --waitable --label=w1 \
		sh -c "echo out1; echo err1 >&2; exit 3" >w1.out &&
	grep "^1: " w1.out &&
	for i in $(seq 100); do
		flux sproc ps -n -r 1 | grep -q " Z .* w1 " && break
		sleep 0.1
	done &&
	flux sproc ps -n -r 1 | grep " Z   bg,waitable w1  *sh$" &&
	test_expect_code 3 flux sproc wait -r 1 -o w1 >wo.out 2>we.out &&
	echo out1 >wo.exp &&
	test_cmp wo.exp wo.out &&
	echo err1 >we.exp &&
	test_cmp we.exp we.out &&
	test_must_fail flux sproc wait -r 1 w1 2>again.err &&
	grep "wait w1: " again.err &&
	flux sproc ps -n -r 1 >ps2.out &&
	test_must_fail grep w1 ps2.out
'
test_expect_success 'flux sproc kill -w by label: 128+signal' '
	flux exec -r 0 --bg --waitable --label=w2 sleep ${D}2 &&
	test_expect_code 143 flux sproc kill -w -r 0 TERM w2
'
test_expect_success 'a label must be unique on a server' '
	flux exec -r 0 --bg --waitable --label=w3 sleep ${D}3 &&
	test_must_fail flux exec -r 0 --bg --label=w3 true 2>dup.err &&
	grep "flux-exec: Error: rank 0: true: .*label is not unique" dup.err &&
	test_expect_code 137 flux sproc kill -w -r 0 KILL w3
'
test_expect_success 'errors: start failure, bad signal, unknown process, usage' '
	test_must_fail flux exec -r 0 --bg /nonexistent/cmd >nf.out 2>nf.err &&
	grep "flux-exec: Error: rank 0: /nonexistent/cmd: " nf.err &&
	test_must_be_empty nf.out &&
	test_must_fail flux exec --waitable true 2>wt.err &&
	grep "waitable requires --bg" wt.err &&
	test_must_fail flux sproc kill -r 0 NOSUCH 1 2>sig.err &&
	grep "invalid signal" sig.err &&
	test_must_fail flux sproc kill -r 0 15 999999 2>esrch.err &&
	grep "does not belong to any subprocess" esrch.err &&
	test_must_fail flux sproc wait 2>usage.err &&
	grep "expected PID|LABEL" usage.err
'
test_expect_success 'flux exec --label in the foreground' '
	flux exec -r 0 --label=fg1 sh -c "flux sproc ps -n -r 0 | grep fg1" >fg.out &&
	grep " R+  -  *fg1 " fg.out
'
# ps_f RANK FORMAT: flux sproc ps -n with that format
ps_f () { flux sproc ps -n -r $1 -o "$2"; }
test_expect_success 'ps --format: every field of a waitable labeled process' '
	flux exec -r 1 --bg --waitable --label=f1 sleep ${D}4 >f1.out &&
	pid=$(sed -n "s/^1: //p" f1.out) &&
	ps_f 1 "{pid} {state} {statex} {flags} {attached:h} {label} {rank} {cmd}" \
		>f1.ps &&
	echo "$pid R R bg,waitable - f1 1 sleep" >f1.exp &&
	test_cmp f1.exp f1.ps &&
	ps_f 1 "[{attached}]" >f1.att &&
	echo "[]" >f1.att.exp &&
	test_cmp f1.att.exp f1.att
'
test_expect_success 'ps --format: a pending wait attaches a client (statex R+)' '
	# (not a bare wait below: the instance runs in the background too)
	{ flux sproc wait -r 1 f1 >/dev/null 2>&1 & } &&
	wpid=$! &&
	for i in $(seq 100); do
		ps_f 1 "{label} {statex} {attached}" | grep -q "^f1 R+ Y$" && break
		sleep 0.1
	done &&
	ps_f 1 "{label} {statex} {attached}" >att.ps &&
	echo "f1 R+ Y" >att.exp &&
	test_cmp att.exp att.ps &&
	flux sproc kill -r 1 KILL f1 &&
	test_expect_code 137 wait $wpid
'
test_expect_success 'ps --format: alignment, fill, width, headings, braces' '
	flux exec -r 0 --bg --label=averyveryverylonglabel sleep ${D}5 &&
	flux sproc ps -r 0 -o "+:{label:<4}|{label:*^26}|{rank:<3}|{{x}}" >al.out &&
	printf "%s\n" \
		"LABEL                 |**********LABEL***********|RANK|{x}" \
		"averyveryverylonglabel|**averyveryverylonglabel**|0  |{x}" \
		>al.exp &&
	test_cmp al.exp al.out &&
	test_must_fail ps_f 0 "{pid:>12}|{label:>5.}|" 2>bad.err &&
	grep "Invalid format specifier for label" bad.err &&
	flux sproc kill -r 0 TERM averyveryverylonglabel
'
test_expect_success 'ps --format: errors are usage errors' '
	test_must_fail ps_f 0 "{foo}" 2>foo.err &&
	grep "Unknown format field: foo" foo.err &&
	test_must_fail ps_f 0 "{pid" 2>open.err &&
	grep "expected .}." open.err &&
	test_must_fail ps_f 0 "pid}" 2>close.err &&
	grep "single .}." close.err &&
	test_must_fail ps_f 0 "{label:d}" 2>d.err &&
	grep "Invalid format specifier for label" d.err &&
	ps_f 0 "{pid:d}" >/dev/null
'
# attached LABEL RANK: wait until a client is attached to LABEL on RANK
attached () {
	for i in $(seq 300); do
		ps_f $2 "{label} {statex}" | grep -q "^$1 R+$" && return 0
		sleep 0.1
	done
	ps_f $2 "{label} {statex} {pid}" >&2 # what it was waiting for
	return 1
}
test_expect_success 'flux exec --attach LABEL: later output and the exit code' '
	flux exec -r 1 --bg --label=at1 sh -c \
		"while ! test -e go1; do sleep 0.1; done; echo out1; echo err1 >&2; exit 5" &&
	{ flux exec -r 1 --attach=at1 >at1.out 2>at1.err & } &&
	apid=$! &&
	attached at1 1 &&
	touch go1 &&
	test_expect_code 5 wait $apid &&
	echo out1 >at1.exp &&
	test_cmp at1.exp at1.out &&
	printf "err1\n1: Exit 5\n" >at1e.exp &&
	test_cmp at1e.exp at1.err &&
	test_must_fail flux sproc kill -r 1 TERM at1
'
test_expect_success 'flux exec --attach PID -l; a second attach is refused (busy)' '
	flux exec -r 1 --bg --waitable --label=at2 sh -c \
		"while ! test -e go2; do sleep 0.1; done; echo out2; kill -TERM \$\$" &&
	pid=$(ps_f 1 "{label} {pid}" | sed -n "s/^at2 //p") &&
	test -n "$pid" &&
	{ flux exec -r 1 -l --attach $pid >at2.out & } &&
	apid=$! &&
	attached at2 1 &&
	test_must_fail flux exec -r 1 --attach $pid 2>busy.err &&
	grep "flux-exec: Error: rank 1: attach $pid: subprocess is busy" busy.err &&
	touch go2 &&
	test_expect_code 143 wait $apid &&
	echo "1: out2" >at2.exp &&
	test_cmp at2.exp at2.out &&
	ps_f 1 "{label}" >at2.ps &&
	test_must_fail grep -x at2 at2.ps
'
test_expect_success 'Ctrl-C detaches (exit 0); the process runs on, unattached' '
	flux exec -r 0 --bg --waitable --label=at3 sh -c \
		"while ! test -e go3; do sleep 0.1; done; exit 7" &&
	{ flux exec --attach=at3 & } &&
	apid=$! &&
	attached at3 0 &&
	kill -INT $apid &&
	for i in $(seq 300); do kill -0 $apid 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 $apid 2>/dev/null &&
	wait $apid &&
	ps_f 0 "{label} {statex} {attached:h}" | grep -x "at3 R -" &&
	touch go3 &&
	test_expect_code 7 flux sproc wait -r 0 at3
'
test_expect_success 'flux exec --attach: errors' '
	test_expect_code 1 flux exec -r 1 --attach nosuch 2>nos.err &&
	grep "flux-exec: Error: rank 1: attach nosuch: no such subprocess" nos.err &&
	test_must_fail flux exec -r 0-1 --attach x 2>two.err &&
	grep "one rank is required" two.err &&
	test_must_fail flux exec --attach x true 2>cmd.err &&
	grep "takes no command" cmd.err &&
	test_must_fail flux exec --bg --attach x 2>bg.err &&
	grep "cannot be used with --bg" bg.err
'
test_expect_success '--help of flux exec and flux sproc, and the man pages' '
	flux exec --help | grep -e "--bg" &&
	flux exec --help | grep -e "--waitable" &&
	flux exec --help | grep -e "--attach" &&
	grep -e "-attach" $FLUX_SOURCE_DIR/doc/man1/flux-exec.1 &&
	flux sproc --help | grep "Usage: flux sproc" &&
	flux sproc wait --help | grep -e "--output" &&
	flux sproc ps --help | grep -e "--format" &&
	grep -e "-format" $FLUX_SOURCE_DIR/doc/man1/flux-sproc.1 &&
	test -f $FLUX_SOURCE_DIR/doc/man1/flux-sproc.1 &&
	grep -e "-waitable" $FLUX_SOURCE_DIR/doc/man1/flux-exec.1
'
test_expect_success 'stop the instance; no process of ours is left' '
	stop_instance a &&
	for i in $(seq 100); do
		pgrep -f "sleep ${D}" >/dev/null || break
		sleep 0.1
	done &&
	test_must_fail pgrep -af "sleep ${D}"
'
test_done
