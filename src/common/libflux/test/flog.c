/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* Unit tests for flux_log: the line a call sends, over loop://. */
#include <errno.h>
#include <string.h>

#include "libflux/flux.h"
#include "tap.h"

/* The next message the loop handle got back: the payload of a log.append
 * request with no response wanted. */
static char *next_line (flux_t *h)
{
    static char buf[2048];
    flux_msg_t *msg = flux_recv (h, FLUX_O_NONBLOCK);
    const void *data;
    size_t len;
    const char *topic;

    buf[0] = '\0';
    if (!msg)
        return NULL;
    if (flux_msg_get_topic (msg, &topic) < 0 || strcmp (topic, "log.append")
        || !flux_msg_is_noresponse (msg)
        || flux_request_decode_raw (msg, NULL, &data, &len) < 0
        || len >= sizeof (buf)) {
        flux_msg_decref (msg);
        return NULL;
    }
    memcpy (buf, data, len);
    buf[len] = '\0';
    flux_msg_decref (msg);
    return buf;
}

int main (int argc, char *argv[])
{
    flux_t *h = flux_open ("loop://", 0);
    char *line, big[4000];

    plan (NO_PLAN);
    ok (h != NULL, "loop:// opened");
    ok (flux_attr_set_cacheonly (h, "rank", "7") == 0, "rank is 7");

    errno = 42;
    flux_log (h, LOG_WARNING, "hello %d", 3);
    ok (errno == 42, "flux_log preserves errno");
    line = next_line (h);
    ok (line != NULL, "flux_log sent a log.append with no response");
    ok (line && !strncmp (line, "<33>1 ", 6),
        "PRI is severity << 3 | facility 1 (user)");
    ok (line && strstr (line, "Z 7 flog.t ") != NULL,
        "timestamp, rank and the program name follow: %s", line ? line : "");
    ok (line && strlen (line) > 12
            && !strcmp (line + strlen (line) - 12, " - - hello 3"),
        "structured data and the message end the line");

    ok (flux_log_set_appname (h, "mymod") == 0, "set appname");
    ok (flux_log_set_appname (h, "two words") < 0 && errno == EINVAL,
        "an appname with a blank is EINVAL");
    errno = ENOENT;
    flux_log_error (h, "open %s", "x");
    line = next_line (h);
    ok (line && !strncmp (line, "<25>1 ", 6), "flux_log_error is LOG_ERR");
    ok (line && strstr (line, " mymod ")
            && strstr (line, "open x: No such file or directory"),
        "flux_log_error appends strerror: %s", line ? line : "");

    flux_log (h, LOG_INFO, "trailing newline\n\n");
    line = next_line (h);
    ok (line && line[strlen (line) - 1] == 'e',
        "trailing newlines are dropped");

    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    flux_log (h, LOG_INFO, "%s", big);
    line = next_line (h);
    ok (line && strlen (line) < 2048 && line[strlen (line) - 1] == 'x',
        "an overlong message is truncated, still one line");

    {
        flux_t *h2 = flux_open ("loop://", 0);
        flux_log (h2, LOG_INFO, "x");
        line = next_line (h2);
        ok (line && strstr (line, "Z - flog.t "),
            "rank not cached: the rank field is - and no RPC is sent");
        ok (flux_recv (h2, FLUX_O_NONBLOCK) == NULL, "nothing else was sent");
        flux_close (h2);
    }
    flux_log (NULL, LOG_INFO, "nothing");
    ok (true, "flux_log (NULL) is a no-op");
    flux_close (h);
    done_testing ();
    return 0;
}
