/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* strays.c - the shell's child subreaper (reaper.c), told which
 * children are the shell's own: its tasks (kept zombies until its end)
 * and the rexec server's processes.  Once no local task runs, what the
 * tasks left running is ended: a process in a task's group (`cmd &`),
 * and one that left it (setsid, a double fork into a group of its own),
 * which the signals to the tasks' groups do not reach and which would
 * otherwise outlive the job and hold its output open.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "libsubprocess/subprocess.h"

#include "output.h"
#include "reaper.h"
#include "shell.h"
#include "strays.h"
#include "task.h"

#define DEFAULT_GRACE 5. /* job-exec's default kill-timeout */

static bool own (pid_t pid, void *arg)
{
    struct shell *shell = arg;

    for (int i = 0; i < shell->ntasks; i++) {
        if (shell->tasks[i]->pid == pid)
            return true;
    }
    return subprocess_server_owns (shell->rexec, pid);
}

static const struct reaper_ops ops = {.own = own};

int shell_strays_start (struct shell *shell, flux_error_t *error)
{
    json_t *o = json_object_get (shell->info->options, "stray-timeout");
    double grace = DEFAULT_GRACE;

    if (o) {
        if ((grace = shell_parse_duration (o)) < 0)
            return errprintf (error, "stray-timeout must be a duration");
    }
    if (!(shell->reaper = reaper_create (shell->loop, &ops, shell, grace)))
        fprintf (stderr, "flux-shell: not a child subreaper: %s\n",
                 strerror (errno));
    return 0;
}

void shell_strays_check (struct shell *shell)
{
    for (int i = 0; i < shell->ntasks; i++) {
        if (shell->tasks[i]->running) {
            reaper_check (shell->reaper);
            return;
        }
    }
    reaper_sweep (shell->reaper);
}

/* In exec.eventlog, on stderr and in the output eventlog, which flux
 * run and flux job attach print (shell_log). */
static void say (struct shell *shell, const char *msg)
{
    shell_log (shell, LOG_WARNING, "reaper", "%s", msg);
}

void shell_strays_finish (struct shell *shell)
{
    struct reaper_stats st;
    char msg[128];

    if (!shell->reaper)
        return;
    reaper_finish (shell->reaper, &st);
    reaper_destroy (shell->reaper);
    shell->reaper = NULL;
    if (st.killed > 0) {
        snprintf (msg, sizeof (msg),
                  "killed %d stray process%s the tasks left running "
                  "(%d after SIGKILL)",
                  st.killed, st.killed > 1 ? "es" : "", st.sigkill);
        say (shell, msg);
    }
    if (st.left > 0) {
        snprintf (msg, sizeof (msg),
                  "%d stray process%s still there 10s after SIGKILL", st.left,
                  st.left > 1 ? "es are" : " is");
        say (shell, msg);
    }
}
