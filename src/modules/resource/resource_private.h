/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef RESOURCE_RESOURCE_PRIVATE_H
#define RESOURCE_RESOURCE_PRIVATE_H
/* The inside of struct resource, shared by resource.c (the inventory)
 * and service.c (the request handlers). */
#include "acquire.h"
#include "drainset.h"
#include "journal.h"
#include "librlist/rlist.h"
#include "reqlist.h"
#include "resource.h"
#include "reslog.h"
#include "rmap.h"

struct resource {
    flux_t *h;
    uint32_t size;
    bool configured; /* R came from resource.path */
    bool force_up;

    json_t *R;          /* NULL until defined */
    struct rmap *map;   /* R's rank map; NULL until defined */
    const char *method; /* resource-define method */
    struct rlist *frag; /* fragments assembled so far (discovery) */

    struct idset *online;
    struct idset *exclude;
    char *exclude_spec; /* a hostlist exclude, resolved at define */
    struct drainset *drain;

    struct journal *journal;
    struct reslog *reslog;
    struct acquire *acquire;
    struct reqlist *deferred; /* requests waiting for R */
};

/* The up targets among ids (see resource.c).  NULL/ENOMEM. */
struct idset *res_up (struct resource *res, const struct idset *ids);
/* Around a change of the targets ids: begin returns their up set, end
 * compares it with the new one and tells the acquirer (and frees it). */
struct idset *change_begin (struct resource *res, const struct idset *ids);
void change_end (struct resource *res, const struct idset *ids,
                 struct idset *before);
/* Journal an event, and append it to resource.eventlog if kvs (R_put:
 * also put resource.R; msg: answered once committed). */
int res_post (struct resource *res, json_t *entry, bool kvs, json_t *R_put,
              const flux_msg_t *msg);
/* R less the excluded targets.  NULL/ENOMEM. */
json_t *res_sched_R (struct resource *res);
/* Handle the requests that waited for R (service.c). */
void res_run_deferred (struct resource *res);

#endif /* !RESOURCE_RESOURCE_PRIVATE_H */
