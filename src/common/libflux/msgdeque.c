/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* msgdeque.c - a ring buffer of message references, doubling when full. */
#include <stdlib.h>

#include "msgdeque.h"

static int grow (struct msgdeque *q)
{
    size_t ncap = q->cap ? q->cap * 2 : 16;
    flux_msg_t **nv;
    size_t i;

    if (!(nv = malloc (ncap * sizeof (*nv))))
        return -1;
    for (i = 0; i < q->count; i++)
        nv[i] = q->v[(q->head + i) % q->cap];
    free (q->v);
    q->v = nv;
    q->cap = ncap;
    q->head = 0;
    return 0;
}

int msgdeque_push (struct msgdeque *q, flux_msg_t *msg, bool head)
{
    if (q->count == q->cap && grow (q) < 0)
        return -1;
    if (head) {
        q->head = (q->head + q->cap - 1) % q->cap;
        q->v[q->head] = msg;
    }
    else
        q->v[(q->head + q->count) % q->cap] = msg;
    q->count++;
    return 0;
}

flux_msg_t *msgdeque_pop (struct msgdeque *q)
{
    flux_msg_t *msg;

    if (q->count == 0)
        return NULL;
    msg = q->v[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    return msg;
}

flux_msg_t *msgdeque_peek (struct msgdeque *q, size_t i)
{
    return q->v[(q->head + i) % q->cap];
}

flux_msg_t *msgdeque_take (struct msgdeque *q, size_t i)
{
    flux_msg_t *msg = q->v[(q->head + i) % q->cap];
    size_t j;

    for (j = i; j + 1 < q->count; j++)
        q->v[(q->head + j) % q->cap] = q->v[(q->head + j + 1) % q->cap];
    q->count--;
    return msg;
}

void msgdeque_clear (struct msgdeque *q)
{
    flux_msg_t *msg;

    while ((msg = msgdeque_pop (q)))
        flux_msg_decref (msg);
    free (q->v);
    q->v = NULL;
    q->head = q->cap = 0;
}
