#!/bin/sh
test_description='flux-imp (issue 22): a setuid copy run by an instance
owner starts shells as the users who signed J with munge, refuses forged,
replayed, expired, foreign and root J, non-owners and unlisted shells;
signals, kill, prolog/epilog; the configuration checks (as root: makes
users, starts munged, installs the IMP setuid in a temporary directory)'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

if test "$(id -u)" != 0; then
	skip_all='needs root (users, munged, a setuid IMP)'
	test_done
fi
for prog in munged useradd userdel runuser; do
	if ! command -v $prog >/dev/null; then
		skip_all="needs $prog"
		test_done
	fi
done

IMPBUILD="$FLUX_BUILD_DIR/src/imp"
SIGN="$IMPBUILD/imp-sign"
# everything the test users must reach: a directory searchable by all
D=$(mktemp -d /tmp/imp-t.XXXXXX) && chmod 755 "$D" || exit 1
OWNER=fio$$ ALICE=fia$$ BOB=fib$$
MUNGEPIDS=""
imp_cleanup () {
	for p in $MUNGEPIDS; do kill $p 2>/dev/null; done
	for u in $OWNER $ALICE $BOB; do userdel $u 2>/dev/null; done
	rm -rf "$D"
}
cleanup imp_cleanup

# start_munged NAME: munged with a fresh key, socket $D/NAME.sock
start_munged () {
	dd if=/dev/urandom of="$D/$1.key" bs=1024 count=1 2>/dev/null &&
	chmod 600 "$D/$1.key" &&
	{ munged -F --force --key-file="$D/$1.key" --socket="$D/$1.sock" \
		--pid-file="$D/$1.pid" --seed-file="$D/$1.seed" \
		--log-file="$D/$1.log" >"$D/$1.out" 2>&1 \
		</dev/null 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- & } &&
	MUNGEPIDS="$MUNGEPIDS $!" &&
	for i in $(seq 100); do test -S "$D/$1.sock" && break; sleep 0.1; done &&
	test -S "$D/$1.sock"
}
# imp USER ARGS...: the setuid IMP run by USER with the test config
imp () {
	u=$1; shift
	runuser -u $u -- env FLUX_IMP_CONFIG_PATTERN="${CONF:-$D/conf.d}/*" \
		"$D/bin/flux-imp" "$@"
}
# sign USER [imp-sign options]: the exec input {"J":...} signed by USER
sign () {
	u=$1; shift
	echo '{"version":1,"resources":[],"tasks":[],"attributes":{}}' |
		runuser -u $u -- "$SIGN" --socket "$D/munge.sock" --input "$@"
}
# uid of USER
uidof () {
	id -u $1
}

