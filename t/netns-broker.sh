#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors
#
# netns-broker.sh - run the broker of rank $PMI_RANK on its own "node":
# inside network namespace $NETNS_PREFIX-n$PMI_RANK (see netns-net.sh),
# in a UTS namespace with host name $NETNS_HOST$PMI_RANK, its overlay
# bound to tcp://<the node's address>:$NETNS_PORT.
#
# Use it as the broker of `flux start -s N`:
#   FLUX_BROKER_PATH=netns-broker.sh NETNS_PREFIX=... flux start -s N CMD
# flux start serves PMI over fd 3 (PMI_FD/PMI_RANK/PMI_SIZE): it survives
# `ip netns exec` and unshare, which change namespaces, not descriptors.
# The broker is exec'd, so flux start's signals and exit status are its
# own.  NETNS_PORT may be "*" (any port: the resolved endpoint is what the
# PMI exchange publishes); NETNS_BROKER is the broker (default
# flux-broker from PATH); NETNS_SUBNET as in netns-net.sh.
set -u

: "${PMI_RANK:?netns-broker.sh runs under flux start (no PMI_RANK)}"
: "${NETNS_PREFIX:?NETNS_PREFIX is not set}"
port=${NETNS_PORT:-*}
subnet=${NETNS_SUBNET:-10.251.0}
host=${NETNS_HOST:-node}$PMI_RANK
endpoint="tcp://$subnet.$((PMI_RANK + 1)):$port"

exec ip netns exec "$NETNS_PREFIX-n$PMI_RANK" \
    unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" \
    "${NETNS_BROKER:-flux-broker}" "-Stbon.endpoint=$endpoint" "$@"
