/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_DIRECTIVES_H
#define FLUX_CMD_DIRECTIVES_H

/* directives.h - RFC 36 submission directives in a batch script.
 *
 * A directive line matches ^([^A-Za-z0-9_]*)(flux|FLUX): -- the prefix and
 * tag are its sentinel; every directive of a script has the first one's.
 * Processing stops at the first non-blank line that does not begin with
 * the first directive's prefix; a directive after that is an error.  The
 * text after the sentinel is split into words with POSIX shell quoting
 * ('...', "..." with \ escapes, \ outside quotes), an unquoted # at the
 * start of a word comments out the rest of the line, and '''...''' or
 * """...""" quote literally -- across lines when the opening quotes end a
 * line (each following line a directive, up to the line that ends with
 * the closing quotes; the newline after the opening quotes is dropped and
 * the indentation common to the lines stripped).
 */
#include "libflux/flux.h"

struct directives {
    int argc;
    char **argv; /* the words of every directive, in order, NULL-ended */
    int *line;   /* line[i]: the line number (from 1) of argv[i] */
};

/* Parse the NUL-terminated text of a script.  0 on success (d->argc may
 * be 0); -1 with error "line N: reason" (errno EINVAL) or ENOMEM. */
int directives_parse (const char *text, struct directives *d,
                      flux_error_t *error);

void directives_free (struct directives *d);

#endif /* !FLUX_CMD_DIRECTIVES_H */
