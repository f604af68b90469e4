# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors
#
# netns-test.sh - the common opening of the tests whose brokers run on
# hosts made of network namespaces (t0100, t0101, t0103, t0104).  Sourced
# after sharness-setup.sh, with STEM set to a namespace stem no other test
# uses (flux-tNNNN):
#
#   - skips the whole test unless namespaces can be made here (root,
#     iproute2, bridge, veth and UTS namespaces: netns-net.sh check);
#   - PREFIX=$STEM-$$ names this run's namespaces; those a killed run of
#     the same test left behind are removed first;
#   - the namespaces of this run, and every process left in them, are
#     removed when the test exits, whatever its result (sharness runs its
#     own clean-up only on success);
#   - NET, CLUSTER: the netns-net.sh and netns-cluster.sh scripts; RPC:
#     the t/rpc helper;
#   - no_process_left: fails, listing them, if any process is left in
#     this run's namespaces; wait_gone: the same after waiting up to 10 s
#     for them to go.

NET="$SHARNESS_TEST_SRCDIR/netns-net.sh"
CLUSTER="$SHARNESS_TEST_SRCDIR/netns-cluster.sh"
RPC="$FLUX_BUILD_DIR/t/rpc"

if ! why=$("$NET" check 2>&1); then
	skip_all="needs network namespaces (${why#netns-net.sh: })"
	test_done
fi

test -n "$STEM" || error "netns-test.sh: STEM is not set"
PREFIX=$STEM-$$
"$NET" reap-stale $STEM
trap 'rc=$?; "$NET" down "$PREFIX" >/dev/null 2>&1; (exit $rc); die' EXIT
trap 'exit 130' INT TERM

no_process_left () {
	pids=$("$NET" pids "$PREFIX")
	test -z "$pids" || { echo "left running: $pids"; ps -f $pids; return 1; }
}
wait_gone () {
	n=0
	while test -n "$("$NET" pids "$PREFIX")" && test $n -lt 100; do
		sleep 0.1; n=$((n+1)); done
	no_process_left
}
