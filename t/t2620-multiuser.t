#!/bin/sh
test_description='multi-user instance end to end (root): two users, a
private munged with a fresh key, flux-imp installed setuid in a temporary
directory with a root-owned configuration, an instance started by an
unprivileged owner with exec.imp: jobs run as their users, users cannot
touch each other'"'"'s jobs, forged or borrowed J are refused, root jobs
are refused, a cancelled job leaves no process'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

if test "$(id -u)" != 0; then
	skip_all='needs root (users, munged, a setuid IMP)'
	test_done
fi
for cmd in /usr/sbin/munged munge useradd userdel setpriv; do
	if ! command -v $cmd >/dev/null; then
		skip_all="needs $cmd"
		test_done
	fi
done

IMPBIN="$FLUX_BUILD_DIR/src/imp/flux-imp-test"
IMPSIGN="$FLUX_BUILD_DIR/src/imp/imp-sign"
SUBMITREQ="$FLUX_BUILD_DIR/t/submitreq"
SHELL_PATH="$FLUX_BUILD_DIR/src/shell/flux-shell"
FLUX="$FLUX_BUILD_DIR/src/cmd/flux"
# Everything the users touch lives under one root-owned 0755 directory
# without blanks (the trash directory's name has one).
TOP=$(mktemp -d /tmp/flux-t2620.XXXXXX)
chmod 755 $TOP
MUNGEDIR=$TOP/munge
IMPDIR=$TOP/imp
CONFDIR=$TOP/conf
SHARED=$TOP/shared
RD=$TOP/owner/rundir
OWNER=fluxt-owner
ALICE=fluxt-alice
BOB=fluxt-bob
export FLUX_MUNGE_SOCKET=$MUNGEDIR/munge.socket
# the users cannot read root'"'"'s directories that may be on PATH
SAFE_PATH=$FLUX_BUILD_DIR/src/cmd:/usr/sbin:/usr/bin:/sbin:/bin

cleanup () {
	test -f $TOP/done || touch $TOP/done 2>/dev/null
	if test -f $TOP/start.pid; then
		pid=$(cat $TOP/start.pid)
		i=0
		while kill -0 $pid 2>/dev/null && test $i -lt 300; do
			sleep 0.1; i=$((i + 1))
		done
		kill -9 $pid 2>/dev/null
	fi
	for u in $ALICE $BOB $OWNER; do
		pkill -9 -u $u 2>/dev/null
	done
	"$SHARNESS_TEST_SRCDIR/munge-helper.sh" stop $MUNGEDIR
	for u in $ALICE $BOB $OWNER; do
		userdel $u 2>/dev/null
	done
	rm -rf $TOP
}

as () { # USER CMD... : run CMD as USER against the instance
	u=$1; shift
	setpriv --reuid=$u --regid=$(id -g $u) --init-groups \
		env FLUX_URI=local://$RD/local-0 HOME=/ PATH=$SAFE_PATH "$@"
}

test_expect_success 'set up: three users, munged, the IMP setuid' '
	for u in $OWNER $ALICE $BOB; do
		id $u >/dev/null 2>&1 ||
		useradd -M -N -d / -s /bin/sh $u || return 1
	done &&
	"$SHARNESS_TEST_SRCDIR/munge-helper.sh" start $MUNGEDIR &&
	mkdir -m 755 $IMPDIR $IMPDIR/conf.d $CONFDIR &&
	mkdir -m 1777 $SHARED &&
	mkdir -m 755 $TOP/owner && chown $OWNER $TOP/owner &&
	cp "$IMPBIN" $IMPDIR/flux-imp &&
	chown root:root $IMPDIR/flux-imp && chmod 4755 $IMPDIR/flux-imp &&
	cat >$IMPDIR/conf.d/imp.json <<-EOT &&
	{"exec": {"allowed-users": ["$OWNER"],
	          "allowed-shells": ["$SHELL_PATH"]},
	 "sign": {"max-ttl": 600, "allowed-types": ["munge"],
	          "munge": {"socket-path": "$FLUX_MUNGE_SOCKET"}}}
	EOT
	chmod 644 $IMPDIR/conf.d/imp.json &&
	cat >$CONFDIR/exec.json <<-EOT &&
	{"exec": {"imp": "$IMPDIR/flux-imp"}}
	EOT
	chmod 644 $CONFDIR/exec.json &&
	ls -l $IMPDIR/flux-imp
