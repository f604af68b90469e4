/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/conf.c - flux-imp's configuration: YAML and JSON, merging, the
 * keys and their checks, file ownership. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "tap.h"

static const char *yaml_ok = "exec:\n"
                             "  allowed-users: [flux, 'alice']\n"
                             "  allowed-shells:\n"
                             "    - /usr/libexec/flux/flux-shell\n"
                             "  allow-unprivileged-exec: true\n"
                             "run:\n"
                             "  prolog:\n"
                             "    path: /etc/flux/prolog\n"
                             "    allowed-users: [flux]\n"
                             "    allowed-environment: [\"FLUX_*\"]\n"
                             "sign:\n"
                             "  max-ttl: 60\n"
                             "  allowed-types: [munge, none]\n"
                             "  munge:\n"
                             "    socket-path: /run/munge/sock\n";

static int conf_text (const char *text, bool yaml, struct imp_conf *c,
                      struct imp_err *e)
{
    json_t *o = imp_conf_parse_text (text, strlen (text), yaml, "t", e);
    int rc;
    if (!o)
        return -1;
    rc = imp_conf_from_json (o, c, e);
    json_decref (o);
    return rc;
}

static void test_keys (void)
{
    struct imp_conf c;
    struct imp_err e = {{0}};
    const struct imp_run *r;

    ok (conf_text (yaml_ok, true, &c, &e) == 0, "YAML: every key: %s", e.text);
    ok (imp_strv_has (c.exec_users, "flux")
            && imp_strv_has (c.exec_users, "alice")
            && !imp_strv_has (c.exec_users, "bob"),
        "exec.allowed-users");
    ok (imp_strv_has (c.exec_shells, "/usr/libexec/flux/flux-shell"),
        "exec.allowed-shells");
    ok (c.allow_unprivileged_exec, "exec.allow-unprivileged-exec");
    ok (c.max_ttl == 60 && c.allow_munge && c.allow_none,
        "sign.max-ttl, sign.allowed-types");
    is (c.munge_socket, "/run/munge/sock", "sign.munge.socket-path");
    ok ((r = imp_conf_run (&c, "prolog"))
            && !strcmp (r->path, "/etc/flux/prolog")
            && imp_strv_has (r->users, "flux")
            && imp_strv_has (r->environ, "FLUX_*"),
        "run.prolog");
    ok (imp_conf_run (&c, "epilog") == NULL, "run.epilog is not configured");
    imp_conf_clear (&c);

    ok (conf_text ("{}", false, &c, &e) == 0 && c.max_ttl == 300
            && c.allow_munge && !c.allow_none && c.exec_users
            && !c.exec_users[0] && !c.allow_unprivileged_exec,
        "JSON: defaults: nobody allowed, munge only, max-ttl 300");
    imp_conf_clear (&c);
    ok (conf_text ("", true, &c, &e) == 0,
        "YAML: an empty file is an empty table");
    imp_conf_clear (&c);

    const char *bad[][2] = {
        {"{\"exec\":{\"allowed-user\":[]}}", "a misspelt key"},
        {"{\"exec\":{\"allowed-users\":\"flux\"}}", "a string for an array"},
        {"{\"exec\":{\"allowed-shells\":[\"flux-shell\"]}}",
         "a relative shell"},
        {"{\"exec\":{\"allow-unprivileged-exec\":1}}", "an int for a bool"},
        {"{\"exec\":{\"pam-support\":true}}", "pam-support"},
        {"{\"sign\":{\"max-ttl\":0}}", "max-ttl 0"},
        {"{\"sign\":{\"allowed-types\":[]}}", "no allowed types"},
        {"{\"sign\":{\"allowed-types\":[\"curve\"]}}", "curve"},
        {"{\"run\":{\"p\":{\"allowed-users\":[]}}}", "a run without path"},
        {"{\"run\":{\"p q\":{\"path\":\"/x\"}}}", "a bad run name"},
        {"{\"run\":{\"p\":{\"path\":\"x\"}}}", "a relative run path"},
        {"{\"exec\":[]}", "exec not a table"},
        {"{\"foo\":1}", "an unknown table"},
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        ok (conf_text (bad[i][0], false, &c, &e) < 0, "refused: %s: %s",
            bad[i][1], e.text);
    }
    const char *badyaml[][2] = {
        {"a: &x 1\nb: *x\n", "anchors"},
        {"- 1\n", "a sequence at the top"},
        {"a: 1\n---\nb: 2\n", "two documents"},
        {"a: [\n", "a syntax error"},
        {"a: 1\na: 2\n", "a repeated key"},
        {"{[1]: 2}\n", "a non-scalar key"},
    };
    for (size_t i = 0; i < sizeof (badyaml) / sizeof (badyaml[0]); i++) {
        json_t *o = imp_conf_parse_text (badyaml[i][0], strlen (badyaml[i][0]),
                                         true, "t", &e);
        ok (o == NULL, "YAML refused: %s: %s", badyaml[i][1], e.text);
        json_decref (o);
    }
}

