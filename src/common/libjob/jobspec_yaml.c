/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jobspec_yaml.c - a YAML document to a JSON value, with libyaml's event
 * parser.
 *
 * Plain scalars resolve as in the YAML 1.2 core schema: null (~, null,
 * empty), booleans (true/false in three spellings), integers (decimal,
 * 0x hex, 0o octal) and floats; everything else, and every quoted or
 * block scalar or one tagged !!str, is a string.  Aliases are refused
 * (a few bytes of anchors and aliases can expand into gigabytes), as are
 * non-scalar mapping keys, duplicate keys, .inf/.nan (JSON has no such
 * numbers), more than one document, and nesting beyond MAX_DEPTH.
 *
 * libyaml is loaded (dlopen, YAML_SONAME from configure) the first time a
 * document is parsed, not linked: every flux command carries libjob, and
 * mapping one more shared library at start costs each of them ~60 us,
 * for the one subcommand that reads YAML.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "jobspec.h"

#define MAX_DEPTH 64

struct frame {
    json_t *container;
    char *key; /* mapping: the key waiting for its value */
};

struct builder {
    struct frame stack[MAX_DEPTH];
    int depth;
    json_t *root;
    flux_error_t *error;
    size_t line, column; /* of the current event, 1-based */
};

static bool all_digits (const char *s, const char *set)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!strchr (set, *s))
            return false;
    return true;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool is_float (const char *s)
{
    bool digits = false;

    if (*s == '-' || *s == '+')
        s++;
    while (*s >= '0' && *s <= '9')
        s++, digits = true;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9')
            s++, digits = true;
    }
    if (!digits)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

static int fail (struct builder *b, const char *what)
{
    errprintf (b->error, "YAML: %s at line %zu column %zu", what, b->line,
               b->column);
    errno = EINVAL;
    return -1;
}

static json_t *plain_scalar (struct builder *b, const char *s)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    const char *digits = s + (*s == '-' || *s == '+');
    char *end;

    for (int i = 0; nulls[i]; i++)
        if (!strcmp (s, nulls[i]))
            return json_null ();
    for (int i = 0; trues[i]; i++)
        if (!strcmp (s, trues[i]))
            return json_true ();
    for (int i = 0; falses[i]; i++)
        if (!strcmp (s, falses[i]))
            return json_false ();
    if (all_digits (digits, "0123456789")
        || (!strncmp (s, "0x", 2)
            && all_digits (s + 2, "0123456789abcdefABCDEF"))
        || (!strncmp (s, "0o", 2) && all_digits (s + 2, "01234567"))) {
        long long n;
        int base = s[0] == '0' && s[1] == 'x'   ? 16
                   : s[0] == '0' && s[1] == 'o' ? 8
                                                : 10;
        errno = 0;
        n = strtoll (base == 10 ? s : s + 2, &end, base);
        if (errno == ERANGE) {
            fail (b, "integer out of range");
            return NULL;
        }
        return json_integer (n);
    }
    if (is_float (s)) {
        double d = strtod (s, &end);
        if (!isfinite (d)) {
            fail (b, "number out of range");
            return NULL;
        }
        return json_real (d);
    }
    if (!strcasecmp (s + (*s == '-' || *s == '+'), ".inf")
        || !strcasecmp (s, ".nan")) {
        fail (b, "infinite or NaN numbers cannot be expressed in JSON");
        return NULL;
    }
    return json_string (s);
}

/* Place v (stolen) in the current container, or make it the root. */
static int add_value (struct builder *b, json_t *v)
{
    struct frame *top;

    if (!v)
        return fail (b, "invalid value (bad UTF-8 or out of memory)");
    if (b->depth == 0) {
        b->root = v;
        return 0;
    }
    top = &b->stack[b->depth - 1];
    if (json_is_array (top->container)) {
        if (json_array_append_new (top->container, v) < 0)
            return fail (b, "out of memory");
        return 0;
    }
    if (json_object_get (top->container, top->key)) {
        json_decref (v);
        return fail (b, "duplicate mapping key");
    }
    if (json_object_set_new (top->container, top->key, v) < 0)
        return fail (b, "invalid mapping key");
    free (top->key);
    top->key = NULL;
    return 0;
}

static bool wants_key (struct builder *b)
{
    return b->depth > 0 && json_is_object (b->stack[b->depth - 1].container)
           && !b->stack[b->depth - 1].key;
}

static int on_scalar (struct builder *b, yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    bool str = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE
               || (tag && !strcmp (tag, YAML_STR_TAG));

    if (wants_key (b)) {
        if (strlen (s) != len)
            return fail (b, "mapping key contains a NUL character");
        if (!(b->stack[b->depth - 1].key = strdup (s)))
            return fail (b, "out of memory");
        return 0;
    }
    if (str)
        return add_value (b, json_stringn (s, len));
    if (strlen (s) != len)
        return fail (b, "plain scalar contains a NUL character");
    {
        json_t *v = plain_scalar (b, s);
        if (!v)
            return -1;
        return add_value (b, v);
    }
}

