/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* sproc.c - `flux sproc ps|kill|wait`: the processes of a subprocess
 * server (rexec, or a job shell's <service>.rexec) through its list, kill
 * and wait methods (RFC 42, PROTOCOLS-exec.md 1.5), as flux-core's
 * flux-sproc(1); and sproc_exec_bg(), the background start behind
 * `flux exec --bg`.
 *
 * A process is named by its pid or by the label `flux exec --label` gave
 * it (a name that is not all digits).  wait works on a process started
 * with `flux exec --bg --waitable` only, and exits with its exit code (or
 * 128+signal), as flux-core's.
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmdutil.h"
#include "libsubprocess/subprocess.h"
#include "sproc.h"

static const char usage[]
    = "Usage: flux sproc COMMAND [OPTIONS] [ARGS...]\n"
      "List, signal and wait for the processes of a subprocess server.\n"
      "Commands: ps, kill, wait ('flux sproc COMMAND --help').\n";

#define COMMON_HELP                                                       \
    "  -r, --rank=RANK      The broker rank to ask (default: this one)\n" \
    "  -s, --service=NAME   The service (default: rexec)\n"               \
    "  -h, --help           Display this message\n"

static const char ps_usage[]
    = "Usage: flux sproc ps [OPTIONS]\n"
      "List the processes of a subprocess server: pid, state (R running,\n"
      "Z exited and not waited for), label and command.\n"
      "  -n, --no-header      No header line\n" COMMON_HELP;
static const char kill_usage[]
    = "Usage: flux sproc kill [OPTIONS] SIGNUM PID|LABEL\n"
      "Send signal SIGNUM (a number or a name such as TERM) to a process.\n"
      "  -w, --wait           Then wait for it (it must be waitable) and\n"
      "                       exit with its exit code\n" COMMON_HELP;
static const char wait_usage[]
    = "Usage: flux sproc wait [OPTIONS] PID|LABEL\n"
      "Wait for a waitable process (flux exec --bg --waitable) to exit;\n"
      "exit with its exit code, or 128+N if signal N ended it.\n"
      "  -o, --output         Print the output the server kept for "
      "it\n" COMMON_HELP;

static int sp_ps (int argc, char **argv);
static int sp_kill (int argc, char **argv);
static int sp_wait (int argc, char **argv);

const struct builtin builtin_sproc = {
    .name = "sproc",
    .summary = "List, signal and wait for remote subprocesses",
    .usage = usage,
    .main = cmd_sproc,
};

static const struct builtin members_tab[] = {
    {"ps", "List the processes", ps_usage, sp_ps},
    {"kill", "Signal a process", kill_usage, sp_kill},
    {"wait", "Wait for a waitable process", wait_usage, sp_wait},
};

static const struct builtin *const members[] = {
    &members_tab[0],
    &members_tab[1],
    &members_tab[2],
    NULL,
};

int cmd_sproc (int argc, char **argv)
{
    return cmd_run_group (&builtin_sproc, members, argc, argv);
}

struct target {
    uint32_t rank;
    char topic[128];
};

/* -r and -s, common to the three commands (c: the option character). */
static void common_opt (struct target *t, int c)
{
    switch (c) {
        case 'r':
            t->rank = (uint32_t)cmd_parse_long ("--rank", optarg, 0,
                                                (long)UINT32_MAX - 1);
            break;
        case 's':
            if (!*optarg || strlen (optarg) + 6 >= sizeof (t->topic))
                cmd_usage_error ("--service: a name is required");
            snprintf (t->topic, sizeof (t->topic), "%s", optarg);
            break;
    }
}

static const char *topic (struct target *t, const char *method)
{
    static char buf[160];
    snprintf (buf, sizeof (buf), "%s.%s", t->topic, method);
    return buf;
}

/* A pid (all digits), or a label. */
static void parse_proc (const char *s, int *pid, const char **label)
{
    char *end;
    long n;

    errno = 0;
    n = strtol (s, &end, 10);
    if (*s && *end == '\0' && errno == 0 && n > 0 && n <= INT32_MAX) {
        *pid = (int)n;
        *label = NULL;
        return;
    }
    if (!*s)
        cmd_usage_error ("a pid or a label is required");
    *pid = 0;
    *label = s;
}

static int parse_signal (const char *s)
{
    static const struct {
        const char *name;
        int num;
    } names[] = {
        {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT},
        {"KILL", SIGKILL}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2},
        {"TERM", SIGTERM}, {"CONT", SIGCONT}, {"STOP", SIGSTOP},
        {"ALRM", SIGALRM},
    };
    const char *n = strncmp (s, "SIG", 3) == 0 ? s + 3 : s;
    char *end;
    long v = strtol (s, &end, 10);

    if (*s && *end == '\0')
        return (v > 0 && v < 65) ? (int)v : -1;
    for (size_t i = 0; i < sizeof (names) / sizeof (names[0]); i++)
        if (!strcmp (n, names[i].name))
            return names[i].num;
    return -1;
}

