/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef T_NOLEAKCHECK_H
#define T_NOLEAKCHECK_H

/* Included once by a test helper that the tests run hundreds of times
 * (rpc, rpc-cred): built with AddressSanitizer, it skips the leak check
 * at its exit (about 50 ms under LeakSanitizer, more than the helper
 * does), as the flux command does (src/cmd/flux.c).  ASAN_OPTIONS wins
 * over this. */
#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options (void);
const char *__asan_default_options (void)
{
    return "detect_leaks=0";
}
#endif

#endif /* !T_NOLEAKCHECK_H */
