/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* flux-imp - the setuid-root helper that lets a Flux instance owner run
 * job shells as the users who signed the jobs (RFC 15; the interface of
 * flux-security's IMP, PROTOCOLS-exec.md section 5; doc/guide/imp.md).
 *
 * Commands: version, whoami, exec SHELL ARG..., kill SIGNUM PID, run NAME.
 *
 * exec is privilege separated: the configuration (root's files) is read
 * first; then a child drops to the caller's uid and does all the parsing
 * (the helper's output, J, the munge credential) and sends the parent one
 * small checked message over a pipe; the parent re-checks it and only
 * switches to the job's user and execs.  Every refusal is one line
 * "flux-imp: error: ..." on stderr and exit 1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "shell/killsig.h"
#include "input.h"
#include "sign.h"

#ifndef IMP_CONFIG_DIR
#define IMP_CONFIG_DIR "/etc/flux/imp/conf.d"
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

extern char **environ;

static const int fwd_signals[]
    = {SIGTERM, SIGINT, SIGHUP, SIGCONT, SIGALRM, SIGWINCH, SIGTTIN, SIGTTOU};

struct imp {
    uid_t ruid;
    gid_t rgid;
    bool privileged; /* setuid root: euid 0, ruid not 0 */
    char caller[64];
    struct imp_conf conf;
};

static void die (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2), noreturn));
static void die (const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    fprintf (stderr, "flux-imp: error: %s\n", buf);
    exit (1);
}

static void usage (FILE *f)
{
    fprintf (f,
             "Usage: flux-imp COMMAND [ARGS...]\n"
             "Run Flux job shells as the users who signed the jobs (RFC 15).\n"
             "Commands:\n"
             "  version            print the version\n"
             "  whoami             print the real and effective uid\n"
             "  exec SHELL [ARG..] run SHELL as the user who signed J (J from\n"
             "                     $FLUX_IMP_EXEC_HELPER's output or stdin)\n"
             "  kill SIGNUM PID    signal a process of a job an IMP of yours "
             "started\n"
             "  run NAME           run the configured script NAME as root\n"
             "Configuration: %s (see flux-imp(8)).\n",
             IMP_CONFIG_DIR);
}

/* Make sure fds 0, 1 and 2 are open (on /dev/null if not), so that no
 * file the IMP opens later becomes someone's stdin, stdout or stderr. */
static void std_fds (void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl (fd, F_GETFD) < 0 && errno == EBADF) {
            int n = open ("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
            if (n != fd)
                _exit (1);
        }
    }
}

/* Close every fd above 2. */
/* Close every descriptor from first on. */
static void close_fds_from (int first)
{
    DIR *d;
    struct dirent *ent;

    if (close_range ((unsigned)first, ~0U, 0) == 0)
        return;
    if (!(d = opendir ("/proc/self/fd"))) {
        for (int fd = first; fd < 65536; fd++)
            close (fd);
        return;
    }
    while ((ent = readdir (d))) {
        int fd = atoi (ent->d_name);
        if (fd >= first && fd != dirfd (d))
            close (fd);
    }
    closedir (d);
}

static void close_fds (void)
{
    close_fds_from (3);
}

/* Drop to the caller's ids for good, and check that root cannot be
 * regained. */
static void drop_to_caller (struct imp *imp)
{
    if (!imp->privileged)
        return;
    if (setgroups (1, &imp->rgid) < 0
        || setresgid (imp->rgid, imp->rgid, imp->rgid) < 0
        || setresuid (imp->ruid, imp->ruid, imp->ruid) < 0)
        die ("privsep: dropping privileges: %s", strerror (errno));
    if (setreuid (-1, 0) == 0)
        die ("privsep: root could be regained after dropping privileges");
}

static int write_all (int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write (fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= n;
    }
    return 0;
}

