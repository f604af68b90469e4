/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* test/directives.c - RFC 36 directives, with the RFC's own examples. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "directives.h"
#include "tap.h"

/* The words joined by '|', or "ERR:<error>". */
static char *parse (const char *text)
{
    struct directives d;
    flux_error_t error;
    size_t len = 8;
    char *s;

    if (directives_parse (text, &d, &error) < 0) {
        if (asprintf (&s, "ERR:%s", error.text) < 0)
            BAIL_OUT ("out of memory");
        return s;
    }
    for (int i = 0; i < d.argc; i++)
        len += strlen (d.argv[i]) + 1;
    if (!(s = calloc (1, len)))
        BAIL_OUT ("out of memory");
    for (int i = 0; i < d.argc; i++) {
        if (i > 0)
            strcat (s, "|");
        strcat (s, d.argv[i]);
    }
    directives_free (&d);
    return s;
}

static void check (const char *text, const char *want, const char *what)
{
    char *s = parse (text);
    ok (!strcmp (s, want), "%s", what);
    if (strcmp (s, want))
        diag ("got '%s' want '%s'", s, want);
    free (s);
}

int main (void)
{
    struct directives d;
    flux_error_t error;

    plan (NO_PLAN);
    check ("#!/bin/sh\necho hi\n", "", "no directives");
    check ("#!/bin/sh\n#FLUX: -N4                  # Request four nodes\n"
           "#FLUX: --queue=batch        # Submit to the batch queue\n"
           "#FLUX: --job-name=app001    # Set an explicit job name\n"
           "flux run -N4 app\n",
           "-N4|--queue=batch|--job-name=app001",
           "RFC 36 shell example, comments dropped");
    check (
        "#!/bin/sh\n# flux: -N 4 -c 2\n# Set job name:\n# flux: --job-name\n",
        "-N|4|-c|2|--job-name", "comment lines with the same prefix");
    check ("#!/bin/sh\n#flux: -N1\n\n#flux: -n2\necho\n", "-N1|-n2",
           "blank lines do not stop processing");
    check ("#!/usr/bin/lua\n--\n-- flux: -N1 --exclusive\n"
           "-- flux: --output=job.out\nlocal app = require 'app'\n",
           "-N1|--exclusive|--output=job.out", "Lua prefix");
    check ("# flux: --setattr=user.foo=\"\"\"{\"key\": 42}\"\"\"\n"
           "# flux: --setattr=user.bar='''It's a \"job\"'''\n",
           "--setattr=user.foo={\"key\": 42}|--setattr=user.bar=It's a \"job\"",
           "triple quotes on one line");
    check ("# flux: --setattr=user.conf=\"\"\"\n# flux: [config]\n"
           "# flux:   item = \"foo\"\n# flux: \"\"\"\n",
           "--setattr=user.conf=[config]\n  item = \"foo\"\n",
           "multiline triple quotes, indentation stripped");
    check ("# flux: --setattr=user.data='{\"option\": \"arg\"}'\n",
           "--setattr=user.data={\"option\": \"arg\"}", "single quotes");
    check ("# flux: --job-name=\"my \\\"python\\\" job\" a\\ b\n",
           "--job-name=my \"python\" job|a b", "double quotes and backslashes");
    check ("# flux: --job-name=a#b  # comment\n", "--job-name=a#b",
           "# inside a word is not a comment");
    check ("#!/usr/bin/env python3\n\"\"\"\nflux: --nodes=4\n\n"
           "Set an arbitrary value in jobspec:\n"
           "flux: --setattr=user.foo=\"hello, earth\"\n\"\"\"\n",
           "--nodes=4|--setattr=user.foo=hello, earth",
           "empty prefix (docstring)");
    check ("#!/bin/sh\n#FLUX: -N1\nhostname; date\n#FLUX: --job-name=test\n",
           "ERR:line 4: directive after the end of the directives (line 3)",
           "an orphan directive is refused with its line");
    check ("#flux: -N1\n# flux: -n1\n",
           "ERR:line 2: directive sentinel differs from the first directive's",
           "a different sentinel is refused");
    check ("#!/bin/sh\n#flux: --job-name='abc\n",
           "ERR:line 2: unterminated single quote", "unterminated '");
    check ("#flux: -N1\n#flux: --job-name=\"abc\n",
           "ERR:line 2: unterminated double quote", "unterminated \"");
    check ("#flux: --setattr=x='''abc\n",
           "ERR:line 1: unterminated triple quotes",
           "unterminated triple quotes on one line");
    check ("#flux: --setattr=x='''\n#flux: abc\necho\n",
           "ERR:line 1: unterminated multiline quote",
           "unterminated multiline literal");
    check ("#flux: -N1 \\\n", "ERR:line 1: backslash at the end of the line",
           "trailing backslash");
    check ("#flux: \"\" ''\n", "|", "empty quoted words are words");
    ok (directives_parse ("#!/bin/sh\n\n#flux: -N2\n#flux: -n4 -c1\n", &d,
                          &error)
                == 0
            && d.argc == 3 && d.line[0] == 3 && d.line[1] == 4
            && d.line[2] == 4,
        "each word carries its line number");
    directives_free (&d);
    done_testing ();
    return 0;
}