test_expect_success 'set up: users, munged, a setuid IMP, its config' '
	useradd -M -N -s /bin/sh $OWNER &&
	useradd -M -N -s /bin/sh $ALICE &&
	useradd -M -N -s /bin/sh $BOB &&
	start_munged munge &&
	start_munged foreign &&
	mkdir -m 755 "$D/bin" "$D/conf.d" "$D/conf2.d" &&
	mkdir -m 1777 "$D/out" &&
	cp "$IMPBUILD/flux-imp-test" "$D/bin/flux-imp" &&
	chmod 4755 "$D/bin/flux-imp" &&
	cat >"$D/bin/shell" <<-EOT &&
	#!/bin/sh
	echo "uid=\$(id -u) gid=\$(id -g) args=\$*"
	test -e /proc/\$\$/fd/5 && echo "fd 5 is open"
	test -n "\$FLUX_IMP_EXEC_HELPER" && echo "helper leaked"
	test -n "\$LD_LIBRARY_PATH\$MY_SECRET" && echo "caller env leaked"
	echo "env home=\$HOME user=\$USER path=\$PATH flux=\$FLUX_TEST_VAR"
	case "\$1" in
	exit3) exit 3 ;;
	sleep) echo \$\$ >"$D/out/shell.pid"; sleep 300 & echo \$! >"$D/out/child.pid"; wait ;;
	bg) sleep 300 & echo \$! >"$D/out/bg.pid" ;;
	fd3) echo "tmpdir fd=\$FLUX_IMP_TMPDIR_FD \$(stat -L -c %F /proc/\$\$/fd/3)" ;;
	tmpkill) mkdir -p "\$2/sub" && touch "\$2/sub/f" &&
		printf %s "\$2" >&3 && exec 3>&- && kill -9 \$\$ ;;
	tmpsay) printf %s "\$2" >&3; exec 3>&-; kill -9 \$\$ ;;
	tmpexit) mkdir "\$2" && printf %s "\$2" >&3 ;;
	esac
	exit 0
	EOT
	cp "$D/bin/shell" "$D/bin/other" &&
	chmod 755 "$D/bin/shell" "$D/bin/other" &&
	cat >"$D/prolog" <<-EOT &&
	#!/bin/sh
	{ echo "uid=\$(id -u)"; echo "id=\$FLUX_JOB_ID"; echo "user=\$FLUX_JOB_USERID"
	  echo "owner=\$FLUX_OWNER_USERID"; echo "foo=\$FOO_BAR"; echo "baz=\$BAZ"
	  echo "ld=\$LD_FOO"
	  echo "path=\$PATH"; echo "cwd=\$(pwd)"; } >"$D/prolog.out"
	EOT
	chmod 755 "$D/prolog" &&
	cat >"$D/conf.d/imp.yaml" <<-EOT &&
	exec:
	  allowed-users: [$OWNER]
	  allowed-shells: [$D/bin/shell]
	sign:
	  munge:
	    socket-path: $D/munge.sock
	run:
	  prolog:
	    path: $D/prolog
	    allowed-users: [$OWNER]
	    allowed-environment: ["FOO_*", "LD_*"]
	EOT
	cat >"$D/conf2.d/imp.json" <<-EOT &&
	{"exec": {"allowed-users": ["$OWNER"], "allowed-shells": ["$D/bin/shell"]},
	 "sign": {"max-ttl": 1, "munge": {"socket-path": "$D/munge.sock"}}}
	EOT
	sign $ALICE >"$D/alice.in" &&
	sign $BOB >"$D/bob.in" &&
	date +%s >"$D/signed.time"
'
test_expect_success 'version and whoami (setuid: effective uid 0)' '
	imp $OWNER version | grep "^flux-imp version" &&
	imp $OWNER whoami >whoami.out &&
	grep "real uid=$(uidof $OWNER) effective uid=0" whoami.out
'
test_expect_success 'a J signed by alice runs the shell as alice' '
	imp $OWNER exec "$D/bin/shell" 1234 <"$D/alice.in" >alice.out &&
	test_debug "cat alice.out" &&
	grep "^uid=$(uidof $ALICE) gid=$(id -g $ALICE) args=1234$" alice.out
'
test_expect_success 'the shell gets a clean environment: FLUX_*, the user'"'"'s HOME and USER, a fixed PATH' '
	runuser -u $OWNER -- env FLUX_IMP_CONFIG_PATTERN="$D/conf.d/*" \
		LD_LIBRARY_PATH=/nonexistent MY_SECRET=x PATH=/tmp/evil:$PATH \
		FLUX_TEST_VAR=kept HOME=/root USER=root \
		"$D/bin/flux-imp" exec "$D/bin/shell" 1 <"$D/alice.in" >env.out &&
	cat env.out &&
	! grep "caller env leaked" env.out &&
	grep "^env home=$(getent passwd $ALICE | cut -d: -f6) user=$ALICE path=/usr/local/bin:/usr/bin:/bin flux=kept$" env.out
'
test_expect_success 'a J signed by bob runs the shell as bob' '
	imp $OWNER exec "$D/bin/shell" 5678 <"$D/bob.in" >bob.out &&
	grep "^uid=$(uidof $BOB) .*args=5678$" bob.out
'
test_expect_success 'the input may come from FLUX_IMP_EXEC_HELPER (not passed on)' '
	runuser -u $OWNER -- env FLUX_IMP_CONFIG_PATTERN="$D/conf.d/*" \
		FLUX_IMP_EXEC_HELPER="cat $D/alice.in" \
		"$D/bin/flux-imp" exec "$D/bin/shell" 1 </dev/null >helper.out &&
	grep "^uid=$(uidof $ALICE) " helper.out &&
	! grep "helper leaked" helper.out
'
test_expect_success 'a failing helper is refused' '
	test_must_fail runuser -u $OWNER -- env \
		FLUX_IMP_CONFIG_PATTERN="$D/conf.d/*" FLUX_IMP_EXEC_HELPER=false \
		"$D/bin/flux-imp" exec "$D/bin/shell" 1 </dev/null 2>helperr.err &&
	grep "^flux-imp: error: exec: helper false failed" helperr.err
