/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* libFuzzer target for every parser of flux-imp (scripts/fuzz.sh builds
 * it).  The first byte, modulo 5, picks the parser; the rest is its input:
 *   0  imp_j_decode (J), then imp_j_check_munge with the input's tail
 *   1  imp_conf_parse_text as JSON, then imp_conf_from_json
 *   2  imp_conf_parse_text as YAML, then imp_conf_from_json and a merge
 *   3  imp_input_decode (the exec input from the helper or stdin)
 *   4  imp_msg_decode (the privsep message), re-encoded and decoded again
 * Everything is freed; a failed check aborts.  Seeds: corpus/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "input.h"
#include "sign.h"

static void check (int cond, const char *what)
{
    if (!cond) {
        fprintf (stderr, "imp_fuzz: check failed: %s\n", what);
        abort ();
    }
}

static void conf (const char *s, size_t len, bool yaml)
{
    struct imp_err e;
    struct imp_conf c;
    json_t *o = imp_conf_parse_text (s, len, yaml, "fuzz", &e);

    if (!o)
        return;
    check (json_is_object (o), "a parsed config is an object");
    if (imp_conf_from_json (o, &c, &e) == 0) {
        for (size_t i = 0; i < c.nrun; i++)
            check (imp_conf_run (&c, c.run[i].name) != NULL, "run lookup");
        imp_conf_clear (&c);
    }
    if (yaml) {
        json_t *d = json_object ();
        json_t *copy = json_deep_copy (o);
        /* merging a table into a copy of itself sets leaves twice */
        if (d && copy && imp_conf_merge (d, o, "a", &e) == 0)
            (void)imp_conf_merge (d, copy, "b", &e);
        json_decref (d);
        json_decref (copy);
    }
    json_decref (o);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct imp_err e;
    char *s;
    size_t len;

    if (size < 1)
        return 0;
    len = size - 1;
    if (!(s = malloc (len + 1)))
        return 0;
    memcpy (s, data + 1, len);
    s[len] = '\0';
    switch (data[0] % 5) {
        case 0: {
            struct imp_j j;
            if (imp_j_decode (s, &j, &e) == 0) {
                check (j.payload && j.signature && j.signed_text,
                       "a decoded J has its parts");
                check (strlen (j.payload) == j.payload_len, "payload length");
                (void)imp_j_check_munge (&j, s, len > 33 ? 33 : len, j.userid,
                                         0, 300, 100, &e);
                imp_j_clear (&j);
            }
            break;
        }
        case 1:
            conf (s, len, false);
            break;
        case 2:
            conf (s, len, true);
            break;
        case 3: {
            char *J = imp_input_decode (s, len, &e);
            free (J);
            break;
        }
        case 4: {
            struct imp_msg m, m2;
            if (imp_msg_decode (s, len, &m, &e) == 0) {
                char *t = imp_msg_encode (m.uid, m.shell, m.args);
                if (t) {
                    check (imp_msg_decode (t, strlen (t), &m2, &e) == 0,
                           "an encoded message decodes");
                    check (m2.uid == m.uid && !strcmp (m2.shell, m.shell),
                           "the message round trips");
                    imp_msg_clear (&m2);
                    free (t);
                }
                imp_msg_clear (&m);
            }
            break;
        }
    }
    free (s);
    return 0;
}