'
test_expect_success 'an instance started by the unprivileged owner' '
	(
		cd $TOP &&
		setpriv --reuid=$OWNER --regid=$(id -g $OWNER) --init-groups \
			env HOME=/ PATH=$SAFE_PATH \
			FLUX_IMP_CONFIG_PATTERN="$IMPDIR/conf.d/*.json" \
			FLUX_IMP_TEST_NO_CGROUP=$TOP/nocgroup \
			"$FLUX" start -c $CONFDIR -Srundir=$RD \
			-Saccess.allow-guest-user=true \
			sh -c "while ! test -f $TOP/done; do sleep 0.2; done" \
			>$TOP/start.out 2>&1 &
		echo $! >$TOP/start.pid
	) &&
	i=0 &&
	while ! as $ALICE "$FLUX" uptime 2>/dev/null | grep -q " run "; do
		i=$((i + 1)) &&
		test $i -lt 600 || { cat $TOP/start.out; return 1; }
		sleep 0.1
	done &&
	test "$(as $ALICE "$FLUX" getattr security.owner)" = "$(id -u $OWNER)"
'
test_expect_success 'alice'"'"'s and bob'"'"'s jobs run as alice and bob' '
	as $ALICE "$FLUX" run id -u >alice.uid &&
	as $BOB "$FLUX" run id -u >bob.uid &&
	test "$(cat alice.uid)" = "$(id -u $ALICE)" &&
	test "$(cat bob.uid)" = "$(id -u $BOB)"
'
test_expect_success 'files their jobs create belong to them' '
	as $ALICE "$FLUX" run touch $SHARED/a &&
	as $BOB "$FLUX" run touch $SHARED/b &&
	test "$(stat -c %U $SHARED/a)" = $ALICE &&
	test "$(stat -c %U $SHARED/b)" = $BOB
'
test_expect_success 'alice submits a long job; it runs as alice' '
	as $ALICE "$FLUX" submit sleep 300 >alice.id &&
	as $ALICE "$FLUX" job wait-event -t 60 $(cat alice.id) start &&
	i=0 &&
	while ! pgrep -u $ALICE -x sleep >/dev/null; do
		i=$((i + 1)) && test $i -lt 100 && sleep 0.1 || return 1
	done
'
test_expect_success 'bob cannot cancel, signal, attach to or read alice'"'"'s job' '
	id=$(cat alice.id) &&
	test_must_fail as $BOB "$FLUX" cancel $id 2>cancel.err &&
	grep "own jobs" cancel.err &&
	test_must_fail as $BOB "$FLUX" job kill $id 2>kill.err &&
	grep "own jobs" kill.err &&
	test_must_fail as $BOB "$FLUX" job urgency $id 0 2>urgency.err &&
	grep "own jobs" urgency.err &&
	test_must_fail as $BOB "$FLUX" job attach $id 2>attach.err &&
	grep "not your job" attach.err &&
	test_must_fail as $BOB "$FLUX" job info $id jobspec 2>info.err &&
	grep "another user" info.err &&
	test_must_fail as $BOB "$FLUX" job info $id J 2>infoJ.err &&
	grep "another user" infoJ.err &&
	test_must_fail as $BOB "$FLUX" job eventlog -p guest.output $id \
		2>output.err &&
	grep "another user" output.err
'
test_expect_success 'but bob sees alice'"'"'s job in flux jobs -A, and alice her environment' '
	as $BOB "$FLUX" jobs -A -n -o "{id.dec} {userid}" >bob-jobs.out &&
	grep "^$("$FLUX" job id --to=dec $(cat alice.id)) $(id -u $ALICE)\$" \
		bob-jobs.out &&
	as $ALICE "$FLUX" job info $(cat alice.id) jobspec >alice.jobspec &&
	grep "\"environment\"" alice.jobspec
'
test_expect_success 'the owner cancels nothing for alice; alice cancels: no process is left' '
	as $ALICE "$FLUX" cancel $(cat alice.id) &&
	as $ALICE "$FLUX" job wait-event -t 60 $(cat alice.id) clean &&
	i=0 &&
	while pgrep -u $ALICE >/dev/null; do
		i=$((i + 1)) && test $i -lt 100 && sleep 0.1 || {
			ps -f -u $ALICE; return 1; }
	done