'
test_expect_success 'fds above 2 are closed before the shell runs' '
	imp $OWNER exec "$D/bin/shell" 1 <"$D/alice.in" 5>/dev/null >fd.out &&
	grep "^uid=" fd.out &&
	! grep "fd 5 is open" fd.out
'
test_expect_success 'the shell exit code is the IMP exit code' '
	test_expect_code 3 imp $OWNER exec "$D/bin/shell" exit3 <"$D/alice.in"
'
# forged: alice's header and signature with another payload
test_expect_success 'a forged J (payload changed) is refused' '
	J=$(sed "s/.*\"J\":\"\([^\"]*\)\".*/\1/" "$D/alice.in") &&
	h=${J%%.*} && s=${J##*.} &&
	p=$(printf "{\"version\":1,\"evil\":1}" | base64 -w0) &&
	echo "{\"J\":\"$h.$p.$s\"}" >forged.in &&
	test_must_fail imp $OWNER exec "$D/bin/shell" 1 <forged.in >forged.out 2>forged.err &&
	cat forged.err &&
	grep "^flux-imp: error: exec: J: signature does not match" forged.err &&
	test_line_count = 1 forged.err &&
	! grep uid= forged.out
'
test_expect_success 'a J signed by alice with bob in its header is refused' '
	sign $ALICE --userid $(uidof $BOB) >replay.in &&
	test_must_fail imp $OWNER exec "$D/bin/shell" 1 <replay.in 2>replay.err &&
	grep "uid mismatch (credential $(uidof $ALICE), header $(uidof $BOB))" replay.err
'
test_expect_success 'a J from a munged with another key is refused' '
	echo "{}" | runuser -u $ALICE -- "$SIGN" --socket "$D/foreign.sock" \
		--input >foreign.in &&
	test_must_fail imp $OWNER exec "$D/bin/shell" 1 <foreign.in 2>foreign.err &&
	cat foreign.err &&
	grep "^flux-imp: error: exec: J: munge: " foreign.err
'
test_expect_success 'a J older than sign.max-ttl is refused' '
	while test $(date +%s) -le $(($(cat "$D/signed.time") + 2)); do
		sleep 0.5; done &&
	CONF="$D/conf2.d" test_must_fail imp $OWNER exec "$D/bin/shell" 1 \
		<"$D/alice.in" 2>ttl.err &&
	grep "^flux-imp: error: exec: J: expired" ttl.err &&
	imp $OWNER exec "$D/bin/shell" 1 <"$D/alice.in" >ttl.out &&
	grep "^uid=$(uidof $ALICE) " ttl.out
'
test_expect_success 'an expired munge credential is refused' '
	sign $ALICE --ttl 1 >short.in &&
	sleep 3 &&
	test_must_fail imp $OWNER exec "$D/bin/shell" 1 <short.in 2>short.err &&
	grep "^flux-imp: error: exec: J: expired" short.err
'
test_expect_success 'a J signed by root is refused' '
	sign root >root.in &&
	test_must_fail imp $OWNER exec "$D/bin/shell" 1 <root.in 2>root.err &&
	grep "^flux-imp: error: exec: refusing to run a job as root" root.err
'
test_expect_success 'mechanism none is refused unless allowed' '
	sign $OWNER --mech none >none.in &&
	test_must_fail imp $OWNER exec "$D/bin/shell" 1 <none.in 2>none.err &&
	grep "mechanism none is not in sign.allowed-types" none.err
'
test_expect_success 'a user not in exec.allowed-users cannot use the IMP' '
	test_must_fail imp $BOB exec "$D/bin/shell" 1 <"$D/alice.in" >nonowner.out 2>nonowner.err &&
	grep "^flux-imp: error: exec: user $(uidof $BOB) ($BOB) is not in exec.allowed-users" nonowner.err &&
	test_must_be_empty nonowner.out
'
test_expect_success 'a shell not in exec.allowed-shells is refused' '
	test_must_fail imp $OWNER exec "$D/bin/other" 1 <"$D/alice.in" >other.out 2>other.err &&
	grep "^flux-imp: error: exec: shell $D/bin/other is not in exec.allowed-shells" other.err &&
	test_must_be_empty other.out
'
test_expect_success 'bad input is refused with one line' '
	echo "{\"J\":\"x.y.z\"}" >bad.in &&
	test_must_fail imp $OWNER exec "$D/bin/shell" 1 <bad.in 2>bad.err &&
	test_line_count = 1 bad.err &&
	echo "not json" | test_must_fail imp $OWNER exec "$D/bin/shell" 1 2>bad2.err &&
	grep "^flux-imp: error: exec: input is not JSON" bad2.err
'
# start_job: an IMP running alice's sleeping shell in the background
# (JOB: the background runuser, IMPPID: the IMP, SHELLPID, CHILDPID)
start_job () {
	rm -f "$D/out/shell.pid" "$D/out/child.pid" &&
	{ imp $OWNER exec "$D/bin/shell" sleep <"$D/alice.in" >job.out 2>&1 & } &&
	JOB=$! &&
	for i in $(seq 300); do test -s "$D/out/child.pid" && break; sleep 0.1; done &&
	test -s "$D/out/child.pid" &&
	SHELLPID=$(cat "$D/out/shell.pid") && CHILDPID=$(cat "$D/out/child.pid") &&
	IMPPID=$(ps -o ppid= -p $SHELLPID | tr -d " ") &&
	test "$(readlink /proc/$IMPPID/exe)" = "$D/bin/flux-imp"
}
test_expect_success 'SIGTERM to the IMP reaches the shell; the IMP dies of it' '
	start_job &&
	test "$(stat -c %u /proc/$SHELLPID)" = "$(uidof $ALICE)" &&
	kill -TERM $IMPPID &&
	test_expect_code 143 wait $JOB &&
	gone $SHELLPID &&
	gone $CHILDPID
'
test_expect_success 'SIGUSR1 to the IMP kills every process of the job' '
	start_job &&
	kill -USR1 $IMPPID &&
	test_expect_code 137 wait $JOB &&
	gone $CHILDPID && gone $SHELLPID
'
test_expect_success 'processes left by the shell are killed when it exits' '
	rm -f "$D/out/bg.pid" &&
	imp $OWNER exec "$D/bin/shell" bg <"$D/alice.in" >bg.out &&
	test -s "$D/out/bg.pid" &&
	gone $(cat "$D/out/bg.pid")
'
# The IMP removes the FLUX_JOB_TMPDIR of a shell killed by a signal, as
# the job's user, told where it is on fd 3 (src/shell/killsig.h).
test_expect_success 'the shell gets its tmpdir pipe on fd 3, not the caller'"'"'s' '
	runuser -u $OWNER -- env FLUX_IMP_CONFIG_PATTERN="$D/conf.d/*" \
		FLUX_IMP_TMPDIR_FD=7 \
		"$D/bin/flux-imp" exec "$D/bin/shell" fd3 <"$D/alice.in" >fd3.out &&
	grep "^tmpdir fd=3 fifo$" fd3.out
'
test_expect_success 'a killed shell'"'"'s tmpdir is removed, with its contents' '
	d=/tmp/jobtmp-t2600-$$ &&
	test_expect_code 137 imp $OWNER exec "$D/bin/shell" tmpkill $d \
		<"$D/alice.in" &&
	test_must_fail test -e $d
'
test_expect_success 'a shell that exits keeps its tmpdir (it removes its own)' '
	d=/tmp/jobtmp-t2600-exit-$$ &&
	imp $OWNER exec "$D/bin/shell" tmpexit $d <"$D/alice.in" &&
	test -d $d && rm -rf $d
'
test_expect_success 'what a killed shell reports is removed only as its user' '
	mkdir -m 1777 "$D/out/t" &&
	mkdir "$D/out/t/jobtmp-root" "$D/out/t/other" &&
	runuser -u $ALICE -- mkdir "$D/out/t/jobtmp-alice" "$D/out/t/real" &&
	runuser -u $ALICE -- ln -s real "$D/out/t/jobtmp-link" &&
	runuser -u $ALICE -- touch "$D/out/t/real/f" &&
	for p in "$D/out/t/other" "$D/out/t/jobtmp-root" "$D/out/t/jobtmp-link" \
		"$D/out/t/real/../jobtmp-alice" "out/t/jobtmp-alice"; do
		test_expect_code 137 imp $OWNER exec "$D/bin/shell" tmpsay "$p" \
			<"$D/alice.in" || return 1
	done &&
	test -d "$D/out/t/other" && test -d "$D/out/t/jobtmp-root" &&
	test -f "$D/out/t/real/f" && test -L "$D/out/t/jobtmp-link" &&
	test -d "$D/out/t/jobtmp-alice" &&
	test_expect_code 137 imp $OWNER exec "$D/bin/shell" tmpsay \
		"$D/out/t/jobtmp-alice" <"$D/alice.in" &&
	test_must_fail test -e "$D/out/t/jobtmp-alice" &&
	rm -rf "$D/out/t"
'
test_expect_success 'the shell has a cgroup of its own, or its own session' '
	start_job &&
	cg=$(sed -n "s/^0:://p" /proc/$SHELLPID/cgroup) &&
	echo "cgroup $cg" &&
	{ case "$cg" in */imp-shell-$IMPPID) true ;; *) false ;; esac ||
	  test "$(ps -o sid= -p $SHELLPID | tr -d " ")" = $SHELLPID; } &&
	kill -USR1 $IMPPID && wait $JOB; gone $SHELLPID