/* Read fd to EOF, at most max bytes (more is an error). */
static char *read_all (int fd, size_t max, size_t *lenp, const char *what)
{
    size_t len = 0, size = 4096;
    char *buf = malloc (size + 1);

    if (!buf)
        die ("out of memory");
    for (;;) {
        ssize_t n;
        if (len == size) {
            if (size >= max + 1)
                die ("%s is larger than %zu bytes", what, max);
            size = size * 2 > max + 1 ? max + 1 : size * 2;
            if (!(buf = realloc (buf, size + 1)))
                die ("out of memory");
        }
        n = read (fd, buf + len, size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die ("reading %s: %s", what, strerror (errno));
        if (n == 0)
            break;
        len += n;
    }
    if (len > max)
        die ("%s is larger than %zu bytes", what, max);
    buf[len] = '\0';
    *lenp = len;
    return buf;
}

/* Run FLUX_IMP_EXEC_HELPER (words split on blanks, execvp) and return
 * its output; a non-zero exit is fatal.  Runs as the caller. */
static char *run_helper (const char *helper, size_t *lenp)
{
    char *copy, *argv[65], *save = NULL;
    int argc = 0, fd[2], status;
    pid_t pid;
    char *out;

    if (!(copy = strdup (helper)))
        die ("out of memory");
    for (char *w = strtok_r (copy, " \t\n", &save); w;
         w = strtok_r (NULL, " \t\n", &save)) {
        if (argc == 64)
            die ("exec: FLUX_IMP_EXEC_HELPER has too many words");
        argv[argc++] = w;
    }
    argv[argc] = NULL;
    if (argc == 0)
        die ("exec: FLUX_IMP_EXEC_HELPER is empty");
    if (pipe2 (fd, O_CLOEXEC) < 0 || (pid = fork ()) < 0)
        die ("exec: helper: %s", strerror (errno));
    if (pid == 0) {
        if (dup2 (fd[1], STDOUT_FILENO) < 0)
            _exit (126);
        close_fds ();
        execvp (argv[0], argv);
        fprintf (stderr, "flux-imp: error: exec: helper %s: %s\n", argv[0],
                 strerror (errno));
        _exit (errno == ENOENT ? 127 : 126);
    }
    close (fd[1]);
    out = read_all (fd[0], IMP_INPUT_MAX, lenp, "the helper's output");
    close (fd[0]);
    while (waitpid (pid, &status, 0) < 0)
        if (errno != EINTR)
            die ("exec: helper: waitpid: %s", strerror (errno));
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
        die ("exec: helper %s failed (%s %d)", argv[0],
             WIFEXITED (status) ? "exit" : "signal",
             WIFEXITED (status) ? WEXITSTATUS (status) : WTERMSIG (status));
    free (copy);
    return out;
}

/* The unprivileged half of exec: parse and verify everything, then send
 * the parent {cmd, uid, shell, args}.  Exits. */
static void exec_child (struct imp *imp, char **args, int wfd)
{
    const char *helper = getenv ("FLUX_IMP_EXEC_HELPER");
    struct imp_err e = {{0}};
    struct imp_j j;
    struct passwd *pw;
    size_t len;
    char *input, *J, *msg;
    uint32_t uid, mlen;

    drop_to_caller (imp);
    if (helper)
        input = run_helper (helper, &len);
    else
        input = read_all (STDIN_FILENO, IMP_INPUT_MAX, &len, "input");
    if (!(J = imp_input_decode (input, len, &e)))
        die ("exec: %s", e.text);
    free (input);
    if (imp_j_decode (J, &j, &e) < 0)
        die ("exec: %s", e.text);
    free (J);
    if (imp_j_verify (&j, imp->conf.allow_munge, imp->conf.allow_none,
                      imp->conf.munge_socket, imp->conf.max_ttl, imp->ruid,
                      &uid, &e)
        < 0)
        die ("exec: %s", e.text);
    imp_j_clear (&j);
    if (uid == 0)
        die ("exec: refusing to run a job as root");
    if (!(pw = getpwuid (uid)))
        die ("exec: the job's user %" PRIu32 " does not exist", uid);
    if (!imp_strv_has (imp->conf.exec_shells, args[0]))
        die ("exec: shell %s is not in exec.allowed-shells", args[0]);
    if (!(msg = imp_msg_encode (uid, args[0], args)))
        die ("out of memory");
    mlen = strlen (msg);
    if (write_all (wfd, &mlen, sizeof (mlen)) < 0
        || write_all (wfd, msg, mlen) < 0)
        die ("privsep: write: %s", strerror (errno));
    free (msg);
    exit (0);
}

/* The cgroup v2 mount point, or NULL. */
static const char *cgroup_mount (void)
{
    static const char *mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    struct statfs fs;

    for (size_t i = 0; i < 2; i++)
        if (statfs (mounts[i], &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
            return mounts[i];
    return NULL;
}

/* The cgroup v2 directory of pid (0: self), or NULL. */
static char *cgroup_of (pid_t pid)
{
    const char *mnt = cgroup_mount ();
    char path[64], line[4096];
    char *dir = NULL;
    FILE *f;

    if (!mnt)
        return NULL;
    if (pid)
        snprintf (path, sizeof (path), "/proc/%d/cgroup", (int)pid);
    else
        snprintf (path, sizeof (path), "/proc/self/cgroup");
    if (!(f = fopen (path, "re")))
        return NULL;
    while (fgets (line, sizeof (line), f)) {
        if (strncmp (line, "0::/", 4) == 0) {
            line[strcspn (line, "\n")] = '\0';
            if (asprintf (&dir, "%s%s", mnt, line + 3) < 0)
                dir = NULL;
            break;
        }
    }
    fclose (f);
    return dir;
}

/* Make imp-shell-<pid> under the IMP's cgroup; NULL when there is no
 * cgroup v2 we may write (then the process group is the unit). */
static char *cgroup_create (void)
{
    char *base;
    char *path = NULL;

#ifdef IMP_TEST_BUILD
    /* the tests of the path without a cgroup (t2620): never installed */
    const char *off = getenv ("FLUX_IMP_TEST_NO_CGROUP");
    if (off && *off && access (off, F_OK) == 0)
        return NULL;
#endif
    if (!(base = cgroup_of (0)))
        return NULL;
    if (asprintf (&path, "%s%simp-shell-%d", base,
                  base[strlen (base) - 1] == '/' ? "" : "/", (int)getpid ())
        < 0)
        path = NULL;
    free (base);
    if (path && mkdir (path, 0755) < 0) {
        free (path);
        path = NULL;
    }
    return path;
}

static int cgroup_write (const char *cg, const char *file, const char *val)
{
    char path[PATH_MAX];
    int fd, rc;

    snprintf (path, sizeof (path), "%s/%s", cg, file);
    if ((fd = open (path, O_WRONLY | O_CLOEXEC)) < 0)
        return -1;
    rc = write_all (fd, val, strlen (val));
    close (fd);
    return rc;
}

static bool cgroup_populated (const char *cg)
{
    char path[PATH_MAX], line[128];
    bool populated = false;
    FILE *f;

    snprintf (path, sizeof (path), "%s/cgroup.events", cg);
    if (!(f = fopen (path, "re")))
        return false;
    while (fgets (line, sizeof (line), f))
        if (!strcmp (line, "populated 1\n"))
            populated = true;
    fclose (f);
    return populated;
}

/* SIGKILL everything in the job: the cgroup, or the process group. */
/* Without a cgroup to kill, the tasks are out of reach of the SIGKILL
 * of the shell's group: each leads a group of its own.  The shell kills
 * them and itself on SHELL_KILL_SIGNAL (shell/killsig.h); it gets up to
 * a second for that before its group is killed. */
static void kill_tasks_by_shell (pid_t shell)
{
    const struct timespec step = {0, 10 * 1000 * 1000};

    if (kill (shell, SHELL_KILL_SIGNAL) < 0)
        return;
    for (int i = 0; i < 100; i++) {
        siginfo_t info = {0};
        if (waitid (P_PID, shell, &info, WEXITED | WNOHANG | WNOWAIT) < 0
            || info.si_pid == shell)
            return;
        nanosleep (&step, NULL);
    }
}

static void kill_job (pid_t shell, const char *cg)
{
    if (cg) {
        char path[PATH_MAX];
        FILE *f;
        long p;

        if (cgroup_write (cg, "cgroup.kill", "1") == 0)
            return;
        snprintf (path, sizeof (path), "%s/cgroup.procs", cg);
        if ((f = fopen (path, "re"))) {
            while (fscanf (f, "%ld", &p) == 1)
                if (p > 1)
                    kill ((pid_t)p, SIGKILL);
            fclose (f);
        }
    }
    if (shell > 1) {
        kill_tasks_by_shell (shell);
        kill (-shell, SIGKILL);
    }
}

static void block_signals (sigset_t *mask)
{
    sigemptyset (mask);
    for (size_t i = 0; i < sizeof (fwd_signals) / sizeof (fwd_signals[0]); i++)
        sigaddset (mask, fwd_signals[i]);
    sigaddset (mask, SIGUSR1);
    sigaddset (mask, SIGCHLD);
    if (sigprocmask (SIG_BLOCK, mask, NULL) < 0)
        die ("sigprocmask: %s", strerror (errno));
}

static void child_signals (void)
{
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
}

/* The IMP is the job's child subreaper (run_shell): a process of the
 * job whose parent dies is handed to the IMP, not to init.  So the tasks
 * of a shell killed from outside (they die with it: PR_SET_PDEATHSIG),
 * what they started, and even a process that called setsid and forked
 * stay within its reach, cgroup or not: at the shell's end each is
 * SIGKILLed (kill_orphans).  Meanwhile those that exit are reaped
 * (reap_orphans).  Only a process whose every ancestor up to the IMP
 * lives on is not its child, and is reached through its group. */

static int proc_uids (pid_t pid, uid_t *ruid, uid_t *euid, pid_t *ppid);

/* Reap the orphans that exited, not the shell (its exit is seen with
 * WNOWAIT by the caller).  True when the shell exited. */
static bool reap_orphans (pid_t shell)
{
    for (;;) {
        siginfo_t info = {0};
        if (waitid (P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) < 0
            || info.si_pid == 0)
            return false;
        if (info.si_pid == shell)
            return true;
        while (waitpid (info.si_pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
}

/* SIGKILL each live child of the IMP and its group; how many. */
static int kill_children (void)
{
    pid_t self = getpid ();
    struct dirent *ent;
    int n = 0;
    DIR *d;

    if (!(d = opendir ("/proc")))
        return 0;
    while ((ent = readdir (d))) {
        char *end;
        long pid = strtol (ent->d_name, &end, 10);
        uid_t r, e;
        pid_t pp;
        if (*end || pid <= 1 || pid > INT_MAX
            || proc_uids ((pid_t)pid, &r, &e, &pp) < 0 || pp != self)
            continue;
        /* a child of ours may lead a group: what it holds goes too */
        (void)kill (-(pid_t)pid, SIGKILL);
        (void)kill ((pid_t)pid, SIGKILL);
        n++;
    }
    closedir (d);
    return n;
}

/* After the shell was reaped: kill and reap every process left to the
 * IMP, until it has no child (or 10 s: one in an uninterruptible sleep
 * is left to die by itself). */
static void kill_orphans (void)
{
    const struct timespec step = {0, 10 * 1000 * 1000};

    for (int i = 0; i < 1000; i++) {
        pid_t pid;
        while ((pid = waitpid (-1, NULL, WNOHANG)) > 0
               || (pid < 0 && errno == EINTR))
            ;
        if (pid < 0) /* ECHILD: none left */
            return;
        (void)kill_children ();
        nanosleep (&step, NULL);
    }
}

/* Forward signals to pid until it exits; SIGUSR1 kills the job.  With
 * kill_rest, what is left of the job is killed before the shell is
 * reaped: its pid, the process group id, cannot be reused while it is a
 * zombie, so the SIGKILL cannot reach another group. */
static int wait_forwarding (pid_t pid, const sigset_t *mask, const char *cg,
                            bool kill_rest)
{
    int status;

    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo (mask, &si);
        if (sig < 0) {
            if (errno == EINTR)
                continue;
            die ("sigwaitinfo: %s", strerror (errno));
        }
        if (sig == SIGCHLD) {
            if (!reap_orphans (pid))
                continue;
            if (kill_rest)
                kill_job (pid, cg);
            while (waitpid (pid, &status, 0) < 0)
                if (errno != EINTR)
                    die ("waitpid: %s", strerror (errno));
            if (kill_rest)
                kill_orphans ();
            return status;
        }
        else if (sig == SIGUSR1)
            kill_job (pid, cg);
        else
            kill (pid, sig);
    }
}

/* Exit as the child did: its code, or the same signal. */
static void exit_like (int status)
{
    if (WIFSIGNALED (status)) {
        int sig = WTERMSIG (status);
        sigset_t s;
        signal (sig, SIG_DFL);
        sigemptyset (&s);
        sigaddset (&s, sig);
        sigprocmask (SIG_UNBLOCK, &s, NULL);
        raise (sig);
        exit (128 + sig);
    }
    exit (WIFEXITED (status) ? WEXITSTATUS (status) : 1);
}

/* The privileged half: switch to pw and exec the shell; wait for it. */
static int env_add (char ***envp, size_t *n, const char *name, const char *val);

/* The shell's environment: clean, not the caller's.  What the job shell
 * needs from the exec agent (FLUX_*: FLUX_URI, FLUX_KVS_NAMESPACE...),
 * the locale and time zone, a fixed PATH, and the user's own HOME, USER,
 * LOGNAME and SHELL.  Nothing else of the caller's reaches a process of
 * another user: not LD_PRELOAD, not its PATH, not its TMPDIR.  (The job's
 * own environment comes from its signed jobspec, through the shell.)
 */
static char **clean_env (struct passwd *pw)
{
    char **env = NULL;
    size_t n = 0;

    for (char **ep = environ; ep && *ep; ep++) {
        const char *e = *ep, *eq = strchr (e, '=');
        char name[256];
        if (!eq || eq == e || (size_t)(eq - e) >= sizeof (name))
            continue;
        memcpy (name, e, eq - e);
        name[eq - e] = '\0';
        if (!strcmp (name, "FLUX_IMP_EXEC_HELPER")
            || !strcmp (name, "FLUX_IMP_CONFIG_PATTERN")
            || !strcmp (name, SHELL_IMP_TMPDIR_FD_ENV))
            continue;
        if (!strncmp (name, "FLUX_", 5) || !strcmp (name, "LANG")
            || !strncmp (name, "LC_", 3) || !strcmp (name, "TZ")) {
            if (env_add (&env, &n, name, eq + 1) < 0)
                return NULL;
        }
    }
    if (env_add (&env, &n, "PATH", "/usr/local/bin:/usr/bin:/bin") < 0
        || env_add (&env, &n, "HOME", pw->pw_dir ? pw->pw_dir : "/") < 0
        || env_add (&env, &n, "USER", pw->pw_name) < 0
        || env_add (&env, &n, "LOGNAME", pw->pw_name) < 0
        || env_add (&env, &n, "SHELL",
                    pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh")
               < 0)
        return NULL;
    return env;
}

/* FLUX_JOB_TMPDIR of a shell killed by a signal.  The shell removes its
 * tmpdir when it ends; one killed (kill -9, the OOM killer, a crash)
 * cannot, and the exec agent, another user, may not.  So the shell
 * tells the IMP where it is, on a pipe inherited as descriptor TMPDIR_FD
 * (shell/killsig.h), and the IMP removes it after such an end, as the
 * job's user: a process that has dropped root for good, never following
 * a symlink nor crossing into another file system, so that whatever the
 * path names, nothing the user could not remove goes.  The job's end
 * waits for it, as it waits for a shell that removes its own. */
#define TMPDIR_FD 3

static int tmpdir_remove_cb (const char *path, const struct stat *sb, int flag,
                             struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if ((flag == FTW_DP ? rmdir (path) : unlink (path)) < 0 && errno != ENOENT)
        fprintf (stderr, "flux-imp: remove %s: %s\n", path, strerror (errno));
    return 0; /* keep going */
}

/* The path the shell reported on fd, if it is one a shell makes: an
 * absolute path to a jobtmp-* directory, with no "..".  NULL if none.
 * What is there is read without waiting: the shell wrote it in one write
 * before any task started, and a process of the job that still holds
 * the pipe (one in an uninterruptible sleep outlives kill_orphans) must
 * not keep the IMP waiting. */
static char *tmpdir_reported (int fd)
{
    char buf[PATH_MAX + 1];
    size_t n = 0;
    const char *base;
    int flags = fcntl (fd, F_GETFL);

    if (flags < 0 || fcntl (fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return NULL;
    for (;;) {
        ssize_t r = read (fd, buf + n, sizeof (buf) - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) /* the end, or EAGAIN: nothing more was written */
            break;
        n += r;
        if (n == sizeof (buf) - 1)
            return NULL; /* too long: not one of ours */
    }
    buf[n] = '\0';
    if (n == 0 || buf[0] != '/' || strstr (buf, "/../") || strstr (buf, "/./")
        || !(base = strrchr (buf, '/')) || strncmp (base + 1, "jobtmp-", 7))
        return NULL;
    return strdup (buf);
}

static void tmpdir_remove (struct imp *imp, struct passwd *pw, int fd)
{
    char *path = tmpdir_reported (fd);
    struct stat sb;
    pid_t pid;

    if (!path)
        return;
    if ((pid = fork ()) < 0) {
        fprintf (stderr, "flux-imp: warning: %s left: fork: %s\n", path,
                 strerror (errno));
        free (path);
        return;
    }
    if (pid == 0) {
        child_signals ();
        if (imp->privileged
            && (initgroups (pw->pw_name, pw->pw_gid) < 0
                || setresgid (pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0
                || setresuid (pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0
                || setreuid (-1, 0) == 0))
            _exit (1);
        if (lstat (path, &sb) == 0 && S_ISDIR (sb.st_mode)
            && sb.st_uid == getuid ())
            (void)nftw (path, tmpdir_remove_cb, 16,
                        FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
        _exit (0);
    }
    while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
    free (path);
}

static void run_shell (struct imp *imp, struct passwd *pw, char **args)
{
    sigset_t mask;
    char *cg = imp->privileged ? cgroup_create () : NULL;
    char **env;
    pid_t pid;
    int status;
    int tfd[2] = {-1, -1};

    block_signals (&mask);
    /* no pipe, no report: the tmpdir of a killed shell stays */
    if (pipe2 (tfd, O_CLOEXEC) < 0)
        tfd[0] = tfd[1] = -1;
    /* see reap_orphans(): set before the shell exists */
    if (prctl (PR_SET_CHILD_SUBREAPER, 1) < 0)
        die ("exec: PR_SET_CHILD_SUBREAPER: %s", strerror (errno));
    if ((pid = fork ()) < 0)
        die ("exec: fork: %s", strerror (errno));
    if (pid == 0) {
        child_signals ();
        if (setsid () < 0)
            die ("exec: setsid: %s", strerror (errno));
        if (cg && cgroup_write (cg, "cgroup.procs", "0") < 0)
            die ("exec: cgroup %s: %s", cg, strerror (errno));
        if (imp->privileged) {
            if (initgroups (pw->pw_name, pw->pw_gid) < 0
                || setresgid (pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0
                || setresuid (pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
                die ("exec: switching to %s: %s", pw->pw_name,
                     strerror (errno));
            if (setreuid (-1, 0) == 0)
                die ("exec: root could be regained as %s", pw->pw_name);
        }
        if (chdir ("/") < 0)
            die ("exec: chdir /: %s", strerror (errno));
        if (!(env = clean_env (pw)))
            die ("exec: out of memory");
        if (tfd[1] >= 0) {
            char fdstr[16];
            size_t n = 0;
            while (env[n])
                n++;
            snprintf (fdstr, sizeof (fdstr), "%d", TMPDIR_FD);
            /* dup2 to itself would keep close-on-exec */
            if ((tfd[1] == TMPDIR_FD ? fcntl (TMPDIR_FD, F_SETFD, 0)
                                     : dup2 (tfd[1], TMPDIR_FD))
                    < 0
                || env_add (&env, &n, SHELL_IMP_TMPDIR_FD_ENV, fdstr) < 0)
                die ("exec: %s: %s", SHELL_IMP_TMPDIR_FD_ENV, strerror (errno));
            close_fds_from (TMPDIR_FD + 1);
        }
        else
            close_fds ();
        execve (args[0], args, env);
        fprintf (stderr, "flux-imp: error: exec: %s: %s\n", args[0],
                 strerror (errno));
        _exit (errno == ENOENT ? 127 : 126);
    }
    if (tfd[1] >= 0)
        close (tfd[1]);
    /* no process of the job outlives its shell (as the exec agent does
     * for the owner's jobs) */
    status = wait_forwarding (pid, &mask, cg, true);
    if (tfd[0] >= 0) {
        if (WIFSIGNALED (status))
            tmpdir_remove (imp, pw, tfd[0]);
        close (tfd[0]);
    }
    if (cg) {
        for (int i = 0; i < 1000 && cgroup_populated (cg); i++) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep (&ts, NULL);
        }
        if (rmdir (cg) < 0)
            fprintf (stderr, "flux-imp: warning: rmdir %s: %s\n", cg,
                     strerror (errno));
        free (cg);
    }
    exit_like (status);
}

static void cmd_exec (struct imp *imp, int argc, char **argv)
{
    struct imp_err e = {{0}};
    struct imp_msg m;
    struct passwd *pw;
    char *msg;
    uint32_t mlen;
    size_t n;
    int fd[2], status;
    pid_t pid;

    if (argc < 3)
        die ("Usage: flux-imp exec SHELL [ARG...]");
    if (!imp_strv_has (imp->conf.exec_users, imp->caller))
        die ("exec: user %d (%s) is not in exec.allowed-users", (int)imp->ruid,
             imp->caller);
    if (!imp->privileged && !imp->conf.allow_unprivileged_exec)
        die ("exec: not installed setuid root, and "
             "exec.allow-unprivileged-exec is not set");
    if (argc - 2 > IMP_ARGS_MAX)
        die ("exec: too many arguments");
    if (pipe2 (fd, O_CLOEXEC) < 0 || (pid = fork ()) < 0)
        die ("privsep: %s", strerror (errno));
    if (pid == 0) {
        close (fd[0]);
        exec_child (imp, argv + 2, fd[1]);
    }
    close (fd[1]);
    /* the message: a native uint32 length, then JSON; read it all before
     * reaping the child, which may be blocked writing it */
    n = 0;
    while (n < sizeof (mlen)) {
        ssize_t r = read (fd[0], (char *)&mlen + n, sizeof (mlen) - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += r;
    }
    if (n == sizeof (mlen) && mlen > 0 && mlen <= IMP_INPUT_MAX)
        msg = read_all (fd[0], mlen, &n, "privsep message");
    else
        msg = NULL;
    close (fd[0]);
    while (waitpid (pid, &status, 0) < 0)
        if (errno != EINTR)
            die ("privsep: waitpid: %s", strerror (errno));
    if (WIFSIGNALED (status))
        die ("privsep: the unprivileged half died of signal %d",
             WTERMSIG (status));
    if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
        exit (1); /* the child said why */
    if (!msg || n != mlen)
        die ("privsep: bad message");
    if (imp_msg_decode (msg, n, &m, &e) < 0)
        die ("%s", e.text);
    free (msg);
    /* check again what the child checked that can be checked here */
    if (strcmp (m.shell, argv[2]) != 0 || strcmp (m.args[0], argv[2]) != 0)
        die ("privsep: shell differs from the command line");
    for (int i = 2; i < argc; i++)
        if (!m.args[i - 2] || strcmp (m.args[i - 2], argv[i]) != 0)
            die ("privsep: arguments differ from the command line");
    if (m.args[argc - 2] != NULL)
        die ("privsep: arguments differ from the command line");
    if (!imp_strv_has (imp->conf.exec_shells, m.shell))
        die ("exec: shell %s is not in exec.allowed-shells", m.shell);
    if (m.uid == 0)
        die ("exec: refusing to run a job as root");
    if (!(pw = getpwuid (m.uid)))
        die ("exec: the job's user %" PRIu32 " does not exist", m.uid);
    if (pw->pw_uid == 0 || pw->pw_gid == 0)
        die ("exec: refusing to run a job as root or group root");
    if (!imp->privileged && m.uid != imp->ruid)
        die ("exec: not setuid root: cannot run a job as user %" PRIu32, m.uid);
    run_shell (imp, pw, m.args);
}

/* /proc/PID/status "Uid:" real and effective. */
static int proc_uids (pid_t pid, uid_t *ruid, uid_t *euid, pid_t *ppid)
{
    char path[64], line[256];
    FILE *f;
    int found = 0;

    snprintf (path, sizeof (path), "/proc/%d/status", (int)pid);
    if (!(f = fopen (path, "re")))
        return -1;
    while (fgets (line, sizeof (line), f)) {
        unsigned long r, e;
        long pp;
        if (sscanf (line, "Uid: %lu %lu", &r, &e) == 2) {
            *ruid = r;
            *euid = e;
            found |= 1;
        }
        else if (sscanf (line, "PPid: %ld", &pp) == 1) {
            *ppid = pp;
            found |= 2;
        }
    }
    fclose (f);
    return found == 3 ? 0 : -1;
}

/* Is pid a running "flux-imp exec" of this binary, started by the
 * caller? */
static bool is_our_imp (struct imp *imp, pid_t pid)
{
    char path[64], cmdline[4096];
    struct stat a, b;
    uid_t r, e;
    pid_t pp;
    ssize_t n;
    int fd;

    if (pid <= 1 || pid == getpid ())
        return false;
    snprintf (path, sizeof (path), "/proc/%d/exe", (int)pid);
    if (stat (path, &a) < 0 || stat ("/proc/self/exe", &b) < 0
        || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        return false;
    if (proc_uids (pid, &r, &e, &pp) < 0 || r != imp->ruid)
        return false;
    snprintf (path, sizeof (path), "/proc/%d/cmdline", (int)pid);
    if ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    n = read (fd, cmdline, sizeof (cmdline) - 1);
    close (fd);
    if (n <= 0)
        return false;
    cmdline[n] = '\0';
    /* argv[1] is "exec" */
    size_t l0 = strnlen (cmdline, n);
    return (ssize_t)l0 + 1 < n && !strcmp (cmdline + l0 + 1, "exec");
}

/* The IMP that started pid (0 if none), and its cgroup if it has one. */
static pid_t owner_imp (struct imp *imp, pid_t pid, char **cgp)
{
    char *cg = cgroup_of (pid);
    pid_t cur = pid;
    uid_t r, e;

    *cgp = NULL;
    if (cg) {
        const char *base = strrchr (cg, '/') + 1;
        long ipid;
        if (sscanf (base, "imp-shell-%ld", &ipid) == 1 && ipid > 1
            && ipid < INT_MAX && is_our_imp (imp, (pid_t)ipid)) {
            *cgp = cg;
            return (pid_t)ipid;
        }
        free (cg);
    }
    for (int i = 0; i < 1024; i++) {
        pid_t pp;
        if (proc_uids (cur, &r, &e, &pp) < 0 || pp <= 1)
            break;
        if (is_our_imp (imp, pp))
            return pp;
        cur = pp;
    }
    return 0;
}

static long parse_num (const char *s, long min, long max, const char *what)
{
    char *end;
    long v;

    errno = 0;
    v = strtol (s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        die ("kill: %s %s is not valid", what, s);
    return v;
}

static void cmd_kill (struct imp *imp, int argc, char **argv)
{
    pid_t pid, ipid;
    uid_t r, e;
    pid_t pp;
    char *cg = NULL;
    int sig;

    if (argc != 4)
        die ("Usage: flux-imp kill SIGNUM PID");
    if (!imp_strv_has (imp->conf.exec_users, imp->caller))
        die ("kill: user %d (%s) is not in exec.allowed-users", (int)imp->ruid,
             imp->caller);
    sig = (int)parse_num (argv[2], 0, SIGRTMAX, "signal");
    pid = (pid_t)parse_num (argv[3], 2, INT_MAX, "pid");
    if (proc_uids (pid, &r, &e, &pp) < 0)
        die ("kill: %d: no such process", (int)pid);
    if (r == 0 || e == 0 || !(ipid = owner_imp (imp, pid, &cg)))
        die ("kill: %d: not started by an IMP of yours", (int)pid);
    if (sig == SIGKILL && pp == ipid)
        kill_job (pid, cg);
    else if (kill (pid, sig) < 0)
        die ("kill: %d: %s", (int)pid, strerror (errno));
    free (cg);
    exit (0);
}

static int env_add (char ***envp, size_t *n, const char *name, const char *val)
{
    char *s;
    char **e;
    if (asprintf (&s, "%s=%s", name, val) < 0)
        return -1;
    if (!(e = realloc (*envp, (*n + 2) * sizeof (char *)))) {
        free (s);
        return -1;
    }
    e[(*n)++] = s;
    e[*n] = NULL;
    *envp = e;
    return 0;
}

static void cmd_run (struct imp *imp, int argc, char **argv)
{
    const struct imp_run *r;
    struct passwd *pw;
    struct stat st;
    char **env = NULL, uidstr[32];
    size_t n = 0;
    const char *v;
    sigset_t mask;
    pid_t pid;
    int fd;

    if (argc != 3)
        die ("Usage: flux-imp run NAME");
    if (!(r = imp_conf_run (&imp->conf, argv[2])))
        die ("run: %.64s is not configured", argv[2]);
    if (!imp_strv_has (r->users, imp->caller))
        die ("run: user %d (%s) is not in run.%s.allowed-users", (int)imp->ruid,
             imp->caller, r->name);
    if ((fd = open (r->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        die ("run: %s: %s", r->path, strerror (errno));
    if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
        || (st.st_mode & (S_IWGRP | S_IWOTH))
        || (imp->privileged ? st.st_uid != 0
                            : (st.st_uid != 0 && st.st_uid != imp->ruid)))
        die ("run: %s: must be a regular file owned by root, writable by "
             "no one else",
             r->path);
    close (fd);
    if (!(pw = getpwuid (imp->privileged ? 0 : imp->ruid)))
        die ("run: no passwd entry for uid %d",
             imp->privileged ? 0 : (int)imp->ruid);
    /* the environment, rebuilt */
    snprintf (uidstr, sizeof (uidstr), "%d", (int)imp->ruid);
    if (((v = getenv ("FLUX_JOB_ID"))
         && env_add (&env, &n, "FLUX_JOB_ID", v) < 0)
        || ((v = getenv ("FLUX_JOB_USERID"))
            && env_add (&env, &n, "FLUX_JOB_USERID", v) < 0))
        die ("out of memory");
    for (char **ep = environ; ep && *ep; ep++) {
        char name[256];
        const char *eq = strchr (*ep, '=');
        size_t len = eq ? (size_t)(eq - *ep) : 0;
        if (!eq || len == 0 || len >= sizeof (name))
            continue;
        memcpy (name, *ep, len);
        name[len] = '\0';
        /* never the dynamic loader's variables, whatever the globs say:
         * the script runs as root */
        if (!strncmp (name, "LD_", 3))
            continue;
        if (!strcmp (name, "FLUX_JOB_ID") || !strcmp (name, "FLUX_JOB_USERID")
            || !strcmp (name, "FLUX_OWNER_USERID") || !strcmp (name, "HOME")
            || !strcmp (name, "USER") || !strcmp (name, "PATH"))
            continue;
        for (char **g = r->environ; g && *g; g++) {
            if (fnmatch (*g, name, 0) == 0) {
                if (env_add (&env, &n, name, eq + 1) < 0)
                    die ("out of memory");
                break;
            }
        }
    }
    if (env_add (&env, &n, "FLUX_OWNER_USERID", uidstr) < 0
        || env_add (&env, &n, "HOME", pw->pw_dir) < 0
        || env_add (&env, &n, "USER", pw->pw_name) < 0
        || env_add (&env, &n, "PATH", "/usr/sbin:/usr/bin:/sbin:/bin") < 0)
        die ("out of memory");

    block_signals (&mask);
    if ((pid = fork ()) < 0)
        die ("run: fork: %s", strerror (errno));
    if (pid == 0) {
        char *args[] = {r->path, NULL};
        child_signals ();
        if (setsid () < 0)
            die ("run: setsid: %s", strerror (errno));
        if (imp->privileged
            && (setgroups (0, NULL) < 0 || setresgid (0, 0, 0) < 0
                || setresuid (0, 0, 0) < 0))
            die ("run: becoming root: %s", strerror (errno));
        if (chdir ("/") < 0)
            die ("run: chdir /: %s", strerror (errno));
        close_fds ();
        execve (r->path, args, env);
        fprintf (stderr, "flux-imp: error: run: %s: %s\n", r->path,
                 strerror (errno));
        _exit (errno == ENOENT ? 127 : 126);
    }
    exit_like (wait_forwarding (pid, &mask, NULL, false));
}

int main (int argc, char *argv[])
{
    struct imp imp = {0};
    struct imp_err e = {{0}};
    struct passwd *pw;
    const char *pattern = IMP_CONFIG_DIR "/*";
    const char *cmd;

    std_fds ();
    if (argc < 2) {
        usage (stderr);
        exit (1);
    }
    cmd = argv[1];
    if (!strcmp (cmd, "--help") || !strcmp (cmd, "-h")
        || !strcmp (cmd, "help")) {
        usage (stdout);
        exit (0);
    }
    if (!strcmp (cmd, "version")) {
        printf ("flux-imp version %s\n", PACKAGE_VERSION);
        exit (0);
    }
    if (!strcmp (cmd, "whoami")) {
        printf ("flux-imp: real uid=%d effective uid=%d\n", (int)getuid (),
                (int)geteuid ());
        exit (0);
    }
    close_fds ();
    umask (022);
    imp.ruid = getuid ();
    imp.rgid = getgid ();
    if (imp.ruid == 0)
        die ("refusing to run as root");
    if (geteuid () != 0 && geteuid () != imp.ruid)
        die ("installed setuid to a user other than root");
    if (getegid () != imp.rgid && getegid () != 0)
        die ("installed setgid: not supported");
    imp.privileged = geteuid () == 0;
    if (!(pw = getpwuid (imp.ruid)))
        die ("no passwd entry for the caller (uid %d)", (int)imp.ruid);
    if (strlen (pw->pw_name) >= sizeof (imp.caller))
        die ("the caller's user name is too long");
    strcpy (imp.caller, pw->pw_name);
#ifndef IMP_TEST_BUILD
    if (!imp.privileged)
#endif
    {
        const char *p = getenv ("FLUX_IMP_CONFIG_PATTERN");
        if (p && *p)
            pattern = p;
    }
    if (imp_conf_load (pattern, imp.privileged, imp.ruid, &imp.conf, &e) < 0)
        die ("%s", e.text);
    if (!strcmp (cmd, "exec"))
        cmd_exec (&imp, argc, argv);
    else if (!strcmp (cmd, "kill"))
        cmd_kill (&imp, argc, argv);
    else if (!strcmp (cmd, "run"))
        cmd_run (&imp, argc, argv);
    die ("unknown command %.32s (try flux-imp --help)", cmd);
}
