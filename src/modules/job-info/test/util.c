/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/util.c - job-info's pure helpers: job owner from the eventlog,
 * access check, current jobspec and R, eventlog lines.
 */
#include <errno.h>
#include <string.h>

#include "tap.h"
#include "util.h"

#define SUBMIT                                                             \
    "{\"timestamp\":1.0,\"name\":\"submit\",\"context\":{\"userid\":1000," \
    "\"urgency\":16,\"flags\":0,\"version\":1}}\n"

static flux_msg_t *req (uint32_t userid, uint32_t rolemask)
{
    flux_msg_t *msg = flux_request_encode ("job-info.lookup", NULL);
    if (!msg
        || flux_msg_set_cred (msg, (struct flux_msg_cred){userid, rolemask}))
        BAIL_OUT ("cannot build request");
    return msg;
}

static void test_allow (void)
{
    uint32_t uid = 0;
    flux_msg_t *owner = req (5, FLUX_ROLE_OWNER);
    flux_msg_t *mine = req (1000, FLUX_ROLE_USER);
    flux_msg_t *other = req (1001, FLUX_ROLE_USER);

    ok (info_submit_userid (SUBMIT "{\"timestamp\":2,\"name\":\"x\"}\n", &uid)
                == 0
            && uid == 1000,
        "the submit event gives the userid");
    errno = 0;
    ok (info_submit_userid ("{\"timestamp\":2,\"name\":\"x\"}\n" SUBMIT, &uid)
                < 0
            && errno == EPROTO,
        "submit must be the first event");
    errno = 0;
    ok (info_submit_userid ("", &uid) < 0 && errno == EPROTO
            && info_submit_userid (NULL, &uid) < 0
            && info_submit_userid ("{\"timestamp\":1,\"name\":\"submit\"}\n",
                                   &uid)
                   < 0,
        "empty, NULL, or a submit without userid is EPROTO");
    ok (info_allow (owner, SUBMIT) == 0, "the instance owner may see any job");
    ok (info_allow (mine, SUBMIT) == 0, "the submitter may see its job");
    errno = 0;
    ok (info_allow (other, SUBMIT) < 0 && errno == EPERM,
        "another guest gets EPERM");
    errno = 0;
    ok (info_allow (other, "garbage\n") < 0 && errno == EPROTO,
        "a guest and a bad eventlog: EPROTO");
    flux_msg_decref (owner);
    flux_msg_decref (mine);
    flux_msg_decref (other);
}

static void test_updates (void)
{
    json_t *js
        = json_pack ("{s:{s:{s:f}}}", "attributes", "system", "duration", 60.0);
    json_t *R = json_pack ("{s:i s:{s:f}}", "version", 1, "execution",
                           "expiration", 100.0);
    const char *log = SUBMIT
        "{\"timestamp\":2,\"name\":\"jobspec-update\",\"context\":{"
        "\"attributes.system.duration\":120,\"attributes.system.queue\":\"q\","
        "\"attributes.system.duration.bad\":1}}\n"
        "{\"timestamp\":3,\"name\":\"resource-update\",\"context\":{"
        "\"expiration\":200}}\n"
        "{\"timestamp\":4,\"name\":\"resource-update\",\"context\":{"
        "\"expiration\":300}}\n";
    json_t *o;

    ok (info_apply_jobspec_updates (js, log) == 1,
        "one jobspec-update applied");
    o = json_object_get (json_object_get (js, "attributes"), "system");
    ok (json_integer_value (json_object_get (o, "duration")) == 120
            && !strcmp (json_string_value (json_object_get (o, "queue")), "q"),
        "duration replaced, queue added, a key through a number skipped");
    ok (info_apply_R_updates (R, log) == 2
            && json_integer_value (json_object_get (
                   json_object_get (R, "execution"), "expiration"))
                   == 300,
        "two resource-updates: the last expiration wins");
    errno = 0;
    ok (info_apply_R_updates (R, "not an eventlog") < 0 && errno == EPROTO,
        "a bad eventlog is EPROTO");
    errno = 0;
    ok (info_path_set (js, "a..b", json_true ()) < 0 && errno == EINVAL
            && info_path_set (js, ".a", json_true ()) < 0
            && info_path_set (js, "", json_true ()) < 0,
        "info_path_set refuses empty path elements");
    ok (info_path_set (js, "x.y.z", json_true ()) == 0
            && json_is_true (json_object_get (
                json_object_get (json_object_get (js, "x"), "y"), "z")),
        "info_path_set creates objects on the way");
    json_decref (js);
    json_decref (R);
}

static void test_lines (void)
{
    struct info_lines l;
    const char *line;
    size_t len;
    char name[64];

    info_lines_init (&l);
    ok (info_lines_next (&l, &len) == NULL, "nothing buffered: no line");
    info_lines_feed (&l, SUBMIT "{\"timestamp\":2,\"na", strlen (SUBMIT) + 18);
    line = info_lines_next (&l, &len);
    ok (line && len == strlen (SUBMIT) && !strncmp (line, SUBMIT, len),
        "a whole line comes out with its newline");
    ok (info_line_name (line, len, name, sizeof (name))
            && !strcmp (name, "submit"),
        "info_line_name reads the event name");
    ok (info_lines_next (&l, &len) == NULL, "a partial line waits");
    info_lines_feed (&l, "me\":\"clean\"}\n", 13);
    line = info_lines_next (&l, &len);
    ok (line && info_line_name (line, len, name, sizeof (name))
            && !strcmp (name, "clean"),
        "the rest of the line completes it");
    ok (info_lines_next (&l, &len) == NULL, "and then nothing");
    ok (info_line_name ("junk\n", 5, name, sizeof (name)) == NULL,
        "a bad line has no name");
    info_lines_free (&l);
}

int main (int argc, char **argv)
{
    plan (NO_PLAN);
    test_allow ();
    test_updates ();
    test_lines ();
    done_testing ();
    return 0;
}