'
test_expect_success 'flux-imp kill: the owner signals a process of the job' '
	start_job &&
	imp $OWNER kill 15 $CHILDPID &&
	gone $CHILDPID &&
	kill -0 $SHELLPID &&
	kill -USR1 $IMPPID && wait $JOB; gone $SHELLPID
'
test_expect_success 'flux-imp kill 9 on the shell kills the whole job' '
	start_job &&
	imp $OWNER kill 9 $SHELLPID &&
	gone $SHELLPID && gone $CHILDPID &&
	test_expect_code 137 wait $JOB
'
test_expect_success 'flux-imp kill refuses anything else, and non-owners' '
	start_job &&
	{ runuser -u $ALICE -- sleep 300 & } && other=$! &&
	{ runuser -u $OWNER -- sleep 300 & } && own=$! &&
	sleep 0.5 &&
	o=$(pgrep -P $other) && w=$(pgrep -P $own); echo "$o $w" &&
	test_must_fail imp $OWNER kill 9 ${o:-$other} 2>kill1.err &&
	grep "not started by an IMP of yours" kill1.err &&
	test_must_fail imp $OWNER kill 9 ${w:-$own} 2>kill2.err &&
	grep "not started by an IMP of yours" kill2.err &&
	test_must_fail imp $OWNER kill 9 1 2>kill3.err &&
	test_must_fail imp $OWNER kill 9 $IMPPID 2>kill4.err &&
	test_must_fail imp $BOB kill 9 $CHILDPID 2>kill5.err &&
	grep "is not in exec.allowed-users" kill5.err &&
	test_must_fail imp $OWNER kill nine $CHILDPID &&
	kill -0 ${o:-$other} && kill -0 ${w:-$own} && kill -0 $CHILDPID &&
	kill $other $own ${o:-} ${w:-} 2>/dev/null;
	kill -USR1 $IMPPID && wait $JOB; gone $SHELLPID
