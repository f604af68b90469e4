/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_MSG_HANDLER_H
#define FLUX_MSG_HANDLER_H

/* Message handlers: callbacks run from the handle's reactor for messages
 * that match a type mask, a matchtag and a topic glob (fnmatch(3)).
 *
 * Dispatch rules:
 *  - a response whose matchtag belongs to an RPC in flight goes to that
 *    RPC's future, never to a handler;
 *  - an event goes to every started handler that matches;
 *  - a request or response goes to the most recently started handler that
 *    matches;
 *  - a request no handler matches is answered ENOSYS (unless it asked for
 *    no response);
 *  - a handler only sees messages whose rolemask shares a bit with its
 *    allowed rolemask (default: FLUX_ROLE_OWNER); a request refused this
 *    way is answered EPERM "Request requires owner credentials".
 *
 * A started handler keeps flux_reactor_run() from returning.  A handler
 * may stop or destroy itself or any other handler from its callback.
 */
#include <stdint.h>

#include "handle.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flux_msg_handler flux_msg_handler_t;
typedef void (*flux_msg_handler_f) (flux_t *h, flux_msg_handler_t *mh,
                                    const flux_msg_t *msg, void *arg);

struct flux_match {
    int typemask;           /* FLUX_MSGTYPE_* bits */
    uint32_t matchtag;      /* FLUX_MATCHTAG_NONE matches any */
    const char *topic_glob; /* NULL or "*" matches any topic */
};

#define FLUX_MATCH_ANY                             \
    (struct flux_match)                            \
    {                                              \
        FLUX_MSGTYPE_ANY, FLUX_MATCHTAG_NONE, NULL \
    }
#define FLUX_MATCH_EVENT                             \
    (struct flux_match)                              \
    {                                                \
        FLUX_MSGTYPE_EVENT, FLUX_MATCHTAG_NONE, NULL \
    }
#define FLUX_MATCH_REQUEST                             \
    (struct flux_match)                                \
    {                                                  \
        FLUX_MSGTYPE_REQUEST, FLUX_MATCHTAG_NONE, NULL \
    }
#define FLUX_MATCH_RESPONSE                             \
    (struct flux_match)                                 \
    {                                                   \
        FLUX_MSGTYPE_RESPONSE, FLUX_MATCHTAG_NONE, NULL \
    }

/* True if msg matches. */
bool flux_msg_cmp (const flux_msg_t *msg, struct flux_match match);

/* Create a handler (stopped).  The topic glob is copied. */
flux_msg_handler_t *flux_msg_handler_create (flux_t *h,
                                             const struct flux_match match,
                                             flux_msg_handler_f cb, void *arg);
void flux_msg_handler_destroy (flux_msg_handler_t *mh);
void flux_msg_handler_start (flux_msg_handler_t *mh);
void flux_msg_handler_stop (flux_msg_handler_t *mh);

/* Adjust the roles allowed to reach the handler (OWNER is always
 * allowed). */
void flux_msg_handler_allow_rolemask (flux_msg_handler_t *mh,
                                      uint32_t rolemask);
void flux_msg_handler_deny_rolemask (flux_msg_handler_t *mh, uint32_t rolemask);

/* A handler table: each row creates and starts one handler.
 * rolemask 0 means owner only; FLUX_ROLE_USER lets guests in.
 */
struct flux_msg_handler_spec {
    int typemask;
    const char *topic_glob;
    flux_msg_handler_f cb;
    uint32_t rolemask;
};
#define FLUX_MSGHANDLER_TABLE_END \
    {                             \
        0, NULL, NULL, 0          \
    }

/* Create and start every handler in tab (terminated by TABLE_END).
 * *handlers is a NULL-terminated array for flux_msg_handler_delvec().
 * On failure nothing is left registered.
 */
int flux_msg_handler_addvec (flux_t *h,
                             const struct flux_msg_handler_spec tab[],
                             void *arg, flux_msg_handler_t ***handlers);
void flux_msg_handler_delvec (flux_msg_handler_t **handlers);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_MSG_HANDLER_H */
