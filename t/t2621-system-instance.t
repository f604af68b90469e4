#!/bin/sh
test_description='the system instance: etc/flux.service and the tmpfiles.d
entry as make install writes them, a broker run as the unit runs it
(broker.rc2_none: no initial program, until flux shutdown), its socket
reachable by a guest'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

FLUX="$FLUX_BUILD_DIR/src/cmd/flux"
BROKER="$FLUX_BUILD_DIR/src/broker/flux-broker"

test_expect_success 'make install puts the unit and tmpfiles.d/flux.conf in place' '
	inst=$(mktemp -d /tmp/flux-t2621-inst.XXXXXX) &&
	test_when_finished "rm -rf $inst" &&
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s -C "$FLUX_BUILD_DIR/etc" install DESTDIR=$inst >/dev/null &&
	unit=$(find $inst -path "*/lib/systemd/system/flux.service") &&
	tmpf=$(find $inst -path "*/lib/tmpfiles.d/flux.conf") &&
	test -f "$unit" && test -f "$tmpf" &&
	grep -x "User=flux" $unit &&
	grep -x "RuntimeDirectory=flux" $unit &&
	grep -x "StateDirectory=flux" $unit &&
	grep "^ExecStart=/.*/flux-broker " $unit &&
	grep -e "--config-path=/.*/flux/system/conf.d" $unit &&
	grep -e "-Sbroker.rc2_none=1" $unit &&
	grep -e "-Saccess.allow-guest-user=true" $unit &&
	grep -x "d /.*/flux 0755 flux flux -" $tmpf &&
	! grep "@[a-z]*@" $unit $tmpf &&
	cp $unit flux.service
'
if command -v systemd-analyze >/dev/null; then
	test_set_prereq SYSTEMD_ANALYZE
fi
test_expect_success SYSTEMD_ANALYZE 'systemd-analyze verify accepts the unit' '
	bin=$(mktemp -d /tmp/flux-t2621-bin.XXXXXX) &&
	test_when_finished "rm -rf $bin" &&
	ln -sf "$BROKER" $bin/flux-broker && ln -sf "$FLUX" $bin/flux &&
	bindir=$(sed -n "s|^ExecStart=\(/.*\)/flux-broker .*|\1|p" flux.service) &&
	sed "s|$bindir/|$bin/|g" flux.service >$bin/flux.service &&
	systemd-analyze verify --man=no $bin/flux.service
'
test_expect_success 'a broker with broker.rc2_none runs until flux shutdown' '
	rd=$(mktemp -d -u /tmp/flux-t2621.XXXXXX) || return 1
	"$BROKER" -Sbroker.rc2_none=1 -Srundir=$rd -Slog-stderr-level=6 \
		-Saccess.allow-guest-user=true >broker.out 2>&1 &
	pid=$! &&
	test_when_finished "kill $pid 2>/dev/null; rm -rf $rd" &&
	i=0 &&
	while ! test -S $rd/local-0; do
		i=$((i + 1)) && test $i -lt 300 && sleep 0.1 || return 1
	done &&
	FLUX_URI=local://$rd/local-0 "$FLUX" getattr size &&
	sleep 1 &&
	kill -0 $pid &&
	if test "$(id -u)" = 0; then
		setpriv --reuid=4242 --regid=4242 --clear-groups \
			env FLUX_URI=local://$rd/local-0 "$FLUX" getattr size \
			>guest.size &&
		test "$(cat guest.size)" = 1
	fi &&
	FLUX_URI=local://$rd/local-0 "$FLUX" shutdown --quiet &&
	wait $pid &&
	grep "no initial program" broker.out
'
test_done
