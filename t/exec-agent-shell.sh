#!/bin/sh
# exec-agent-shell.sh JOBID - a stand-in job shell for the exec-agent
# tests (t2520), started by the agent as flux-shell would be.  It asks
# its broker's agent for exec-agent.shell-info and does what the
# jobspec's attributes.system.test_shell says (every key optional):
#   {"sleep": SECONDS, "until": EPOCH, "exit": CODE,
#    "ranks": {"<shell rank>": {...the same keys, for that shell...}}}
# "until" sleeps up to a wall-clock time (shells that exit together).
# It prints one line on stdout (the agent logs it) and exits CODE.
id=$1
test -n "$id" || { echo "usage: $0 JOBID" >&2; exit 1; }
rank=$(flux getattr rank) || exit 1
info=$("$FLUX_BUILD_DIR/t/rpc" -r "$rank" exec-agent.shell-info \
	"{\"id\":$id}") || exit 1
srank=$(echo "$info" | jq -r .rank)
conf=$(echo "$info" | jq -c ".jobspec.attributes.system.test_shell // {}
	| . + (.ranks[\"$srank\"] // {}) | del(.ranks)")
get () { echo "$conf" | jq -r ".$1 // empty"; }
echo "test shell: job $id shell rank $srank of $(echo "$info" | jq .size)" \
	"on broker rank $rank ns $FLUX_KVS_NAMESPACE"
until=$(get until)
if test -n "$until"; then
	s=$(awk -v u="$until" -v n="$(date +%s.%N)" \
		'BEGIN { d = u - n; if (d < 0) d = 0; printf "%.3f", d }')
	sleep "$s"
fi
s=$(get sleep)
test -n "$s" && sleep "$s"
code=$(get exit)
exit "${code:-0}"
