#!/bin/bash
# The CPU one job shell costs, A/B: two (or more) flux-shell binaries run
# real 1-node `true` jobs in one 1-broker instance, their jobs alternated
# (ROUNDS rounds of NJOBS jobs each), so the load of the moment weighs on
# each alike.  Each shell is started through a small wrapper that waits
# for it (wait4) and logs its rusage: CPU (user + system, in µs, of the
# shell and its reaped task), minor faults, context switches, max RSS.
# The broker's own CPU is not counted.
#   bash bench/shell-ab.sh BUILD SHELL_A SHELL_B ...
# e.g. cp build/dev/src/shell/flux-shell /tmp/old-shell (before a change),
#      bash bench/shell-ab.sh build/dev /tmp/old-shell build/dev/src/shell/flux-shell
# Env: ROUNDS (6), NJOBS (50), CC (cc).
set -e
build=$(cd "${1:?usage: shell-ab.sh BUILD SHELL...}" && pwd)
shift
[ $# -ge 1 ] || { echo "usage: shell-ab.sh BUILD SHELL..." >&2; exit 1; }
export PATH="$build/src/cmd:$build/src/broker:$PATH"
unset FLUX_URI
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/wrap.c" <<'EOF'
/* run the flux-shell beside this program; append its rusage to
 * rusage.log beside it */
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main (int argc, char **argv)
{
    char self[4096], real[4200], log[4200];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof (self) - 1);
    struct rusage ru;
    int status;
    pid_t pid;
    FILE *f;

    (void)argc;
    if (n < 0)
        return 1;
    self[n] = '\0';
    const char *dir = dirname (self); /* may write into self */
    snprintf (real, sizeof (real), "%s/flux-shell", dir);
    snprintf (log, sizeof (log), "%s/rusage.log", dir);
    if ((pid = fork ()) < 0)
        return 1;
    if (pid == 0) {
        argv[0] = real;
        execv (real, argv);
        _exit (127);
    }
    while (wait4 (pid, &status, 0, &ru) < 0)
        ;
    if ((f = fopen (log, "a"))) {
        fprintf (f, "%ld %ld %ld %ld %ld %ld\n",
                 ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec,
                 ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec,
                 ru.ru_minflt, ru.ru_nvcsw, ru.ru_nivcsw, ru.ru_maxrss);
        fclose (f);
    }
    return WIFEXITED (status) ? WEXITSTATUS (status)
                              : 128 + WTERMSIG (status);
}
EOF
${CC:-cc} -O2 -o "$tmp/wrap" "$tmp/wrap.c"

wraps=""
i=0
for s in "$@"; do
    i=$((i + 1))
    mkdir "$tmp/$i"
    cp "$s" "$tmp/$i/flux-shell"
    cp "$tmp/wrap" "$tmp/$i/wrap"
    wraps="$wraps $tmp/$i/wrap"
done

export AB_WRAPS="$wraps" AB_ROUNDS=${ROUNDS:-6} AB_N=${NJOBS:-50}
flux start -s 1 bash -c '
set -e
for w in $AB_WRAPS; do
    flux submit --cc=1-5 --quiet --setattr=system.exec.job_shell=$w true
done
flux queue drain
for w in $AB_WRAPS; do rm -f $(dirname $w)/rusage.log; done
for r in $(seq $AB_ROUNDS); do
    for w in $AB_WRAPS; do
        flux submit --cc=1-$AB_N --quiet \
            --setattr=system.exec.job_shell=$w true
        flux queue drain
    done
done
'
printf "load %s\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
i=0
for s in "$@"; do
    i=$((i + 1))
    python3 - "$s" "$tmp/$i/rusage.log" <<'EOF'
import statistics, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[2])]
cpu = sorted((r[0] + r[1]) / 1000 for r in rows)
med = lambda k: statistics.median(r[k] for r in rows)
print(f"{sys.argv[1]}: {len(rows)} shells; shell+task CPU ms median "
      f"{statistics.median(cpu):.3f} mean {statistics.mean(cpu):.3f} "
      f"p10 {cpu[len(cpu) // 10]:.3f} min {cpu[0]:.3f}; minflt {med(2):.0f} "
      f"vcsw {med(3):.0f} ivcsw {med(4):.0f} maxrss {med(5):.0f} KB")
EOF
done