static const char *proc_name (int pid, const char *label)
{
    static char buf[64];
    if (label)
        return label;
    snprintf (buf, sizeof (buf), "pid %d", pid);
    return buf;
}

static int sp_ps (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"rank", required_argument, NULL, 'r'},
        {"service", required_argument, NULL, 's'},
        {"no-header", no_argument, NULL, 'n'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct target t = {.rank = FLUX_NODEID_ANY, .topic = "rexec"};
    bool header = true;
    flux_future_t *f;
    json_t *procs, *p;
    size_t i;
    int c;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "r:s:n", longopts)) != -1) {
        if (c == 'n')
            header = false;
        else
            common_opt (&t, c);
    }
    if (optind != argc)
        cmd_usage_error ("ps takes no arguments");
    h = cmd_open ();
    if (!(f = flux_rpc (h, topic (&t, "list"), NULL, t.rank, 0))
        || flux_rpc_get_unpack (f, "{s:o}", "procs", &procs) < 0
        || !json_is_array (procs))
        cmd_die ("%s: %s", topic (&t, "list"),
                 f ? future_strerror (f, errno) : strerror (errno));
    if (header)
        printf ("%9s %-5s %-16s %s\n", "PID", "STATE", "LABEL", "CMD");
    json_array_foreach (procs, i, p)
    {
        int pid;
        const char *cmd, *label = "", *state;
        if (json_unpack (p, "{s:i s:s s?s s:s}", "pid", &pid, "cmd", &cmd,
                         "label", &label, "state", &state)
            < 0)
            cmd_die ("%s: malformed response", topic (&t, "list"));
        printf ("%9d %-5s %-16s %s\n", pid, state, *label ? label : "-", cmd);
    }
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}

/* wait: the status (or -1 with text printed); output written if asked. */
static int wait_proc (flux_t *h, struct target *t, int pid, const char *label,
                      bool output)
{
    flux_future_t *f;
    json_t *out = NULL, *io;
    int status;
    size_t i;

    if (!(f = label ? flux_rpc_pack (h, topic (t, "wait"), t->rank, 0,
                                     "{s:i s:s}", "pid", 0, "label", label)
                    : flux_rpc_pack (h, topic (t, "wait"), t->rank, 0, "{s:i}",
                                     "pid", pid))
        || flux_rpc_get_unpack (f, "{s:i s?o}", "status", &status, "output",
                                &out)
               < 0) {
        fprintf (stderr, "%s: wait %s: %s\n", cmd_prog (),
                 proc_name (pid, label),
                 f ? future_strerror (f, errno) : strerror (errno));
        flux_future_destroy (f);
        return -1;
    }
    if (output && json_is_array (out)) {
        json_array_foreach (out, i, io)
        {
            const char *stream, *rank;
            char *data = NULL;
            size_t len = 0;
            bool eof;
            if (subprocess_io_decode (io, &stream, &rank, &data, &len, &eof)
                == 0) {
                FILE *fp = !strcmp (stream, "stderr") ? stderr : stdout;
                if (len > 0)
                    fwrite (data, 1, len, fp);
            }
            free (data);
        }
        fflush (stdout);
    }
    flux_future_destroy (f);
    return status;
}

static int exit_code (int status)
{
    if (WIFSIGNALED (status))
        return 128 + WTERMSIG (status);
    return WEXITSTATUS (status);
}