'
test_expect_success 'a job with children: SIGKILL through the IMP ends them all' '
	as $ALICE "$FLUX" submit sh -c "sleep 301 & sleep 302 & wait" >alice2.id &&
	as $ALICE "$FLUX" job wait-event -t 60 $(cat alice2.id) start &&
	i=0 &&
	while test $(pgrep -u $ALICE -x sleep | wc -l) -lt 2; do
		i=$((i + 1)) && test $i -lt 100 && sleep 0.1 || return 1
	done &&
	as $ALICE "$FLUX" job kill -s KILL $(cat alice2.id) &&
	as $ALICE "$FLUX" job wait-event -t 60 $(cat alice2.id) clean &&
	i=0 &&
	while pgrep -u $ALICE >/dev/null; do
		i=$((i + 1)) && test $i -lt 100 && sleep 0.1 || {
			ps -f -u $ALICE; return 1; }
	done
'
# alice_gone SECONDS: until no process of alice is left
alice_gone () {
	i=0
	while pgrep -u $ALICE >/dev/null; do
		i=$((i + 1)) && test $i -lt $(($1 * 10)) && sleep 0.1 || {
			ps -f -u $ALICE; return 1; }
	done
}
# kill9_shell NAME: alice runs 2 tasks that each wait for a child; her
# shell is killed with kill -9 (by root, from outside): every process of
# hers must be gone within 5 s (the tasks die with the shell, the IMP,
# the shell's subreaper, kills what they started), and the job ends
# with an exception
kill9_shell () {
	as $ALICE "$FLUX" submit -n2 sh -c "sleep 303 & wait" >$1.id &&
	as $ALICE "$FLUX" job wait-event -t 60 $(cat $1.id) start &&
	i=0 &&
	while test $(pgrep -u $ALICE -x sleep | wc -l) -lt 2; do
		i=$((i + 1)) && test $i -lt 100 && sleep 0.1 || return 1
	done &&
	shell=$(pgrep -u $ALICE -x flux-shell) &&
	cat /proc/$shell/cgroup >$1.cgroup &&
	kill -9 $shell &&
	alice_gone 5 &&
	as $ALICE "$FLUX" job wait-event -t 60 $(cat $1.id) clean &&
	as $ALICE "$FLUX" job eventlog $(cat $1.id) | grep "exception type=\"exec\""
}
test_expect_success 'kill -9 of alice'"'"'s shell: no process of hers is left' '
	kill9_shell k9cg
'
# The exec agent may not touch alice's files: the IMP removes the tmpdir
# of her killed shell, as alice (the shell told it where it is).
test_expect_success 'kill -9 of alice'"'"'s shell: its FLUX_JOB_TMPDIR is removed' '
	as $ALICE "$FLUX" submit sh -c "mkdir \$FLUX_JOB_TMPDIR/d &&
		touch \$FLUX_JOB_TMPDIR/d/f &&
		echo \$FLUX_JOB_TMPDIR >$SHARED/k9tmp.new &&
		mv $SHARED/k9tmp.new $SHARED/k9tmp && sleep 305" >k9tmp.id &&
	i=0 &&
	while ! test -s $SHARED/k9tmp; do
		i=$((i + 1)) && test $i -lt 600 && sleep 0.1 || return 1
	done &&
	dir=$(cat $SHARED/k9tmp) &&
	test "$(stat -c %U $dir/d/f)" = $ALICE &&
	kill -9 $(pgrep -u $ALICE -x flux-shell) &&
	as $ALICE "$FLUX" job wait-event -t 60 $(cat k9tmp.id) clean &&
	alice_gone 5 &&
	test_must_fail test -e $dir
'
# flux-imp-test skips the cgroup while $TOP/nocgroup exists: the path of
# a machine without a cgroup the IMP may write
test_expect_success 'without a cgroup: kill -9 of alice'"'"'s shell: none left' '
	touch $TOP/nocgroup &&
	kill9_shell k9 &&
	test_must_fail grep imp-shell k9.cgroup
