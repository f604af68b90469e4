/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_MSG_DECODE_H
#define FLUX_MSG_DECODE_H

/* Internal: the checks every request/response/event decoder shares. */
#include <stddef.h>

#include "message.h"

/* EINVAL if msg is NULL, EPROTO if it is not of this type. */
int msg_check_type (const flux_msg_t *msg, int type);

/* msg_check_type, then its topic into *topic (topic may be NULL). */
int msg_check_topic (const flux_msg_t *msg, int type, const char **topic);

/* The payload as a string, or NULL when there is none (s may be NULL);
 * EPROTO if a payload is present but not a string. */
int msg_optional_string (const flux_msg_t *msg, const char **s);

/* The payload bytes, or NULL/0 when there is none (either may be NULL). */
int msg_optional_raw (const flux_msg_t *msg, const void **data, size_t *len);

#endif /* !FLUX_MSG_DECODE_H */
