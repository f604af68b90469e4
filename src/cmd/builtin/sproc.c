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
#include "libutil/textbuf.h"
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
      "Z exited and not waited for), flags, label and command.\n"
      "  -o, --format=FORMAT  Python-style format: fields pid, state,\n"
      "                       statex, flags, attached, label, rank, cmd\n"
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

static const char *proc_name (int pid, const char *label)
{
    static char buf[64];
    if (label)
        return label;
    snprintf (buf, sizeof (buf), "pid %d", pid);
    return buf;
}

/* ---- ps --format ----
 *
 * As flux-core's flux sproc ps: text with {FIELD[:SPEC]} items ("{{" and
 * "}}" for braces), SPEC [[fill]align][width][type][h] with align < > ^,
 * type s or d, h showing "-" for an empty value; "+:" before a field
 * widens it to its widest value.  Headings take the field's alignment
 * and width.
 */
#define PS_DEFAULT_FORMAT \
    "{pid:>9} {statex:<3} {flags:<11h} +:{label:<16} {cmd}"

enum ps_key {
    K_PID,
    K_STATE,
    K_STATEX,
    K_FLAGS,
    K_ATTACHED,
    K_LABEL,
    K_RANK,
    K_CMD,
    K_COUNT
};

static const struct {
    const char *name, *heading;
    bool number; /* right-aligned by default, as Python does numbers */
} ps_keys[K_COUNT] = {
    [K_PID] = {"pid", "PID", true},
    [K_STATE] = {"state", "ST", false},
    [K_STATEX] = {"statex", "STAT", false},
    [K_FLAGS] = {"flags", "FLAGS", false},
    [K_ATTACHED] = {"attached", "ATTACHED", false},
    [K_LABEL] = {"label", "LABEL", false},
    [K_RANK] = {"rank", "RANK", true},
    [K_CMD] = {"cmd", "COMMAND", false},
};

struct ps_item {
    char *prefix; /* literal text before the field */
    enum ps_key key;
    char fill, align; /* align 0: the default of the field */
    int width;
    bool hyphen, expand;
};

struct ps_format {
    struct ps_item *items;
    int n;
    char *suffix;
};

static void ps_format_destroy (struct ps_format *f)
{
    if (f) {
        for (int i = 0; i < f->n; i++)
            free (f->items[i].prefix);
        free (f->items);
        free (f->suffix);
        free (f);
    }
}

/* SPEC of one field into it; -1 if malformed. */
static int ps_parse_spec (const char *spec, size_t len, struct ps_item *it)
{
    const char *p = spec, *end = spec + len;

    if (len >= 2 && strchr ("<>^", p[1])) {
        it->fill = p[0];
        it->align = p[1];
        p += 2;
    }
    else if (len >= 1 && strchr ("<>^", p[0])) {
        it->align = p[0];
        p++;
    }
    while (p < end && *p >= '0' && *p <= '9') {
        if (it->width > 10000)
            return -1;
        it->width = it->width * 10 + (*p++ - '0');
    }
    if (p < end && (*p == 's' || *p == 'd')) {
        if (*p == 'd' && !ps_keys[it->key].number)
            return -1; /* Python refuses d for a string too */
        p++;
    }
    if (p < end && *p == 'h') {
        it->hyphen = true;
        p++;
    }
    return p == end ? 0 : -1;
}

/* Parse fmt; NULL with a message in error. */
static struct ps_format *ps_format_parse (const char *fmt, flux_error_t *error)
{
    struct ps_format *f = calloc (1, sizeof (*f));
    struct textbuf lit = {0};
    const char *p = fmt;

    if (!f)
        goto nomem;
    while (*p) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            if (textbuf_append (&lit, p, 1) < 0)
                goto nomem;
            p += 2;
            continue;
        }
        if (*p == '}') {
            errprintf (error, "format: single '}' encountered");
            goto error;
        }
        if (*p != '{') {
            if (textbuf_append (&lit, p++, 1) < 0)
                goto nomem;
            continue;
        }
        const char *close = strchr (p, '}');
        const char *colon;
        struct ps_item it = {.fill = ' '};
        size_t namelen;
        int k;
        if (!close) {
            errprintf (error, "format: expected '}' before end of string");
            goto error;
        }
        colon = memchr (p + 1, ':', close - p - 1);
        namelen = (colon ? colon : close) - (p + 1);
        for (k = 0; k < K_COUNT; k++) {
            if (strlen (ps_keys[k].name) == namelen
                && !strncmp (ps_keys[k].name, p + 1, namelen))
                break;
        }
        if (k == K_COUNT) {
            errprintf (error, "Unknown format field: %.*s", (int)namelen,
                       p + 1);
            goto error;
        }
        it.key = k;
        if (colon && ps_parse_spec (colon + 1, close - colon - 1, &it) < 0) {
            errprintf (error, "Invalid format specifier for %s: '%.*s'",
                       ps_keys[k].name, (int)(close - colon - 1), colon + 1);
            goto error;
        }
        if (lit.len >= 2 && !strncmp (lit.data + lit.len - 2, "+:", 2)) {
            it.expand = true;
            lit.len -= 2;
        }
        if (!(it.prefix = strndup (lit.data ? lit.data : "", lit.len)))
            goto nomem;
        lit.len = 0;
        struct ps_item *items
            = realloc (f->items, (f->n + 1) * sizeof (*f->items));
        if (!items) {
            free (it.prefix);
            goto nomem;
        }
        f->items = items;
        f->items[f->n++] = it;
        p = close + 1;
    }
    if (!(f->suffix = strndup (lit.data ? lit.data : "", lit.len)))
        goto nomem;
    textbuf_free (&lit);
    return f;
