/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef IMP_ERR_H
#define IMP_ERR_H
/* One line of text saying why something was refused.  flux-imp does not
 * link libflux, so this is its own small flux_error_t.
 */
struct imp_err {
    char text[256];
};

/* Format the reason into e (if non-NULL); returns -1 for "return
 * imp_errf (...)". */
int imp_errf (struct imp_err *e, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#endif /* !IMP_ERR_H */
