/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef UTIL_NOLEAKCHECK_H
#define UTIL_NOLEAKCHECK_H

/* Included by the flux command (src/cmd/flux.c) and put in every source
 * of the tests' and benchmarks' helper programs (HELPER_CPPFLAGS,
 * configure.ac: t/, bench/, kvstest, the content pipeline driver): built
 * with AddressSanitizer, such a program skips the leak check at its
 * exit.  The tests run these programs thousands of times, and
 * LeakSanitizer's scan at each exit (about 45 ms here) cost more than
 * most of them do (kvstest: a sixth of t1002's CPU under ASAN).  What
 * they exercise is checked elsewhere: the libraries by the unit tests,
 * the broker, its modules and the shell at their own exits, which keep
 * the check.  Weak, so that a program of several sources links;
 * ASAN_OPTIONS wins over this.  Without ASAN this header is empty. */
#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options (void) __attribute__ ((weak));
const char *__asan_default_options (void)
{
    return "detect_leaks=0";
}
#endif

#endif /* !UTIL_NOLEAKCHECK_H */
