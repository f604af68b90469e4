/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/reduce.c - combining reports: unions, largest status, first
 * error, finished ranks, urgency, replay. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reduce.h"
#include "tap.h"

static char out[1024];

static void emit (enum reduce_type type, const struct idset *ranks, int status,
                  const char *error, void *arg)
{
    char *s = idset_encode (ranks, IDSET_FLAG_RANGE);
    size_t len = strlen (out);

    snprintf (out + len, sizeof (out) - len, "%s%s=%s", len ? " " : "",
              reduce_typestr (type), s ? s : "?");
    len = strlen (out);
    if (type == REDUCE_EXITED || type == REDUCE_FAILED)
        snprintf (out + len, sizeof (out) - len, "/%d", status);
    len = strlen (out);
    if (error)
        snprintf (out + len, sizeof (out) - len, "(%s)", error);
    free (s);
}

static const char *flush (struct reduce *r)
{
    out[0] = '\0';
    reduce_flush (r, emit, NULL);
    return out;
}

static const char *replay (struct reduce *r)
{
    out[0] = '\0';
    reduce_replay (r, emit, NULL);
    return out;
}

static int add (struct reduce *r, enum reduce_type type, const char *ranks,
                int status, const char *error)
{
    struct idset *ids = idset_decode (ranks);
    int rc = reduce_add (r, type, ids, status, error);
    idset_destroy (ids);
    return rc;
}

int main (int argc, char **argv)
{
    struct idset *share = idset_decode ("0-7");
    struct idset *ids;
    struct reduce *r;
    enum reduce_type t;

    plan (NO_PLAN);
    ids = idset_create (0, 0);
    ok (reduce_create (ids) == NULL && errno == EINVAL,
        "an empty share: EINVAL");
    idset_destroy (ids);
    if (!(r = reduce_create (share)))
        BAIL_OUT ("reduce_create failed");
    ok (!reduce_held (r) && !reduce_finished (r) && !reduce_urgent (r)
            && !reduce_held_finished_only (r),
        "a new reduction holds nothing and is not finished");
    ok (add (r, REDUCE_STARTED, "7-8", 0, NULL) < 0 && errno == EINVAL,
        "ranks outside the share: EINVAL");
    ok (!reduce_held (r), "and nothing is held");

    ok (add (r, REDUCE_STARTED, "0-2", 0, NULL) == 0
            && add (r, REDUCE_STARTED, "3", 0, NULL) == 0,
        "two started reports");
    ok (reduce_held (r) && !reduce_urgent (r), "held, not urgent (4 of 8)");
    ok (!reduce_held_finished_only (r), "started held: not finished only");
    is (flush (r), "started=0-3", "one combined started report");
    ok (!reduce_held (r), "nothing held after the flush");
    is (flush (r), "", "a second flush hands out nothing");
    ok (add (r, REDUCE_STARTED, "2-3", 0, NULL) == 0 && !reduce_held (r),
        "ranks started again are dropped");
    ok (add (r, REDUCE_STARTED, "4-6", 0, NULL) == 0 && !reduce_urgent (r),
        "7 of 8 started: not urgent");
    ok (add (r, REDUCE_FAILED, "7", 127 << 8, "no such file") == 0
            && reduce_urgent (r),
        "the last rank failed: every rank started or finished is urgent");
    is (flush (r), "started=4-6 failed=7/32512(no such file)",
        "started then failed");

    ok (add (r, REDUCE_EXITED, "0-1", 0, NULL) == 0
            && add (r, REDUCE_EXITED, "2", 256, NULL) == 0
            && add (r, REDUCE_EXITED, "3", 9, NULL) == 0,
        "three exited reports");
    ok (!reduce_urgent (r), "not urgent while ranks run");
    ok (reduce_held_finished_only (r), "only exits held: finished only");
    is (flush (r), "exited=0-3/256", "one exited report, largest status");
    ok (add (r, REDUCE_EXITED, "0", 512, NULL) == 0 && !reduce_held (r),
        "an exit of a finished rank is dropped");
    ok (add (r, REDUCE_LOST, "4-5", 0, NULL) == 0, "two ranks lost");
    ok (add (r, REDUCE_EXITED, "4-6", 0, NULL) == 0, "exit of 4-6");
    ok (reduce_finished (r) && reduce_urgent (r),
        "every rank finished: urgent");
    is (flush (r), "exited=6/0 lost=4-5", "only rank 6 exited");
    is (replay (r),
        "started=0-3,6 failed=7/32512(no such file) exited=0-3,6/256 lost=4-5",
        "replay: the whole history, lost ranks not started");
    ok (reduce_count_in (r) >= 8 && reduce_count_out (r) == 6,
        "counters: %lu in, %lu out", reduce_count_in (r), reduce_count_out (r));
    ids = idset_decode ("0-7");
    {
        struct idset *u = reduce_unfinished (r, ids);
        ok (u && idset_empty (u), "nothing unfinished");
        idset_destroy (u);
    }
    idset_destroy (ids);
    reduce_destroy (r);

    r = reduce_create (share);
    ok (add (r, REDUCE_STARTED, "0-7", 0, NULL) == 0 && reduce_urgent (r),
        "every rank started at once: urgent");
    ok (add (r, REDUCE_FAILED, "0", 256, NULL) == 0, "failed with no error");
    ok (add (r, REDUCE_FAILED, "1", 512, "second") == 0,
        "failed with an error");
    is (flush (r), "started=0-7 failed=0-1/512(shell could not start)",
        "the first error is kept, the largest status");
    ids = idset_decode ("0-3");
    {
        struct idset *u = reduce_unfinished (r, ids);
        char *s = u ? idset_encode (u, IDSET_FLAG_RANGE) : NULL;
        is (s, "2-3", "unfinished of 0-3: 2-3");
        free (s);
        idset_destroy (u);
    }
    idset_destroy (ids);
    ok (add (r, REDUCE_LOST, "2-7", 0, NULL) == 0 && reduce_finished (r),
        "lost the rest: finished");
    is (replay (r),
        "started=0-1 failed=0-1/512(shell could not start) lost=2-7", "replay");
    reduce_destroy (r);

    ok (reduce_type_parse ("exited", &t) == 0 && t == REDUCE_EXITED,
        "parse exited");
    ok (reduce_type_parse ("bogus", &t) < 0 && errno == EINVAL,
        "parse bogus: EINVAL");
    idset_destroy (share);
    reduce_destroy (NULL);
    done_testing ();
    return 0;
}