static int on_start (struct builder *b, json_t *c)
{
    if (!c)
        return fail (b, "out of memory");
    if (wants_key (b)) {
        json_decref (c);
        return fail (b, "mapping keys must be scalars");
    }
    if (b->depth == MAX_DEPTH) {
        json_decref (c);
        return fail (b, "nesting is too deep");
    }
    if (add_value (b, json_incref (c)) < 0) {
        json_decref (c);
        return -1;
    }
    b->stack[b->depth].container = c;
    b->stack[b->depth].key = NULL;
    b->depth++;
    return 0;
}

static void on_end (struct builder *b)
{
    struct frame *top = &b->stack[--b->depth];
    json_decref (top->container);
    free (top->key);
}

static int on_event (struct builder *b, yaml_event_t *ev, int *docs)
{
    switch (ev->type) {
        case YAML_DOCUMENT_START_EVENT:
            if (++(*docs) > 1)
                return fail (b, "a jobspec must be a single document");
            return 0;
        case YAML_ALIAS_EVENT:
            return fail (b, "aliases are not supported");
        case YAML_SCALAR_EVENT:
            return on_scalar (b, ev);
        case YAML_SEQUENCE_START_EVENT:
            return on_start (b, json_array ());
        case YAML_MAPPING_START_EVENT:
            return on_start (b, json_object ());
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            on_end (b);
            return 0;
        default:
            return 0;
    }
}

/* The libyaml functions used here, resolved once. */
static struct {
    int (*parser_initialize) (yaml_parser_t *parser);
    void (*parser_delete) (yaml_parser_t *parser);
    void (*parser_set_input_string) (yaml_parser_t *parser,
                                     const unsigned char *input, size_t size);
    int (*parser_parse) (yaml_parser_t *parser, yaml_event_t *event);
    void (*event_delete) (yaml_event_t *event);
    char error[256]; /* why they could not be, if they could not */
} yaml;

static pthread_once_t yaml_once = PTHREAD_ONCE_INIT;

static void *yaml_sym (void *dso, const char *name)
{
    void *sym = dlsym (dso, name);

    if (!sym && !yaml.error[0])
        snprintf (yaml.error, sizeof (yaml.error), "%s: no symbol %s",
                  YAML_SONAME, name);
    return sym;
}

static void yaml_load (void)
{
    void *dso = dlopen (YAML_SONAME, RTLD_NOW | RTLD_LOCAL);

    if (!dso) {
        const char *e = dlerror ();
        snprintf (yaml.error, sizeof (yaml.error), "cannot load %s: %s",
                  YAML_SONAME, e ? e : "unknown error");
        return;
    }
    /* the DSO stays loaded for the life of the process */
    *(void **)&yaml.parser_initialize
        = yaml_sym (dso, "yaml_parser_initialize");
    *(void **)&yaml.parser_delete = yaml_sym (dso, "yaml_parser_delete");
    *(void **)&yaml.parser_set_input_string
        = yaml_sym (dso, "yaml_parser_set_input_string");
    *(void **)&yaml.parser_parse = yaml_sym (dso, "yaml_parser_parse");
    *(void **)&yaml.event_delete = yaml_sym (dso, "yaml_event_delete");
}

json_t *jobspec_yaml_to_json (const char *text, flux_error_t *error)
{
    struct builder b = {.error = error};
    yaml_parser_t parser;
    yaml_event_t ev;
    int docs = 0;
    bool done = false;

    if (!text) {
        errprintf (error, "YAML: no input");
        errno = EINVAL;
        return NULL;
    }
    (void)pthread_once (&yaml_once, yaml_load);
    if (yaml.error[0]) {
        errprintf (error, "YAML: %s", yaml.error);
        errno = ENOSYS;
        return NULL;
    }
    if (!yaml.parser_initialize (&parser)) {
        errprintf (error, "YAML: out of memory");
        errno = ENOMEM;
        return NULL;
    }
    yaml.parser_set_input_string (&parser, (const unsigned char *)text,
                                  strlen (text));
    while (!done) {
        if (!yaml.parser_parse (&parser, &ev)) {
            b.line = parser.problem_mark.line + 1;
            b.column = parser.problem_mark.column + 1;
            fail (&b, parser.problem ? parser.problem : "parse error");
            goto error;
        }
        b.line = ev.start_mark.line + 1;
        b.column = ev.start_mark.column + 1;
        done = ev.type == YAML_STREAM_END_EVENT;
        if (on_event (&b, &ev, &docs) < 0) {
            yaml.event_delete (&ev);
            goto error;
        }
        yaml.event_delete (&ev);
    }
    yaml.parser_delete (&parser);
    if (!b.root) {
        errprintf (error, "YAML: the document is empty");
        errno = EINVAL;
    }
    return b.root;
error:
    while (b.depth > 0)
        on_end (&b);
    json_decref (b.root);
    yaml.parser_delete (&parser);
    errno = EINVAL;
    return NULL;
}
