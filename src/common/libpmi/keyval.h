/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_PMI_KEYVAL_H
#define FLUX_PMI_KEYVAL_H

/* Line codec for the PMI-1 "simple" wire protocol (RFC 13), shared by
 * simple_client and simple_server, plus the wire constants both use.
 *
 * A protocol line is a series of key=value tuples separated by spaces
 * or tabs and ended by one newline, e.g. "cmd=put kvsname=k key=a value=1\n".
 * Parsing follows RFC 13's advice to be liberal where it is harmless and
 * is strict elsewhere:
 *
 *   - tuples may come in any order, extra keys are kept (callers look up
 *     the keys they want and ignore the rest), runs of spaces/tabs and
 *     leading/trailing blanks are allowed;
 *   - a key is one or more characters other than '=', blank or control;
 *   - a value is zero or more characters other than blank or control: it
 *     may be empty ("value=") and may contain '=' ("value=a=b");
 *     backslashes are ordinary characters (no escapes);
 *   - the newline is optional, but only as the last character;
 *   - bytes >= 0x80 are accepted as-is (e.g. UTF-8 job IDs);
 *   - it is an error (EPROTO): an empty line, a token without '=' or
 *     with an empty key, a repeated key, a control character (other than
 *     tab) anywhere, including '\r' and an embedded '\n'.
 *
 * A value cannot contain blanks because blanks separate tuples.  The one
 * exception is a "tail" key, named by the caller of keyval_parse_tail():
 * its value runs to the end of the line, blanks included (trailing
 * blanks removed).  The server uses it for the free-text message that
 * clients append to "cmd=abort".
 */
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest protocol line either side accepts, newline included. */
#define PMI_SIMPLE_LINE_MAX 4096

/* Return codes of the PMI-1 API (RFC 13), as carried in "rc=" on the
 * wire.  A reply without "rc" means success.
 */
enum {
    PMI_SIMPLE_SUCCESS = 0,
    PMI_SIMPLE_FAIL = -1,
    PMI_SIMPLE_ERR_INIT = 1,
    PMI_SIMPLE_ERR_NOMEM = 2,
    PMI_SIMPLE_ERR_INVALID_ARG = 3,
    PMI_SIMPLE_ERR_INVALID_KEY = 4,
    PMI_SIMPLE_ERR_INVALID_KEY_LENGTH = 5,
    PMI_SIMPLE_ERR_INVALID_VAL = 6,
    PMI_SIMPLE_ERR_INVALID_VAL_LENGTH = 7,
    PMI_SIMPLE_ERR_INVALID_LENGTH = 8,
    PMI_SIMPLE_ERR_INVALID_NUM_ARGS = 9,
    PMI_SIMPLE_ERR_INVALID_ARGS = 10,
    PMI_SIMPLE_ERR_INVALID_NUM_PARSED = 11,
    PMI_SIMPLE_ERR_INVALID_KEYVALP = 12,
    PMI_SIMPLE_ERR_INVALID_SIZE = 13,
};

struct keyval;

/* Parse the protocol line 'line' (NUL-terminated, with or without its
 * newline).  The result is a copy: 'line' may be freed afterwards.
 * Returns a new keyval for the caller to destroy, or NULL with errno
 * EINVAL (line is NULL), EPROTO (malformed, see above) or ENOMEM.
 */
struct keyval *keyval_parse (const char *line);

/* Like keyval_parse(), but the first tuple whose key is one of the
 * NULL-terminated array 'tail_keys' takes the rest of the line as its
 * value.  tail_keys NULL means none.
 */
struct keyval *keyval_parse_tail (const char *line,
                                  const char *const *tail_keys);

/* Free kv.  NULL is a no-op; errno is preserved. */
void keyval_destroy (struct keyval *kv);

/* Number of key=value tuples in kv (at least 1), or -1 with errno EINVAL
 * if kv is NULL.
 */
int keyval_count (const struct keyval *kv);

/* Look up 'key'.  On success *val points into kv (valid until
 * keyval_destroy) and 0 is returned.  Returns -1 with errno EINVAL (NULL
 * argument) or ENOENT (no such key).
 */
int keyval_get_str (const struct keyval *kv, const char *key, const char **val);

/* Look up 'key' and convert its value, which must be an optional sign
 * followed by one or more decimal digits and nothing else, within the
 * range of int.  Returns 0, or -1 with errno EINVAL (NULL argument),
 * ENOENT (no such key) or EPROTO (not such an integer); *val is then
 * unchanged.
 */
int keyval_get_int (const struct keyval *kv, const char *key, int *val);

/* True if 's' may be sent as a key, KVS name or key of a KVS entry: one
 * or more characters other than '=', blank or control.  False for NULL.
 */
bool keyval_valid_word (const char *s);

/* True if 's' may be sent as a value: zero or more characters other than
 * blank or control ('=' allowed).  False for NULL.
 */
bool keyval_valid_value (const char *s);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_PMI_KEYVAL_H */
