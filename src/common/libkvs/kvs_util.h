/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_KVS_UTIL_H
#define FLUX_KVS_UTIL_H

/* Key helpers shared by the KVS client library and the kvs modules. */
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Normalize a key (PROTOCOLS.md 4): collapse runs of '.', drop leading
 * and trailing '.'; a key of only dots, or "", is "." (the root).
 * If want_directory is not NULL it is set to true when the key ended in
 * '.' (the caller asked for a directory) and was not the root, else false.
 * Returns a new string the caller frees, or NULL with errno EINVAL (key
 * NULL) or ENOMEM.
 */
char *kvs_util_normalize_key (const char *key, bool *want_directory);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_KVS_UTIL_H */
