/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* jbuf.h - a growable buffer for writing JSON text directly.
 *
 * job-list answers listings of thousands of jobs; writing the response
 * text directly is several times cheaper than building jansson objects
 * and dumping them.  Errors (ENOMEM, or a non-finite real) are sticky:
 * check jbuf_error() once at the end.
 */
#ifndef JOB_LIST_JBUF_H
#define JOB_LIST_JBUF_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "libutil/textbuf.h"

struct jbuf {
    struct textbuf t;
    int errnum; /* first error, 0 if none */
};

void jbuf_init (struct jbuf *b);
void jbuf_free (struct jbuf *b);
void jbuf_reset (struct jbuf *b); /* len = 0, keep memory, clear error */

void jbuf_raw (struct jbuf *b, const char *s, size_t len);
void jbuf_rawz (struct jbuf *b, const char *s); /* NUL-terminated */
void jbuf_char (struct jbuf *b, char c);
/* A JSON string literal (quoted, escaped).  Invalid UTF-8 is copied as
 * is: the strings come from JSON that jansson already validated.
 */
void jbuf_str (struct jbuf *b, const char *s);
void jbuf_int (struct jbuf *b, int64_t i);
void jbuf_uint (struct jbuf *b, uint64_t u);
/* A real that reads back as a real (always has '.' or an exponent);
 * EDOM for NaN or infinity.
 */
void jbuf_real (struct jbuf *b, double d);
void jbuf_bool (struct jbuf *b, int v);
/* Any JSON value, compact. */
void jbuf_json (struct jbuf *b, const json_t *o);
/* "name": (a key followed by a colon), preceded by a comma if *first is
 * 0; sets *first to 0.
 */
void jbuf_key (struct jbuf *b, const char *name, int *first);

/* The text (NUL-terminated; never NULL after a successful write), or
 * NULL if an error occurred (errno set).
 */
const char *jbuf_get (struct jbuf *b);
int jbuf_error (const struct jbuf *b);

#endif /* !JOB_LIST_JBUF_H */
