#!/bin/sh
# exec-agent-shell.sh JOBID - a stand-in job shell for the exec-agent
# tests (t2520), started by the agent as flux-shell would be.  It asks
# its broker's agent for exec-agent.shell-info and does what the
# jobspec's attributes.system.test_shell says (every key optional):
#   {"dir": DIR, "barrier": N, "wait": FIFO, "sleep": SECONDS, "exit": CODE,
#    "ignore_term": 1 (SIGTERM ignored: only a SIGKILL ends the shell),
#    "ranks": {"<shell rank>": {...the same keys, for that shell...}}}
# dir: write DIR/<shell rank>.pid (the shell's pid, its process group)
# once started; barrier: enter exec-agent.barrier rounds 1..N with data
# {"<shell rank>": 1}, and exit 99 unless each answer holds every shell
# rank; wait: block until a writer opens FIFO (shells that exit
# together); then sleep, then exit CODE.  One line goes to stdout (the
# agent logs it).
id=$1
test -n "$id" || { echo "usage: $0 JOBID" >&2; exit 1; }
info=$("$FLUX_BUILD_DIR/t/rpc" exec-agent.shell-info "{\"id\":$id}") ||
	exit 1
vars=$(printf "%s\n" "$info" | jq -r '.rank as $r
	| (.jobspec.attributes.system.test_shell // {}) as $c
	| ($c + ($c.ranks[$r | tostring] // {})) as $t
	| "srank=\($r) size=\(.size) dir=\($t.dir // "" | @sh)",
	  "fifo=\($t.wait // "" | @sh) secs=\($t.sleep // "" | @sh)",
	  "code=\($t.exit // 0) nbarrier=\($t.barrier // 0)",
	  "ignore=\($t.ignore_term // "" | @sh)"') || exit 1
eval "$vars"
rank=$(printf "%s\n" "$info" | jq -r '.ranks') # for the log line only
echo "test shell: job $id shell rank $srank of $size (ranks $rank)" \
	"ns $FLUX_KVS_NAMESPACE cwd $(pwd)"
test -n "$ignore" && trap "" TERM
test -n "$dir" && echo $$ >"$dir/$srank.pid"
seq=1
while test $seq -le $nbarrier; do
	n=$("$FLUX_BUILD_DIR/t/rpc" exec-agent.barrier \
		"{\"id\":$id,\"seq\":$seq,\"data\":{\"$srank\":1}}" |
		jq ".data | length") || exit 98
	test "$n" = "$size" || exit 99
	seq=$((seq + 1))
done
test -n "$fifo" && cat "$fifo" >/dev/null
test -n "$secs" && sleep "$secs"
exit "$code"