static int sp_kill (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"rank", required_argument, NULL, 'r'},
        {"service", required_argument, NULL, 's'},
        {"wait", no_argument, NULL, 'w'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct target t = {.rank = FLUX_NODEID_ANY, .topic = "rexec"};
    bool wait = false;
    const char *label;
    int c, signum, pid, status, rc = 0;
    flux_future_t *f;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "r:s:w", longopts)) != -1) {
        if (c == 'w')
            wait = true;
        else
            common_opt (&t, c);
    }
    if (argc - optind != 2)
        cmd_usage_error ("expected SIGNUM PID|LABEL");
    if ((signum = parse_signal (argv[optind])) < 0)
        cmd_usage_error ("invalid signal '%s'", argv[optind]);
    parse_proc (argv[optind + 1], &pid, &label);
    h = cmd_open ();
    f = label
            ? flux_rpc_pack (h, topic (&t, "kill"), t.rank, 0, "{s:i s:i s:s}",
                             "pid", 0, "signum", signum, "label", label)
            : flux_rpc_pack (h, topic (&t, "kill"), t.rank, 0, "{s:i s:i}",
                             "pid", pid, "signum", signum);
    if (!f || flux_rpc_get (f, NULL) < 0) {
        fprintf (stderr, "%s: kill %s: %s\n", cmd_prog (),
                 proc_name (pid, label),
                 f ? future_strerror (f, errno) : strerror (errno));
        rc = 1;
    }
    flux_future_destroy (f);
    if (wait) {
        /* as flux-core: a waitable process that exited before the kill
         * still gives its status */
        if ((status = wait_proc (h, &t, pid, label, false)) < 0)
            rc = 1;
        else
            rc = exit_code (status);
    }
    flux_close (h);
    return rc;
}

static int sp_wait (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"rank", required_argument, NULL, 'r'},
        {"service", required_argument, NULL, 's'},
        {"output", no_argument, NULL, 'o'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct target t = {.rank = FLUX_NODEID_ANY, .topic = "rexec"};
    bool output = false;
    const char *label;
    int c, pid, status;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "r:s:o", longopts)) != -1) {
        if (c == 'o')
            output = true;
        else
            common_opt (&t, c);
    }
    if (argc - optind != 1)
        cmd_usage_error ("expected PID|LABEL");
    parse_proc (argv[optind], &pid, &label);
    h = cmd_open ();
    status = wait_proc (h, &t, pid, label, output);
    flux_close (h);
    return status < 0 ? 1 : exit_code (status);
}

/* ---- flux exec --bg ---- */

int sproc_exec_bg (flux_t *h, const char *service, const struct idset *ranks,
                   const flux_cmd_t *cmd, bool waitable)
{
    size_t n = idset_count (ranks), i = 0;
    flux_future_t **f;
    char topic[160];
    json_t *o;
    int flags = SUBPROCESS_REXEC_STDOUT | SUBPROCESS_REXEC_STDERR;
    int rc = 0;

    if (waitable)
        flags |= SUBPROCESS_REXEC_WAITABLE;
    snprintf (topic, sizeof (topic), "%s.exec", service);
    if (!(f = calloc (n, sizeof (*f))) || !(o = flux_cmd_tojson (cmd)))
        cmd_die ("out of memory");
    /* all requests first (a background exec is not streaming: one
     * response, started {pid}), then the answers in rank order */
    for (unsigned int r = idset_first (ranks); r != IDSET_INVALID_ID;
         r = idset_next (ranks, r), i++) {
        if (!(f[i] = flux_rpc_pack (h, topic, r, 0, "{s:O s:i s:i}", "cmd", o,
                                    "flags", flags, "local_flags", 0)))
            cmd_die ("rank %u: %s: %s", r, topic, strerror (errno));
    }
    i = 0;
    for (unsigned int r = idset_first (ranks); r != IDSET_INVALID_ID;
         r = idset_next (ranks, r), i++) {
        int pid;
        if (flux_rpc_get_unpack (f[i], "{s:i}", "pid", &pid) < 0) {
            const char *arg0 = flux_cmd_arg (cmd, 0);
            const char *text = future_strerror (f[i], errno);
            size_t n = strlen (arg0);
            /* the server's text may name the command already */
            if (!strncmp (text, arg0, n) && !strncmp (text + n, ": ", 2))
                text += n + 2;
            fprintf (stderr, "flux-exec: Error: rank %u: %s: %s\n", r, arg0,
                     text);
            rc = 1;
        }
        else
            printf ("%u: %d\n", r, pid);
        flux_future_destroy (f[i]);
    }
    fflush (stdout);
    json_decref (o);
    free (f);
    return rc;
}
