#!/bin/bash
# Where the hold of a real job goes under load (issue 21): NJOBS (1000)
# /bin/true jobs on one broker, then, for every 10th of the jobs 200-800
# of them, the time of each link of its path from its alloc event, from
# its two eventlogs; printed as medians in ms:
#   init starting shell.init start shell.start task-exit complete
#   release(partial) free
# (the jobs' hold of their core is alloc -> release; jobs/s <= 2 / hold
# on this 2-core instance).  And release -> the next alloc: the job
# manager, sched.free, the scheduler, its R commit, the alloc response.
# Run from a build directory (or give it as $1).
set -e
build=${1:-$(cd "$(dirname "$0")/.." && pwd)}
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
export NJOBS=${NJOBS:-1000}

flux start -s 1 bash -c '
set -e
tmp=$(mktemp -d)
t0=$(date +%s.%N)
flux submit --cc=1-$NJOBS --quiet /bin/true
flux queue drain
t1=$(date +%s.%N)
echo "jobs/s $(echo "$NJOBS / ($t1 - $t0)" | bc -l | cut -c1-6)"
ids=$(flux jobs -a -n -o "{id}" | sed -n "200,800p")
for id in $(echo "$ids" | awk "NR % 10 == 0"); do
    { flux job eventlog $id; flux job eventlog -p exec $id; } | awk "
        {t[\$2] = \$1}
        \$2 == \"release\" && /final=false/ {rp = \$1}
        END {a = t[\"alloc\"]
            printf \"%.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.3f\\n\",
                (t[\"init\"] - a) * 1e3, (t[\"starting\"] - a) * 1e3,
                (t[\"shell.init\"] - a) * 1e3, (t[\"start\"] - a) * 1e3,
                (t[\"shell.start\"] - a) * 1e3,
                (t[\"shell.task-exit\"] - a) * 1e3,
                (t[\"complete\"] - a) * 1e3, (rp - a) * 1e3,
                (t[\"free\"] - a) * 1e3}"
done >$tmp/links
for id in $ids; do
    flux job eventlog $id | awk "
        \$2 == \"alloc\" {print \$1, \"A\"}
        \$2 == \"release\" && /final=false/ {print \$1, \"R\"}"
done | sort -n >$tmp/ar
median () { sort -g | awk "{a[NR] = \$1} END {print a[int((NR + 1) / 2)]}"; }
echo "median ms from alloc:"
i=0
for name in init starting shell.init start shell.start task-exit complete \
        release free; do
    i=$((i + 1))
    printf "  %-12s %s\n" $name "$(awk -v c=$i "{print \$c}" $tmp/links | median)"
done
printf "  %-12s %s\n" "release->next alloc" "$(awk "\$2 == \"R\" {r = \$1}
    \$2 == \"A\" && r {print (\$1 - r) * 1000; r = 0}" $tmp/ar | median)"
rm -rf $tmp
'