'
test_expect_success 'run prolog: as root, with the job id and user' '
	runuser -u $OWNER -- env FLUX_IMP_CONFIG_PATTERN="$D/conf.d/*" \
		FLUX_JOB_ID=f2Tw FLUX_JOB_USERID=$(uidof $ALICE) FOO_BAR=x BAZ=y \
		LD_FOO=/tmp \
		"$D/bin/flux-imp" run prolog &&
	cat "$D/prolog.out" &&
	grep "^uid=0$" "$D/prolog.out" &&
	grep "^id=f2Tw$" "$D/prolog.out" &&
	grep "^user=$(uidof $ALICE)$" "$D/prolog.out" &&
	grep "^owner=$(uidof $OWNER)$" "$D/prolog.out" &&
	grep "^foo=x$" "$D/prolog.out" &&
	grep "^baz=$" "$D/prolog.out" &&
	grep "^ld=$" "$D/prolog.out" &&
	grep "^path=/usr/sbin:/usr/bin:/sbin:/bin$" "$D/prolog.out" &&
	grep "^cwd=/$" "$D/prolog.out"
'
test_expect_success 'run: not configured, or not an allowed user: refused' '
	test_must_fail imp $OWNER run epilog 2>run1.err &&
	grep "run: epilog is not configured" run1.err &&
	test_must_fail imp $BOB run prolog 2>run2.err &&
	grep "is not in run.prolog.allowed-users" run2.err
