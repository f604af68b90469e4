/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* strsubst.h - replace every occurrence of a token in a string. */
#ifndef FLUX_UTIL_STRSUBST_H
#define FLUX_UTIL_STRSUBST_H

/* s with each (non-overlapping, left to right) occurrence of token
 * replaced by value, as a new string to free.  NULL with errno EINVAL
 * (NULL argument, empty token) or ENOMEM. */
char *strsubst (const char *s, const char *token, const char *value);

#endif /* !FLUX_UTIL_STRSUBST_H */
