#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors
#
# netns-cluster.sh - a virtual cluster of N hosts (network namespaces, see
# netns-net.sh), one broker per host started from a config file
# (flux-config-bootstrap(5)), as a system instance is: no launcher.
#
#   netns-cluster.sh up PREFIX N DIR    make the N nodes ($NETNS_SUBNET.<i+1>),
#                                       a certificate and DIR/boot.json:
#                                       hosts node0..node<N-1>, each binding
#                                       and reached at tcp://<its address>:
#                                       $NETNS_PORT; tbon.topo $NETNS_TOPO
#                                       (default kary:2), more [tbon] keys
#                                       from $NETNS_TBON (JSON members)
#   netns-cluster.sh start PREFIX N DIR CMD...
#                                       start the brokers of nodes 1..N-1 in
#                                       the background, then rank 0 on node0
#                                       running CMD (its exit status is
#                                       ours).  Each broker runs in its
#                                       node's network and UTS namespaces,
#                                       host name node<i>, rundir DIR/run<i>,
#                                       its output in DIR/broker<i>.log.
#                                       Extra broker options: $NETNS_BROKER_OPTS.
#   netns-cluster.sh broker PREFIX I DIR [ARGS...]
#                                       run the broker of node I alone, in
#                                       the foreground, with ARGS (options,
#                                       then an initial program for rank 0):
#                                       to start the instance host by host,
#                                       or to restart one host's broker
#   netns-cluster.sh down PREFIX        kill what is left, delete the nodes
#
# Tear down in a trap, so that a failed test leaves nothing:
#   trap 'netns-cluster.sh down $PREFIX' EXIT
set -u

here=$(cd "$(dirname "$0")" && pwd)
NET="$here/netns-net.sh"
subnet=${NETNS_SUBNET:-10.251.0}
port=${NETNS_PORT:-8050}
topo=${NETNS_TOPO:-kary:2}

die () {
	echo "netns-cluster.sh: $*" >&2
	exit 1
}

cmd_up () {
	prefix=$1 n=$2 dir=$3
	test "$n" -ge 1 || die "N must be at least 1"
	mkdir -p "$dir" || die "cannot create $dir"
	"$NET" up "$prefix" "$n" || die "cannot make the nodes"
	flux keygen "$dir/cert" >/dev/null || die "flux keygen failed"
	{
		printf '{\n  "tbon": {"topo": "%s"%s},\n' "$topo" \
			"${NETNS_TBON:+, $NETNS_TBON}"
		printf '  "bootstrap": {\n    "curve_cert": "%s",\n' "$dir/cert"
		printf '    "hosts": [\n'
		i=0
		while test "$i" -lt "$n"; do
			uri="tcp://$subnet.$((i + 1)):$port"
			sep=","
			test "$i" -eq $((n - 1)) && sep=""
			printf '      {"host": "node%d", "bind": "%s", "connect": "%s"}%s\n' \
				"$i" "$uri" "$uri" "$sep"
			i=$((i + 1))
		done
		printf '    ]\n  }\n}\n'
	} >"$dir/boot.json" || die "cannot write $dir/boot.json"
}

# broker I DIR ARGS...: the broker of node I (exec'd)
broker () {
	i=$1 dir=$2
	shift 2
	mkdir -p "$dir/run$i" || die "cannot create $dir/run$i"
	# shellcheck disable=SC2086
	exec ip netns exec "$prefix-n$i" \
		unshare --uts sh -c 'hostname "$0" && exec "$@"' "node$i" \
		"${NETNS_BROKER:-flux-broker}" -c "$dir/boot.json" \
		-Shostname="node$i" -Srundir="$dir/run$i" \
		${NETNS_BROKER_OPTS:-} "$@"
}

cmd_start () {
	prefix=$1 n=$2 dir=$3
	shift 3
	i=1
	while test "$i" -lt "$n"; do
		(broker "$i" "$dir") >"$dir/broker$i.log" 2>&1 </dev/null &
		i=$((i + 1))
	done
	(broker 0 "$dir" "$@")
}

test $# -ge 2 || die "usage: netns-cluster.sh up|start|broker|down PREFIX ..."
cmd=$1
shift
case "$cmd" in
	up) test $# = 3 || die "usage: up PREFIX N DIR"; cmd_up "$@" ;;
	start) test $# -ge 4 || die "usage: start PREFIX N DIR CMD..."
		cmd_start "$@" ;;
	broker) test $# -ge 3 || die "usage: broker PREFIX I DIR [ARGS...]"
		prefix=$1 i=$2 dir=$3
		shift 3
		broker "$i" "$dir" "$@" ;;
	down) test $# = 1 || die "usage: down PREFIX"; "$NET" down "$1" ;;
	*) die "unknown command $cmd" ;;
esac
