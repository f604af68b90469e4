/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/barrier.c - rounds, merges, release, failure. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "barrier.h"
#include "tap.h"

static int released[8];

static void count (void *entry, void *arg)
{
    released[(int)(intptr_t)entry]++;
    (*(int *)arg)++;
}

int main (int argc, char **argv)
{
    struct barrier *b;
    json_t *d1 = json_pack ("{s:i}", "a", 1);
    json_t *d2 = json_pack ("{s:i s:i}", "b", 2, "a", 3);
    json_t *bad = json_integer (1);
    int n = 0;

    plan (NO_PLAN);
    ok (barrier_create (0) == NULL && errno == EINVAL, "0 entries: EINVAL");
    if (!(b = barrier_create (3)))
        BAIL_OUT ("barrier_create failed");
    ok (barrier_seq (b) == -1 && barrier_count (b) == 0
            && barrier_last (b) == -1,
        "a new barrier");
    ok (barrier_enter (b, 1, bad, (void *)0) < 0 && errno == EINVAL,
        "data not an object: EINVAL");
    ok (barrier_enter (b, 1, d1, (void *)1) == 0, "entry 1 of round 1");
    ok (barrier_enter (b, 2, NULL, (void *)7) < 0 && errno == EBUSY,
        "another round while round 1 is pending: EBUSY");
    ok (barrier_enter (b, 1, NULL, (void *)2) == 0, "entry 2 (no data)");
    ok (barrier_release (b, count, &n) < 0 && errno == EINVAL,
        "release of an incomplete round: EINVAL");
    ok (barrier_enter (b, 1, d2, (void *)3) == 1, "entry 3 completes it");
    ok (barrier_enter (b, 1, NULL, (void *)4) < 0 && errno == EBUSY,
        "a fourth entry: EBUSY");
    ok (json_integer_value (json_object_get (barrier_data (b), "a")) == 3
            && json_integer_value (json_object_get (barrier_data (b), "b"))
                   == 2,
        "the data is merged in arrival order");
    ok (barrier_release (b, count, &n) == 0 && n == 3 && released[1] == 1
            && released[2] == 1 && released[3] == 1,
        "release hands back each entry once");
    ok (barrier_count (b) == 0, "nothing held after release");
    ok (barrier_last (b) == 1, "round 1 is the last released");
    ok (barrier_enter (b, 1, NULL, (void *)5) < 0 && errno == EINVAL,
        "round 1 again: EINVAL");
    ok (barrier_enter (b, 2, NULL, (void *)5) == 0 && barrier_last (b) == 1,
        "round 2 begins, round 1 is still the last released");
    n = 0;
    barrier_fail (b, count, &n);
    ok (n == 1 && released[5] == 1, "fail hands back the pending entry");
    ok (barrier_enter (b, 3, NULL, (void *)6) < 0 && errno == EIO,
        "after a failure every entry gets EIO");
    barrier_destroy (b);

    b = barrier_create (1);
    ok (b && barrier_enter (b, 0, NULL, (void *)0) == 1,
        "a barrier of one completes at once");
    ok (json_is_object (barrier_data (b))
            && json_object_size (barrier_data (b)) == 0,
        "with an empty object");
    barrier_destroy (b);
    barrier_destroy (NULL);
    json_decref (d1);
    json_decref (d2);
    json_decref (bad);
    done_testing ();
    return 0;
}
