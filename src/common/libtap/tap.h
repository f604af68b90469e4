/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_TAP_H
#define FLUX_TAP_H

/* A minimal TAP (Test Anything Protocol) producer for unit tests.
 *
 *   plan (N);  or  plan (NO_PLAN); ... done_testing ();
 *   ok (cond, fmt, ...)            one test point; returns cond
 *   is (got, expected, fmt, ...)   string compare (NULLs allowed)
 *   cmp_ok (a, op, b, fmt, ...)    integer compare, op is "==", "<", ...
 *   cmp_mem (a, b, n, fmt, ...)    byte compare; prints first difference
 *   skip (n, fmt, ...)             n skipped test points
 *   diag (fmt, ...)                '#' comment on stderr
 *   BAIL_OUT (fmt, ...)            abort the whole test program
 *
 * The exit status is non-zero if any test failed or the plan was not met.
 */
#include <stdbool.h>
#include <stddef.h>

#define NO_PLAN (-1)

void plan (int n);
void done_testing (void);
int ok_at_loc (const char *file, int line, int cond, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
int is_at_loc (const char *file, int line, const char *got, const char *exp,
               const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));
int cmp_ok_at_loc (const char *file, int line, long long a, const char *op,
                   long long b, const char *fmt, ...)
    __attribute__ ((format (printf, 6, 7)));
int cmp_mem_at_loc (const char *file, int line, const void *a, const void *b,
                    size_t n, const char *fmt, ...)
    __attribute__ ((format (printf, 6, 7)));
void skip (int n, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
void diag (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
void BAIL_OUT (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2), noreturn));

#define ok(cond, ...) ok_at_loc (__FILE__, __LINE__, !!(cond), __VA_ARGS__)
#define is(got, exp, ...) is_at_loc (__FILE__, __LINE__, got, exp, __VA_ARGS__)
#define cmp_ok(a, op, b, ...)                                              \
    cmp_ok_at_loc (__FILE__, __LINE__, (long long)(a), op, (long long)(b), \
                   __VA_ARGS__)
#define cmp_mem(a, b, n, ...) \
    cmp_mem_at_loc (__FILE__, __LINE__, a, b, n, __VA_ARGS__)
#define pass(...) ok (1, __VA_ARGS__)
#define fail(...) ok (0, __VA_ARGS__)

#endif /* !FLUX_TAP_H */
