/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* constraint.c - parse RFC 43 constraints into a tree and match jobs
 * against it (see constraint.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "constraint.h"
#include "libhostlist/hostlist.h"
#include "libidset/idset.h"

#define MAX_DEPTH 32
#define MAX_HOSTS 1024 /* hosts in one hostlist operator */
#define ALL_STATES 127

enum op {
    OP_AND,
    OP_OR,
    OP_NOT,
    OP_USERID,
    OP_NAME,
    OP_QUEUE,
    OP_STATES,
    OP_RESULTS,
    OP_HOSTLIST,
    OP_RANKS,
    OP_TIME,
};

enum cmp { CMP_GT, CMP_GE, CMP_LT, CMP_LE };

struct constraint {
    enum op op;
    int n;                        /* children or values */
    struct constraint **children; /* and, or, not */
    json_t *values;               /* userid, name, queue (an array) */
    int mask;                     /* states, results */
    struct hostlist *hl;          /* hostlist */
    struct idset *ids;            /* ranks */
    int time_field;               /* time: index in time_fields[] */
    enum cmp cmp;                 /* time */
    double t;                     /* time */
};

static const struct {
    const char *name;
    int mask;
} state_names[] = {
    {"new", FLUX_JOB_STATE_NEW},
    {"depend", FLUX_JOB_STATE_DEPEND},
    {"priority", FLUX_JOB_STATE_PRIORITY},
    {"sched", FLUX_JOB_STATE_SCHED},
    {"run", FLUX_JOB_STATE_RUN},
    {"cleanup", FLUX_JOB_STATE_CLEANUP},
    {"inactive", FLUX_JOB_STATE_INACTIVE},
    {"pending", FLUX_JOB_STATE_PENDING},
    {"running", FLUX_JOB_STATE_RUNNING},
    {"active", FLUX_JOB_STATE_ACTIVE},
}, result_names[] = {
    {"completed", FLUX_JOB_RESULT_COMPLETED},
    {"failed", FLUX_JOB_RESULT_FAILED},
    {"canceled", FLUX_JOB_RESULT_CANCELED},
    {"cancelled", FLUX_JOB_RESULT_CANCELED},
    {"timeout", FLUX_JOB_RESULT_TIMEOUT},
};

int constraint_state_mask (const char *name)
{
    for (size_t i = 0; i < sizeof (state_names) / sizeof (state_names[0]); i++)
        if (!strcasecmp (state_names[i].name, name))
            return state_names[i].mask;
    return 0;
}

int constraint_result_mask (const char *name)
{
    for (size_t i = 0; i < sizeof (result_names) / sizeof (result_names[0]);
         i++)
        if (!strcasecmp (result_names[i].name, name))
            return result_names[i].mask;
    return 0;
}

static const struct {
    const char *name;
    int states; /* states in which the timestamp can be set */
} time_fields[] = {
    {"t_submit", ALL_STATES},
    {"t_depend", ALL_STATES & ~1},
    {"t_run", FLUX_JOB_STATE_RUNNING | 64},
    {"t_cleanup", 32 | 64},
    {"t_inactive", 64},
};

static double job_time (const struct job *job, int field)
{
    switch (field) {
        case 0:
            return job->t_submit;
        case 1:
            return job->t_depend;
        case 2:
            return job->t_run;
        case 3:
            return job->t_cleanup;
        default:
            return job->t_inactive;
    }
}

void constraint_destroy (struct constraint *c)
{
    if (c) {
        int saved_errno = errno;
        for (int i = 0; c->children && i < c->n; i++)
            constraint_destroy (c->children[i]);
        free (c->children);
        json_decref (c->values);
        hostlist_destroy (c->hl);
        idset_destroy (c->ids);
        free (c);
        errno = saved_errno;
    }
}

static struct constraint *inval (struct constraint *c, flux_error_t *error,
                                 const char *fmt, const char *arg)
{
    constraint_destroy (c);
    errprintf (error, fmt, arg);
    errno = EINVAL;
    return NULL;
}

static struct constraint *parse (json_t *o, int depth, flux_error_t *error);

static struct constraint *new_node (enum op op)
{
    struct constraint *c = calloc (1, sizeof (*c));
    if (c)
        c->op = op;
    return c;
}

/* and / or / not over the constraint objects in values */
static struct constraint *parse_logic (enum op op, json_t *values, int depth,
                                       flux_error_t *error)
{
    struct constraint *c;
    size_t i;
    json_t *v;

    if (!(c = new_node (op)))
        return NULL;
    if (json_array_size (values) > 0
        && !(c->children
             = calloc (json_array_size (values), sizeof (c->children[0])))) {
        free (c);
        return NULL;
    }
    json_array_foreach (values, i, v)
    {
        if (!(c->children[c->n] = parse (v, depth + 1, error))) {
            constraint_destroy (c);
            return NULL;
        }
        c->n++;
    }
    return c;
}

static struct constraint *parse_mask (enum op op, json_t *values,
                                      const char *opname, flux_error_t *error)
{
    struct constraint *c;
    size_t i;
    json_t *v;

    if (!(c = new_node (op)))
        return NULL;
    json_array_foreach (values, i, v)
    {
        int m = 0;
        if (json_is_integer (v))
            m = json_integer_value (v) & (op == OP_STATES ? ALL_STATES : 15);
        else if (json_is_string (v))
            m = op == OP_STATES
                    ? constraint_state_mask (json_string_value (v))
                    : constraint_result_mask (json_string_value (v));
        if (m == 0 && !json_is_integer (v)) {
            char *s = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
            errprintf (error, "invalid %s value '%s'", opname, s ? s : "?");
            free (s);
            constraint_destroy (c);
            errno = EINVAL;
            return NULL;
        }
        c->mask |= m;
    }
    return c;
}

static struct constraint *parse_list (enum op op, json_t *values,
                                      const char *opname, flux_error_t *error)
{
    struct constraint *c;
    size_t i;
    json_t *v;

    if (!(c = new_node (op)))
        return NULL;
    json_array_foreach (values, i, v)
    {
        if (op == OP_USERID ? !json_is_integer (v) : !json_is_string (v))
            return inval (c, error,
                          op == OP_USERID ? "%s values must be integers"
                                          : "%s values must be strings",
                          opname);
    }
    c->values = json_incref (values);
    c->n = json_array_size (values);
    return c;
}

static struct constraint *parse_hosts (enum op op, json_t *values,
                                       const char *opname, flux_error_t *error)
{
    struct constraint *c;
    size_t i;
    json_t *v;

    if (!(c = new_node (op)))
        return NULL;
    if (op == OP_HOSTLIST ? !(c->hl = hostlist_create ())
                          : !(c->ids = idset_create (0, IDSET_FLAG_AUTOGROW))) {
        constraint_destroy (c);
        return NULL;
    }
    json_array_foreach (values, i, v)
    {
        const char *s = json_string_value (v);
        struct idset *ids;
        if (!s)
            return inval (c, error, "%s values must be strings", opname);
        if (op == OP_HOSTLIST) {
            if (hostlist_append (c->hl, s) < 0)
                return inval (c, error, "invalid hostlist '%s'", s);
            if (hostlist_count (c->hl) > MAX_HOSTS)
                return inval (c, error, "too many hosts in %s constraint",
                              opname);
        }
        else {
            if (!(ids = idset_decode (s)))
                return inval (c, error, "invalid ranks '%s'", s);
            if (idset_add (c->ids, ids) < 0) {
                idset_destroy (ids);
                constraint_destroy (c);
                return NULL;
            }
            idset_destroy (ids);
        }
    }
    return c;
}

static struct constraint *parse_time (int field, json_t *values,
                                      flux_error_t *error)
{
    const char *name = time_fields[field].name;
    struct constraint *c, *and;
    size_t i;
    json_t *v;

    /* several comparisons are all required: an "and" of single ones */
    if (!(and = new_node (OP_AND)))
        return NULL;
    if (json_array_size (values) == 0)
        return inval (and, error, "%s needs a comparison value", name);
    if (!(and->children
          = calloc (json_array_size (values), sizeof (and->children[0])))) {
        free (and);
        return NULL;
    }
    json_array_foreach (values, i, v)
    {
        const char *s = json_string_value (v);
        char *end;
        if (!s)
            return inval (and, error, "%s values must be strings", name);
        if (!(c = new_node (OP_TIME))) {
            constraint_destroy (and);
            return NULL;
        }
        and->children[ and->n++] = c;
        c->time_field = field;
        if (s[0] == '>' && s[1] == '=')
            c->cmp = CMP_GE, s += 2;
        else if (s[0] == '<' && s[1] == '=')
            c->cmp = CMP_LE, s += 2;
        else if (s[0] == '>')
            c->cmp = CMP_GT, s += 1;
        else if (s[0] == '<')
            c->cmp = CMP_LT, s += 1;
        else
            return inval (and, error,
                          "%s value needs an operator: >, >=, <, <=", name);
        errno = 0;
        c->t = strtod (s, &end);
        if (errno != 0 || end == s || *end != '\0')
            return inval (and, error, "invalid timestamp '%s'", s);
    }
    return and;
}

static struct constraint *parse_op (const char *op, json_t *values, int depth,
                                    flux_error_t *error)
{
    if (!json_is_array (values))
        return inval (NULL, error, "%s operator values must be an array", op);
    if (!strcmp (op, "and"))
        return parse_logic (OP_AND, values, depth, error);
    if (!strcmp (op, "or"))
        return parse_logic (OP_OR, values, depth, error);
    if (!strcmp (op, "not"))
        return parse_logic (OP_NOT, values, depth, error);
    if (!strcmp (op, "userid"))
        return parse_list (OP_USERID, values, op, error);
    if (!strcmp (op, "name"))
        return parse_list (OP_NAME, values, op, error);
    if (!strcmp (op, "queue"))
        return parse_list (OP_QUEUE, values, op, error);
    if (!strcmp (op, "states"))
        return parse_mask (OP_STATES, values, op, error);
    if (!strcmp (op, "results"))
        return parse_mask (OP_RESULTS, values, op, error);
    if (!strcmp (op, "hostlist"))
        return parse_hosts (OP_HOSTLIST, values, op, error);
    if (!strcmp (op, "ranks"))
        return parse_hosts (OP_RANKS, values, op, error);
    for (size_t i = 0; i < sizeof (time_fields) / sizeof (time_fields[0]); i++)
        if (!strcmp (op, time_fields[i].name))
            return parse_time (i, values, error);
    return inval (NULL, error, "unknown constraint operator: %s", op);
}

static struct constraint *parse (json_t *o, int depth, flux_error_t *error)
{
    struct constraint *c;
    const char *key;
    json_t *values;

    if (depth > MAX_DEPTH)
        return inval (NULL, error, "constraint nested too deeply%s", "");
    if (!json_is_object (o))
        return inval (NULL, error, "constraint must be an object%s", "");
    if (json_object_size (o) == 1) {
        json_object_foreach (o, key, values)
        {
            return parse_op (key, values, depth, error);
        }
    }
    /* {} matches all; several operators are an implicit "and" */
    if (!(c = new_node (OP_AND)))
        return NULL;
    if (json_object_size (o) > 0
        && !(c->children
             = calloc (json_object_size (o), sizeof (c->children[0])))) {
        free (c);
        return NULL;
    }
    json_object_foreach (o, key, values)
    {
        if (!(c->children[c->n] = parse_op (key, values, depth, error))) {
            constraint_destroy (c);
            return NULL;
        }
        c->n++;
    }
    return c;
}

struct constraint *constraint_create (json_t *o, flux_error_t *error)
{
    if (!o || json_is_null (o))
        return new_node (OP_AND);
    return parse (o, 0, error);
}

static bool match_string (json_t *values, const char *s)
{
    size_t i;
    json_t *v;

    if (!s)
        return false;
    json_array_foreach (values, i, v)
    {
        if (!strcmp (json_string_value (v), s))
            return true;
    }
    return false;
}

static bool match_hosts (const struct constraint *c, const char *nodelist)
{
    struct hostlist *hl;
    const char *host;
    bool found = false;

    if (!nodelist || !(hl = hostlist_decode (nodelist)))
        return false;
    for (host = hostlist_first (hl); host && !found; host = hostlist_next (hl))
        if (hostlist_find (c->hl, host) >= 0)
            found = true;
    hostlist_destroy (hl);
    return found;
}

static bool match_ranks (const struct constraint *c, const char *ranks)
{
    struct idset *ids;
    bool found;

    if (!ranks || !(ids = idset_decode (ranks)))
        return false;
    found = idset_has_intersection (c->ids, ids);
    idset_destroy (ids);
    return found;
}

bool constraint_match (const struct constraint *c, const struct job *job)
{
    size_t i;
    json_t *v;
    double t;

    switch (c->op) {
        case OP_AND:
            for (int k = 0; k < c->n; k++)
                if (!constraint_match (c->children[k], job))
                    return false;
            return true;
        case OP_OR:
            if (c->n == 0)
                return true;
            for (int k = 0; k < c->n; k++)
                if (constraint_match (c->children[k], job))
                    return true;
            return false;
        case OP_NOT:
            /* the negation of the "and" of the children */
            if (c->n == 0)
                return false;
            for (int k = 0; k < c->n; k++)
                if (!constraint_match (c->children[k], job))
                    return true;
            return false;
        case OP_USERID:
            json_array_foreach (c->values, i, v)
            {
                if ((uint32_t)json_integer_value (v) == job->userid)
                    return true;
            }
            return false;
        case OP_NAME:
            return match_string (c->values, job->name);
        case OP_QUEUE:
            return match_string (c->values, job->queue);
        case OP_STATES:
            return (job->state & c->mask) != 0;
        case OP_RESULTS:
            return job->state == FLUX_JOB_STATE_INACTIVE
                   && (job->result & c->mask) != 0;
        case OP_HOSTLIST:
            return match_hosts (c, job->nodelist);
        case OP_RANKS:
            return match_ranks (c, job->ranks);
        case OP_TIME:
            t = job_time (job, c->time_field);
            if (t <= 0.)
                return false;
            switch (c->cmp) {
                case CMP_GT:
                    return t > c->t;
                case CMP_GE:
                    return t >= c->t;
                case CMP_LT:
                    return t < c->t;
                case CMP_LE:
                    return t <= c->t;
            }
    }
    return false;
}

int constraint_states (const struct constraint *c)
{
    int m;

    switch (c->op) {
        case OP_AND:
            m = ALL_STATES;
            for (int k = 0; k < c->n; k++)
                m &= constraint_states (c->children[k]);
            return m;
        case OP_OR:
            if (c->n == 0)
                return ALL_STATES;
            m = 0;
            for (int k = 0; k < c->n; k++)
                m |= constraint_states (c->children[k]);
            return m;
        case OP_STATES:
            return c->mask;
        case OP_RESULTS:
            return FLUX_JOB_STATE_INACTIVE;
        case OP_TIME:
            return time_fields[c->time_field].states;
        default:
            return ALL_STATES;
    }
}
