#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors
#
# netns-net.sh - a private "cluster" of network namespaces for overlay tests.
#
#   netns-net.sh check              exit 0 if namespaces can be made here
#                                   (else print why and exit 1)
#   netns-net.sh up PREFIX N        make PREFIX-hub holding bridge br0, and
#                                   N nodes PREFIX-n0 .. PREFIX-n<N-1>, each
#                                   with eth0 = $NETNS_SUBNET.<i+1>/24 wired
#                                   to br0 through a veth pair (hub side v<i>)
#   netns-net.sh cut PREFIX I       unplug node I: hub side v<I> down (the
#                                   node sees no carrier, packets are lost)
#   netns-net.sh mend PREFIX I      plug node I back in
#   netns-net.sh pids PREFIX        pids of processes left in the nodes
#   netns-net.sh down PREFIX        SIGKILL what is left in the namespaces,
#                                   then delete them all
#   netns-net.sh reap-stale STEM    delete namespaces STEM-<pid>-* whose
#                                   creator <pid> is gone (a killed run)
#
# Everything lives inside the namespaces: the bridge is in the hub, so the
# root namespace gets no interface, address or route, and concurrent runs
# (other PREFIXes) cannot see each other.  The subnet is $NETNS_SUBNET
# (three octets, default 10.251.0).
set -u

subnet=${NETNS_SUBNET:-10.251.0}

die () {
	echo "netns-net.sh: $*" >&2
	exit 1
}

nodes () {
	ip netns list 2>/dev/null | sed -e 's/ .*//' | grep "^$1-n[0-9]*$"
}

cmd_check () {
	probe="netns-probe-$$"
	test "$(id -u)" = 0 || die "not root"
	command -v ip >/dev/null || die "ip(8) (iproute2) is not installed"
	command -v unshare >/dev/null || die "unshare(1) is not installed"
	ip netns add "$probe" 2>/dev/null || die "ip netns add fails here"
	if ! ip -n "$probe" link add br0 type bridge 2>/dev/null \
	   || ! ip -n "$probe" link add v0 type veth peer name v1 2>/dev/null \
	   || ! ip netns exec "$probe" unshare --uts true 2>/dev/null; then
		ip netns del "$probe"
		die "no bridge, veth or UTS namespace support"
	fi
	ip netns del "$probe"
}

cmd_up () {
	prefix=$1 n=$2
	hub="$prefix-hub"
	ip netns add "$hub" || die "cannot create $hub"
	ip -n "$hub" link add br0 type bridge || die "cannot create br0"
	ip -n "$hub" link set br0 up || die "br0 up"
	i=0
	while test "$i" -lt "$n"; do
		node="$prefix-n$i"
		ip netns add "$node" || die "cannot create $node"
		ip -n "$hub" link add "v$i" type veth peer name eth0 netns "$node" \
		    || die "veth for $node"
		ip -n "$hub" link set "v$i" master br0 up || die "v$i up"
		ip -n "$node" addr add "$subnet.$((i + 1))/24" dev eth0 \
		    || die "address of $node"
		ip -n "$node" link set eth0 up || die "eth0 of $node up"
		ip -n "$node" link set lo up || die "lo of $node up"
		i=$((i + 1))
	done
}

cmd_link () {
	ip -n "$1-hub" link set "v$2" "$3"
}

cmd_pids () {
	for node in $(nodes "$1"); do
		ip netns pids "$node" 2>/dev/null
	done
}

cmd_down () {
	prefix=$1
	pids=$(cmd_pids "$prefix")
	if test -n "$pids"; then
		kill -9 $pids 2>/dev/null
		# they are gone once their namespace lists no pid
		tries=0
		while test -n "$(cmd_pids "$prefix")" && test $tries -lt 50; do
			sleep 0.1
			tries=$((tries + 1))
		done
	fi
	for ns in $(nodes "$prefix") "$prefix-hub"; do
		if ip netns list | grep -q "^$ns\( \|$\)"; then
			ip netns del "$ns" || echo "netns-net.sh: cannot delete $ns" >&2
		fi
	done
	test -z "$(ip netns list | grep "^$prefix-")"
}

cmd_reap_stale () {
	for ns in $(ip netns list | sed -e 's/ .*//' | grep "^$1-[0-9]*-hub$"); do
		pid=${ns#"$1"-}
		pid=${pid%-hub}
		kill -0 "$pid" 2>/dev/null || cmd_down "$1-$pid"
	done
	return 0
}

test $# -ge 1 || die "usage: netns-net.sh check|up|cut|mend|pids|down|reap-stale ..."
cmd=$1
shift
case "$cmd" in
	check) cmd_check ;;
	up) test $# = 2 || die "usage: up PREFIX N"; cmd_up "$1" "$2" ;;
	cut) test $# = 2 || die "usage: cut PREFIX I"; cmd_link "$1" "$2" down ;;
	mend) test $# = 2 || die "usage: mend PREFIX I"; cmd_link "$1" "$2" up ;;
	pids) test $# = 1 || die "usage: pids PREFIX"; cmd_pids "$1" ;;
	down) test $# = 1 || die "usage: down PREFIX"; cmd_down "$1" ;;
	reap-stale) test $# = 1 || die "usage: reap-stale STEM"; cmd_reap_stale "$1" ;;
	*) die "unknown command $cmd" ;;
esac