static void test_merge (void)
{
    struct imp_err e = {{0}};
    json_t *a = json_loads ("{\"exec\":{\"allowed-users\":[\"a\"]}}", 0, NULL);
    json_t *b
        = json_loads ("{\"exec\":{\"allowed-shells\":[\"/s\"]}}", 0, NULL);
    json_t *c = json_loads ("{\"exec\":{\"allowed-users\":[\"b\"]}}", 0, NULL);

    ok (imp_conf_merge (a, b, "b", &e) == 0
            && json_object_size (json_object_get (a, "exec")) == 2,
        "merge: tables are merged");
    ok (imp_conf_merge (a, c, "c", &e) < 0 && strstr (e.text, "set twice"),
        "merge: a key set twice is refused: %s", e.text);
    json_decref (a);
    json_decref (b);
    json_decref (c);
}

static void write_file (const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen (path, "w");
    if (f) {
        fputs (text, f);
        fclose (f);
    }
    chmod (path, mode);
}

static void test_load (void)
{
    char dir[] = "/tmp/imp-conf.XXXXXX";
    char path[256], pattern[256];
    struct imp_conf c;
    struct imp_err e = {{0}};

    if (!mkdtemp (dir))
        BAIL_OUT ("mkdtemp");
    chmod (dir, 0755);
    snprintf (pattern, sizeof (pattern), "%s/*", dir);
    ok (imp_conf_load (pattern, false, getuid (), &c, &e) < 0,
        "load: no file is an error: %s", e.text);
    snprintf (path, sizeof (path), "%s/a.yaml", dir);
    write_file (path, "exec:\n  allowed-users: [x]\n", 0644);
    snprintf (path, sizeof (path), "%s/b.json", dir);
    write_file (path, "{\"exec\":{\"allowed-shells\":[\"/s\"]}}", 0644);
    snprintf (path, sizeof (path), "%s/README", dir);
    write_file (path, "ignored", 0644);
    ok (imp_conf_load (pattern, false, getuid (), &c, &e) == 0
            && imp_strv_has (c.exec_users, "x")
            && imp_strv_has (c.exec_shells, "/s"),
        "load: a YAML and a JSON file are merged: %s", e.text);
    imp_conf_clear (&c);
    ok (imp_conf_load (pattern, getuid () == 0, getuid (), &c, &e) == 0,
        "load: files owned by the test user pass");
    imp_conf_clear (&c);
    snprintf (path, sizeof (path), "%s/b.json", dir);
    chmod (path, 0666);
    ok (imp_conf_load (pattern, false, getuid (), &c, &e) < 0
            && strstr (e.text, "writable"),
        "load: a world-writable file is refused: %s", e.text);
    chmod (path, 0664);
    ok (imp_conf_load (pattern, true, getuid (), &c, &e) < 0,
        "load (secure): a group-writable file is refused: %s", e.text);
    chmod (path, 0644);
    if (getuid () != 0) {
        ok (imp_conf_load (pattern, true, getuid (), &c, &e) < 0,
            "load (secure): a file not owned by root is refused: %s", e.text);
    }
    snprintf (path, sizeof (path), "%s/c.yml", dir);
    if (symlink ("b.json", path) == 0)
        ok (imp_conf_load (pattern, false, getuid (), &c, &e) < 0,
            "load: a symlink is refused: %s", e.text);
    unlink (path);
    snprintf (path, sizeof (path), "%s/d.toml", dir);
    write_file (path, "[exec]\n", 0644);
    ok (imp_conf_load (pattern, false, getuid (), &c, &e) < 0
            && strstr (e.text, "TOML"),
        "load: a TOML file is refused (no reader yet): %s", e.text);
    unlink (path);
    chmod (dir, 0777);
    ok (imp_conf_load (pattern, false, getuid (), &c, &e) < 0,
        "load: a world-writable directory is refused: %s", e.text);
    chmod (dir, 0755);
    snprintf (path, sizeof (path), "%s/a.yaml", dir);
    unlink (path);
    snprintf (path, sizeof (path), "%s/b.json", dir);
    unlink (path);
    snprintf (path, sizeof (path), "%s/README", dir);
    unlink (path);
    rmdir (dir);
}

int main (int argc, char *argv[])
{
    plan (NO_PLAN);
    test_keys ();
    test_merge ();
    test_load ();
    done_testing ();
    return 0;
}