'
test_expect_success 'run: a script writable by others is refused' '
	chmod 775 "$D/prolog" &&
	test_must_fail imp $OWNER run prolog 2>run3.err &&
	grep "must be a regular file owned by root" run3.err &&
	chmod 755 "$D/prolog"
'
test_expect_success 'a config file writable by others or not root-owned is refused' '
	chmod 664 "$D/conf.d/imp.yaml" &&
	test_must_fail imp $OWNER exec "$D/bin/shell" 1 <"$D/alice.in" 2>conf1.err &&
	grep "must be owned by root and writable by no one else" conf1.err &&
	chmod 644 "$D/conf.d/imp.yaml" &&
	chown $OWNER "$D/conf.d/imp.yaml" &&
	test_must_fail imp $OWNER exec "$D/bin/shell" 1 <"$D/alice.in" 2>conf2.err &&
	grep "must be owned by root" conf2.err &&
	chown root "$D/conf.d/imp.yaml" &&
	imp $OWNER exec "$D/bin/shell" 1 <"$D/alice.in" >conf.out &&
	grep "^uid=$(uidof $ALICE) " conf.out
'
test_expect_success 'the installed IMP ignores FLUX_IMP_CONFIG_PATTERN when setuid' '
	cp "$IMPBUILD/flux-imp" "$D/bin/flux-imp-prod" &&
	chmod 4755 "$D/bin/flux-imp-prod" &&
	test_must_fail runuser -u $OWNER -- env \
		FLUX_IMP_CONFIG_PATTERN="$D/conf.d/*" \
		"$D/bin/flux-imp-prod" exec "$D/bin/shell" 1 <"$D/alice.in" \
		>prod.out 2>prod.err &&
	cat prod.err &&
	! grep "$D/conf.d" prod.err &&
	! grep uid= prod.out
'
test_expect_success 'not setuid: exec is refused without allow-unprivileged-exec' '
	cp "$IMPBUILD/flux-imp" "$D/bin/flux-imp-nosuid" &&
	test_must_fail runuser -u $OWNER -- env \
		FLUX_IMP_CONFIG_PATTERN="$D/conf.d/*" \
		"$D/bin/flux-imp-nosuid" exec "$D/bin/shell" 1 <"$D/alice.in" \
		2>nosuid.err &&
	grep "exec.allow-unprivileged-exec is not set" nosuid.err
'
test_expect_success 'not setuid, allow-unprivileged-exec: only the caller'"'"'s own J runs' '
	mkdir -m 755 "$D/conf3.d" &&
	cat >"$D/conf3.d/imp.yaml" <<-EOT &&
	exec:
	  allowed-users: [$OWNER]
	  allowed-shells: [$D/bin/shell]
	  allow-unprivileged-exec: true
	sign:
	  munge:
	    socket-path: $D/munge.sock
	EOT
	sign $OWNER >owner.in &&
	runuser -u $OWNER -- env FLUX_IMP_CONFIG_PATTERN="$D/conf3.d/*" \
		"$D/bin/flux-imp-nosuid" exec "$D/bin/shell" 7 <owner.in \
		>unpriv.out &&
	grep "^uid=$(uidof $OWNER) .*args=7$" unpriv.out &&
	test_must_fail runuser -u $OWNER -- env \
		FLUX_IMP_CONFIG_PATTERN="$D/conf3.d/*" \
		"$D/bin/flux-imp-nosuid" exec "$D/bin/shell" 7 <"$D/alice.in" \
		2>unpriv.err &&
	grep "not setuid root: cannot run a job as user $(uidof $ALICE)" unpriv.err
'
test_expect_success 'root may not run the IMP' '
	test_must_fail env FLUX_IMP_CONFIG_PATTERN="$D/conf.d/*" \
		"$D/bin/flux-imp" exec "$D/bin/shell" 1 <"$D/alice.in" 2>asroot.err &&
	grep "refusing to run as root" asroot.err
'
# even when a test above failed: no daemon, user or file is left
test_expect_success 'clean up: munged stopped, users removed' '
	imp_cleanup &&
	MUNGEPIDS= &&
	! id $ALICE 2>/dev/null
'
test_done
