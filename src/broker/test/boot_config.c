/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for boot_config: ranks from hostnames and ranges, URIs with
 * %h/%p, parents, the certificate, and each refused config with its
 * message.
 */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/boot_config.h"
#include "tap.h"

#define PUB "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
#define SEC "JTKVSB%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6x"

static char certpath[64];

static json_t *conf (const char *s)
{
    json_error_t e;
    json_t *o = json_loads (s, 0, &e);
    if (!o)
        BAIL_OUT ("bad test json: %s: %s", e.text, s);
    return o;
}

static struct boot_config *create (const char *s, const char *host,
                                   flux_error_t *error)
{
    json_t *o = conf (s);
    struct boot_config *bc = boot_config_create (o, host, error);
    json_decref (o);
    return bc;
}

static void test_ranks (void)
{
    char buf[256];
    flux_error_t error;
    struct boot_config *bc;
    char s[1024];

    snprintf (s, sizeof (s),
              "{\"bootstrap\":{\"curve_cert\":\"%s\",\"default_port\":8050,"
              "\"default_bind\":\"tcp://en0:%%p\","
              "\"default_connect\":\"tcp://e%%h:%%p\","
              "\"hosts\":[{\"host\":\"test0\",\"bind\":\"tcp://en4:9001\","
              "\"connect\":\"tcp://test-mgmt:9001\"},"
              "{\"host\":\"test[1-1023]\"}]}}",
              certpath);
    json_t *o = conf (s);
    ok (boot_config_enabled (o) == true, "a hosts array enables it");
    json_decref (o);
    o = conf ("{\"bootstrap\":{\"hosts\":[]}}");
    ok (boot_config_enabled (o) == false,
        "an empty hosts array is a standalone instance");
    json_decref (o);
    bc = create (s, "test3", &error);
    ok (bc != NULL, "flux-core's 1024-node example parses");
    if (!bc)
        diag ("%s", error.text);
    ok (bc && boot_config_rank (bc) == 3 && boot_config_size (bc) == 1024,
        "test3 is rank 3 of 1024");
    ok (bc && !strcmp (boot_config_hostlist (bc), "test[0-1023]"),
        "hostlist is test[0-1023]");
    ok (bc && boot_config_bind_uri (bc, 0, buf, sizeof (buf), &error) == 0
            && !strcmp (buf, "tcp://en4:9001"),
        "rank 0 binds its own bind: %s", buf);
    ok (bc && boot_config_connect_uri (bc, 0, buf, sizeof (buf), &error) == 0
            && !strcmp (buf, "tcp://test-mgmt:9001"),
        "rank 0 is reached at its connect: %s", buf);
    ok (bc && boot_config_bind_uri (bc, 1, buf, sizeof (buf), &error) == 0
            && !strcmp (buf, "tcp://en0:8050"),
        "rank 1 binds default_bind with %%p: %s", buf);
    ok (bc && boot_config_connect_uri (bc, 1, buf, sizeof (buf), &error) == 0
            && !strcmp (buf, "tcp://etest1:8050"),
        "rank 1 is reached at default_connect with %%h %%p: %s", buf);
    ok (bc && !strcmp (boot_config_pubkey (bc), PUB)
            && !strcmp (boot_config_seckey (bc), SEC),
        "the certificate's keys are read");
    ok (bc && !boot_config_has_parents (bc), "no parent given");
    boot_config_destroy (bc);
}

static void test_parents (void)
{
    flux_error_t error;
    struct boot_config *bc;
    char s[1024];

    snprintf (s, sizeof (s),
              "{\"bootstrap\":{\"curve_cert\":\"%s\",\"hosts\":["
              "{\"host\":\"n0\"},{\"host\":\"n1\"},"
              "{\"host\":\"n[2-3]\",\"parent\":\"n1\"},"
              "{\"host\":\"n4\",\"parent\":\"n3\"}]}}",
              certpath);
    bc = create (s, "n4", &error);
    ok (bc && boot_config_has_parents (bc), "parents given");
    if (!bc)
        diag ("%s", error.text);
    const uint32_t *p = bc ? boot_config_parents (bc) : NULL;
    ok (p && p[1] == 0 && p[2] == 1 && p[3] == 1 && p[4] == 3,
        "n1 under n0 (default), n2,n3 under n1, n4 under n3");
    boot_config_destroy (bc);
}

struct bad {
    const char *json;
    const char *host;
    const char *msg;
};