nomem:
    errprintf (error, "out of memory");
error:
    textbuf_free (&lit);
    ps_format_destroy (f);
    return NULL;
}

/* One process of a list response, its values as ps prints them. */
struct ps_row {
    char v[K_COUNT][64];
    const char *cmd, *label; /* borrowed from the response */
};

static const char *ps_value (const struct ps_row *r, enum ps_key k)
{
    if (k == K_CMD)
        return r->cmd;
    if (k == K_LABEL)
        return r->label;
    return r->v[k];
}

static void ps_print_field (const struct ps_item *it, const char *val,
                            int width)
{
    int len = (int)strlen (val), pad = width > len ? width - len : 0;
    char align = it->align ? it->align : ps_keys[it->key].number ? '>' : '<';
    int left = align == '>' ? pad : align == '^' ? pad / 2 : 0;

    for (int i = 0; i < left; i++)
        putchar (it->fill);
    fputs (val, stdout);
    for (int i = 0; i < pad - left; i++)
        putchar (it->fill);
}

static void ps_print (const struct ps_format *f, const struct ps_row *rows,
                      size_t nrows, bool header)
{
    int *width = calloc (f->n ? f->n : 1, sizeof (*width));

    if (!width)
        cmd_die ("out of memory");
    for (int i = 0; i < f->n; i++) {
        width[i] = f->items[i].width;
        for (size_t j = 0; f->items[i].expand && j < nrows; j++) {
            int len = (int)strlen (ps_value (&rows[j], f->items[i].key));
            if (len > width[i])
                width[i] = len;
        }
    }
    for (size_t j = header ? 0 : 1; j <= nrows; j++) {
        for (int i = 0; i < f->n; i++) {
            const struct ps_item *it = &f->items[i];
            const char *val = j == 0 ? ps_keys[it->key].heading
                                     : ps_value (&rows[j - 1], it->key);
            if (j > 0 && it->hyphen && !*val)
                val = "-";
            fputs (it->prefix, stdout);
            ps_print_field (it, val, width[i]);
        }
        fputs (f->suffix, stdout);
        putchar ('\n');
    }
    free (width);
}

static int sp_ps (int argc, char **argv)
{
    static const struct option longopts[] = {
        {"rank", required_argument, NULL, 'r'},
        {"service", required_argument, NULL, 's'},
        {"format", required_argument, NULL, 'o'},
        {"no-header", no_argument, NULL, 'n'},
        CMD_OPT_HELP,
        {NULL, 0, NULL, 0},
    };
    struct target t = {.rank = FLUX_NODEID_ANY, .topic = "rexec"};
    const char *fmt = PS_DEFAULT_FORMAT;
    struct ps_format *format;
    struct ps_row *rows;
    flux_error_t error;
    bool header = true;
    flux_future_t *f;
    json_t *procs, *p;
    size_t i;
    int c, rank;
    flux_t *h;

    while ((c = cmd_getopt (argc, argv, "r:s:o:n", longopts)) != -1) {
        if (c == 'n')
            header = false;
        else if (c == 'o')
            fmt = optarg;
        else
            common_opt (&t, c);
    }
    if (optind != argc)
        cmd_usage_error ("ps takes no arguments");
    if (!(format = ps_format_parse (fmt, &error)))
        cmd_usage_error ("%s", error.text);
    h = cmd_open ();
    if (!(f = flux_rpc (h, topic (&t, "list"), NULL, t.rank, 0))
        || flux_rpc_get_unpack (f, "{s:i s:o}", "rank", &rank, "procs", &procs)
               < 0
        || !json_is_array (procs))
        cmd_die ("%s: %s", topic (&t, "list"),
                 f ? future_strerror (f, errno) : strerror (errno));
    if (!(rows = calloc (json_array_size (procs) + 1, sizeof (*rows))))
        cmd_die ("out of memory");
    json_array_foreach (procs, i, p)
    {
        struct ps_row *r = &rows[i];
        int pid, bg = 0, waitable = 0, attached = 0;
        const char *state;
        r->label = "";
        /* bg, waitable and attached are newer: a server may leave them
         * out (a foreground process is then taken as attached) */
        if (json_unpack (p, "{s:i s:s s?s s:s s?b s?b s?b}", "pid", &pid, "cmd",
                         &r->cmd, "label", &r->label, "state", &state, "bg",
                         &bg, "waitable", &waitable, "attached", &attached)
            < 0)
            cmd_die ("%s: malformed response", topic (&t, "list"));
        if (!json_object_get (p, "attached"))
            attached = !bg;
        if (!*r->label)
            r->label = "-"; /* as flux-core shows no label */
        snprintf (r->v[K_PID], sizeof (r->v[K_PID]), "%d", pid);
        snprintf (r->v[K_STATE], sizeof (r->v[K_STATE]), "%s", state);
        snprintf (r->v[K_STATEX], sizeof (r->v[K_STATEX]), "%s%s", state,
                  attached ? "+" : "");
        snprintf (r->v[K_FLAGS], sizeof (r->v[K_FLAGS]), "%s%s%s",
                  bg ? "bg" : "", bg && waitable ? "," : "",
                  waitable ? "waitable" : "");
        snprintf (r->v[K_ATTACHED], sizeof (r->v[K_ATTACHED]), "%s",
                  attached ? "Y" : "");
        snprintf (r->v[K_RANK], sizeof (r->v[K_RANK]), "%d", rank);
    }
    ps_print (format, rows, json_array_size (procs), header);
    fflush (stdout);
    free (rows);
    ps_format_destroy (format);
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
    if ((signum = cmd_parse_signal (argv[optind])) < 0)
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
