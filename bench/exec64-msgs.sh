#!/bin/bash
# The messages one `flux run -N64 true` costs the 64 brokers (issue 21):
# every broker counts what it routes by source, type and topic
# (FLUX_BROKER_MSGCOUNT, src/broker/msgcount.h), the counts are cleared
# on every rank, a job runs, and the counts are summed over the ranks.
# Sources: parent (came down the tree), child (came up), module, client,
# self (the broker's own services).  Events delivered to local modules
# and clients are not counted again.  Run from a build directory (or
# give it as $1).  Env: REPS (3), SIZE (64), START_OPTS, JOB (the job's
# command line after `flux run`: "-N$SIZE true"), CMD (the whole command
# measured instead, e.g. "flux exec -r all true"; default "flux run $JOB").
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
export REPS=${REPS:-3} SIZE=${SIZE:-64}
export JOB=${JOB:-"-N$SIZE true"}
export CMD=${CMD:-"flux run $JOB"}
export FLUX_BROKER_MSGCOUNT=1

flux start -s "$SIZE" $START_OPTS bash -c '
set -e
uris=$(flux exec -r all flux getattr local-uri)
$CMD >/dev/null </dev/null # warm up
sleep 0.5
out=/tmp/exec64-msgs.$$
: >$out
for i in $(seq $REPS); do
    for u in $uris; do FLUX_URI=$u flux module stats --clear broker; done
    $CMD >/dev/null </dev/null
    sleep 0.5 # what follows the job (its clean-up) is its cost too
    for u in $uris; do
        FLUX_URI=$u flux module stats broker >>$out
        echo >>$out
    done
done
python3 - $out $REPS <<EOT
import json, re, sys
tot = {}
dec = json.JSONDecoder()
text = open(sys.argv[1]).read()
i = 0
while True:
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    o, i = dec.raw_decode(text, i)
    for k, v in o.get("msgcount", {}).items():
        if "broker.stats-" in k:
            continue
        # one line per topic, not per job
        k = re.sub(r"job-[0-9]+", "job-ID", k)
        k = re.sub(r"[0-9]+-shell-[A-Za-z0-9]+", "UID-shell-JOBID", k)
        tot[k] = tot.get(k, 0) + v
reps = int(sys.argv[2])
bysrc = {}
for k, v in sorted(tot.items(), key=lambda kv: -kv[1]):
    if v == 0:
        continue
    print("%8.1f  %s" % (v / reps, k))
    s = " ".join(k.split()[:2])
    bysrc[s] = bysrc.get(s, 0) + v
print("total per job: %.1f" % (sum(tot.values()) / reps))
for k, v in sorted(bysrc.items(), key=lambda kv: -kv[1]):
    print("  %-20s %8.1f" % (k, v / reps))
EOT
rm -f $out
'