static void test_errors (void)
{
    char s[1024];
    flux_error_t error;
    const struct bad bad[] = {
        {"{\"bootstrap\":{\"hosts\":[{\"host\":\"a\"},{\"host\":\"b\"}]}}", "a",
         "curve_cert is required"},
        {"{\"bootstrap\":{\"curve_cert\":\"CERT\",\"hosts\":[{\"host\":\"a\"},"
         "{\"host\":\"b\"}]}}",
         "c", "this host (c) is not in the list"},
        {"{\"bootstrap\":{\"curve_cert\":\"CERT\",\"hosts\":[{\"host\":\"a\"},"
         "{\"host\":\"n[0-2]\"},{\"host\":\"n1\"}]}}",
         "a", "host n1 is listed twice"},
        {"{\"bootstrap\":{\"curve_cert\":\"CERT\",\"hosts\":[{\"host\":"
         "\"n[3-x]\"}]}}",
         "n3", "bad host \"n[3-x]\""},
        {"{\"bootstrap\":{\"curve_cert\":\"CERT\",\"hosts\":[{\"host\":\"a\","
         "\"port\":3}]}}",
         "a", "keys: host, bind, connect, parent"},
        {"{\"bootstrap\":{\"curve_cert\":\"CERT\",\"hosts\":[{\"host\":\"a\"},"
         "{\"host\":\"b\",\"parent\":\"z\"}]}}",
         "a", "parent z is not a host"},
        {"{\"bootstrap\":{\"curve_cert\":\"CERT\",\"hosts\":[{\"host\":\"a\"},"
         "{\"host\":\"b\",\"parent\":\"b\"}]}}",
         "a", "b is its own parent"},
        {"{\"bootstrap\":{\"curve_cert\":\"CERT\",\"default_port\":70000,"
         "\"hosts\":[{\"host\":\"a\"}]}}",
         "a", "not a port"},
        {"{\"bootstrap\":{\"curve_cert\":\"/nonexistent/cert\",\"hosts\":["
         "{\"host\":\"a\"}]}}",
         "a", "No such file"},
        {"{\"bootstrap\":{\"hosts\":\"a\"}}", "a", "must be an array"},
    };

    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        const char *cert = strstr (bad[i].json, "CERT");
        if (cert)
            snprintf (s, sizeof (s), "%.*s%s%s", (int)(cert - bad[i].json),
                      bad[i].json, certpath, cert + 4);
        else
            snprintf (s, sizeof (s), "%s", bad[i].json);
        error.text[0] = '\0';
        struct boot_config *bc = create (s, bad[i].host, &error);
        ok (bc == NULL && strstr (error.text, bad[i].msg) != NULL,
            "refused: %s", error.text);
        boot_config_destroy (bc);
    }

    /* a host with children but no bind URI */
    snprintf (s, sizeof (s),
              "{\"bootstrap\":{\"curve_cert\":\"%s\",\"hosts\":["
              "{\"host\":\"a\"},{\"host\":\"b\"}]}}",
              certpath);
    struct boot_config *bc = create (s, "b", &error);
    char buf[64];
    ok (bc && boot_config_bind_uri (bc, 0, buf, sizeof (buf), &error) < 0
            && strstr (error.text, "no bind URI"),
        "no bind URI for a parent: %s", error.text);
    boot_config_destroy (bc);

    /* a certificate readable by others */
    chmod (certpath, 0644);
    bc = create (s, "b", &error);
    ok (bc == NULL && strstr (error.text, "readable by its owner only"),
        "a certificate readable by others is refused: %s", error.text);
    boot_config_destroy (bc);
    chmod (certpath, 0600);
}

int main (int argc, char **argv)
{
    FILE *f;
    int fd;

    plan (NO_PLAN);
    snprintf (certpath, sizeof (certpath), "/tmp/bootcfg.XXXXXX");
    if ((fd = mkstemp (certpath)) < 0 || !(f = fdopen (fd, "w")))
        BAIL_OUT ("mkstemp");
    fprintf (f,
             "#   ****  a test certificate  ****\n"
             "metadata\n"
             "    name = \"test\"\n"
             "curve\n"
             "    public-key = \"%s\"\n"
             "    secret-key = \"%s\"\n",
             PUB, SEC);
    fclose (f);
    test_ranks ();
    test_parents ();
    test_errors ();
    unlink (certpath);
    done_testing ();
    return 0;
}
