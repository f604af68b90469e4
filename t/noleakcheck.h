/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef T_NOLEAKCHECK_H
#define T_NOLEAKCHECK_H

/* Put in every source of the tests' and benchmarks' helper programs
 * (HELPER_CPPFLAGS, configure.ac: t/, bench/, kvstest, the content
 * pipeline driver): built with AddressSanitizer, a helper skips the leak
 * check at its exit, as the flux command does (src/cmd/flux.c).  The
 * tests run these helpers thousands of times, and LeakSanitizer's scan at
 * each exit cost more than most helpers do (kvstest: a sixth of t1002's
 * CPU under ASAN).  What they exercise is checked elsewhere: the
 * libraries by the unit tests, the broker, its modules and the shell at
 * their own exits, which keep the check.  Weak, so that a helper of
 * several sources links; ASAN_OPTIONS wins over this. */
#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options (void) __attribute__ ((weak));
const char *__asan_default_options (void)
{
    return "detect_leaks=0";
}
#endif

#endif /* !T_NOLEAKCHECK_H */