'
test_expect_success 'without a cgroup: a process of alice'"'"'s job that calls setsid is killed at its end' '
	as $ALICE "$FLUX" submit sh -c \
		"setsid sleep 304 </dev/null >/dev/null 2>&1 & sleep 0.5" \
		>sid.id &&
	as $ALICE "$FLUX" job wait-event -t 60 $(cat sid.id) clean &&
	alice_gone 10
'
test_expect_success 'without a cgroup: SIGKILL through the IMP ends a job with children' '
	as $ALICE "$FLUX" submit sh -c "sleep 301 & sleep 302 & wait" >nocg2.id &&
	as $ALICE "$FLUX" job wait-event -t 60 $(cat nocg2.id) start &&
	i=0 &&
	while test $(pgrep -u $ALICE -x sleep | wc -l) -lt 2; do
		i=$((i + 1)) && test $i -lt 100 && sleep 0.1 || return 1
	done &&
	as $ALICE "$FLUX" job kill -s KILL $(cat nocg2.id) &&
	as $ALICE "$FLUX" job wait-event -t 60 $(cat nocg2.id) clean &&
	alice_gone 10 &&
	rm -f $TOP/nocgroup
'
test_expect_success 'a forged J (alice in the header, bob'"'"'s credential) is refused by ingest' '
	"$FLUX" submit --dry-run true >js.json &&
	chmod 644 js.json && cp js.json $SHARED/js.json &&
	as $BOB "$IMPSIGN" --socket $FLUX_MUNGE_SOCKET --userid $(id -u $ALICE) \
		<$SHARED/js.json >$SHARED/forged.J &&
	test_must_fail as $BOB "$SUBMITREQ" -J $SHARED/forged.J 2>forged.err &&
	cat forged.err &&
	grep "uid mismatch" forged.err
'
test_expect_success 'a J signed by alice and submitted by bob is refused by ingest' '
	as $ALICE "$IMPSIGN" --socket $FLUX_MUNGE_SOCKET \
		<$SHARED/js.json >$SHARED/alice.J &&
	test_must_fail as $BOB "$SUBMITREQ" -J $SHARED/alice.J 2>borrowed.err &&
	cat borrowed.err &&
	grep "signer=$(id -u $ALICE) != requestor=$(id -u $BOB)" borrowed.err
'
test_expect_success 'a J whose payload was changed after signing is refused' '
	hdr=$(cut -d. -f1 $SHARED/alice.J) &&
	sig=$(cut -d. -f3 $SHARED/alice.J) &&
	pl=$(printf "%s" "{\"version\":1}" | base64 -w0) &&
	printf "%s.%s.%s" "$hdr" "$pl" "$sig" >$SHARED/changed.J &&
	test_must_fail as $ALICE "$SUBMITREQ" -J $SHARED/changed.J 2>changed.err &&
	grep "does not match" changed.err
'
test_expect_success 'a root job is refused' '
	test_must_fail env FLUX_URI=local://$RD/local-0 "$FLUX" submit true \
		2>root.err &&
	cat root.err &&
	grep "root may not submit" root.err
'
test_expect_success 'a non-owner cannot use the IMP' '
	as $ALICE "$FLUX" job info $(cat alice.id) J >$SHARED/a.J &&
	printf "{\"J\":\"%s\"}" "$(cat $SHARED/a.J)" >$SHARED/a.json &&
	test_must_fail setpriv --reuid=$BOB --regid=$(id -g $BOB) --init-groups \
		env FLUX_IMP_CONFIG_PATTERN="$IMPDIR/conf.d/*.json" \
		$IMPDIR/flux-imp exec $SHELL_PATH 1 <$SHARED/a.json 2>imp.err &&
	cat imp.err &&
	grep "not in exec.allowed-users" imp.err
'
test_expect_success 'the instance shuts down' '
	touch $TOP/done &&
	i=0 &&
	while kill -0 $(cat $TOP/start.pid) 2>/dev/null; do
		i=$((i + 1)) && test $i -lt 600 && sleep 0.1 || return 1
	done
'
test_expect_success 'clean up: users, munged, files' '
	cleanup &&
	! id $ALICE 2>/dev/null
'
# on failure, still clean up
test -d $TOP && cleanup
test_done
