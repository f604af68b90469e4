/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_EVENTLOG_H
#define FLUX_EVENTLOG_H

/* KVS event logs (RFC 18).
 *
 * An eventlog is a sequence of lines, each one JSON object (an "entry")
 * followed by "\n", with no newline inside the object:
 *
 *   {"timestamp":1552593348.073045,"name":"submit","context":{"userid":5}}
 *
 * An entry has a "timestamp" (a number of seconds since the Unix epoch,
 * greater than zero), a "name" (a string) and an optional "context" (an
 * object).  Choices where RFC 18 is silent, so that decoding fails
 * closed:
 *   - an entry with any other key is rejected;
 *   - an empty name is rejected;
 *   - duplicate keys are rejected;
 *   - entries need not be in timestamp order (the RFC's example is not).
 * Whitespace inside a line is accepted (JSON Lines allows it); we write
 * compact JSON with the keys in the order timestamp, name, context.
 *
 * In memory an entry is a jansson object and a whole log a jansson array
 * of entries.
 *
 * Errors: EINVAL means a bad argument (NULL, or an entry you asked us to
 * build or encode that is not valid); EPROTO means malformed content in
 * text or JSON being decoded or validated; ENOMEM is out of memory.
 * Nothing here keeps global state: all functions may be called from any
 * callback.
 */
#include <stddef.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Entries
 */

/* The current time (CLOCK_REALTIME) to the microsecond: the double
 * nearest a whole number of microseconds.  Entries made "now" carry such
 * timestamps (RFC 18 leaves the precision open; its examples have six
 * decimals): they read back exactly from six decimals, and the services
 * that send them on by the thousand (job-list) write them without
 * printf.  Producers of explicit timestamps (job-ingest's t_submit) use
 * it too, so that a job's times all have this form.
 */
double eventlog_now (void);

/* Create an entry.  timestamp 0 means now (eventlog_now()); otherwise it
 * must be finite and > 0.  name must be a non-empty string.  context is
 * NULL or the JSON text of an object.  Returns a new reference, or NULL
 * with errno EINVAL or ENOMEM.
 */
json_t *eventlog_entry_create (double timestamp, const char *name,
                               const char *context);

/* As eventlog_entry_create(), but the context is built with json_pack()
 * from fmt and the arguments (fmt NULL: no context).  The result of fmt
 * must be an object.  EINVAL if packing fails.
 */
json_t *eventlog_entry_pack (double timestamp, const char *name,
                             const char *fmt, ...);

/* Validate an entry and return its parts through the non-NULL output
 * pointers.  *name and *context are borrowed from 'entry' (valid while it
 * lives); *context is NULL if the entry has none.  Returns 0, or -1 with
 * errno EINVAL (entry NULL) or EPROTO (not a valid entry; outputs are
 * then untouched).
 */
int eventlog_entry_parse (const json_t *entry, double *timestamp,
                          const char **name, json_t **context);

/* Decode one eventlog line: the JSON object and its terminating "\n",
 * nothing before or after, no other newline.  Returns a new reference,
 * or NULL with errno EINVAL (line NULL), EPROTO (malformed line or
 * invalid entry) or ENOMEM.
 */
json_t *eventlog_entry_decode (const char *line);

/* Encode an entry as one compact line ending in "\n".  The caller frees
 * the result.  Returns NULL with errno EINVAL (not a valid entry) or
 * ENOMEM.
 */
char *eventlog_entry_encode (const json_t *entry);

/* Whole logs
 */

/* Decode a whole eventlog into a new array of entries.  Every line must
 * be a valid entry and end in "\n".  The empty string gives an empty
 * array (RFC 18 forbids creating an empty log, but reading one is
 * harmless).  Returns NULL with errno EINVAL (s NULL), EPROTO (any bad
 * line, including a last line without "\n") or ENOMEM.
 */
json_t *eventlog_decode (const char *s);

/* Encode an array of entries as an eventlog (an empty array gives "").
 * The caller frees the result.  Returns NULL with errno EINVAL (not an
 * array, or an invalid entry) or ENOMEM.
 */
char *eventlog_encode (const json_t *log);

/* Check that 'line' is exactly one valid encoded entry, as
 * eventlog_entry_decode() requires, then append it to the malloc'd log
 * string *log (NULL for a new log), reallocating it.  This is the check
 * to make before a KVS append to an eventlog.  Returns 0, or -1 with
 * errno EINVAL (log or line NULL, or a non-empty *log not ending in
 * "\n"), EPROTO (bad line) or ENOMEM; on failure *log is unchanged.
 */
int eventlog_append (char **log, const char *line);

/* Incremental parser
 *
 * For watchers that receive an eventlog as appended chunks, which need
 * not end on line boundaries: feed the chunks in order and take the
 * complete entries out one by one.
 */
typedef struct eventlog_parser eventlog_parser_t;

/* Create a parser.  NULL with errno ENOMEM on failure. */
eventlog_parser_t *eventlog_parser_create (void);

/* Destroy a parser and any buffered bytes.  NULL-safe, keeps errno. */
void eventlog_parser_destroy (eventlog_parser_t *p);

/* Add 'len' bytes (they are copied).  Returns 0, or -1 with errno EINVAL
 * (p NULL, or data NULL with len > 0) or ENOMEM.
 */
int eventlog_parser_feed (eventlog_parser_t *p, const void *data, size_t len);

/* Take the next complete entry (a new reference).  Returns NULL with
 * errno EAGAIN when no complete line is buffered, EPROTO when the next
 * line is malformed (that line is consumed, so the caller may stop or
 * go on with the following lines), EINVAL (p NULL) or ENOMEM.
 */
json_t *eventlog_parser_next (eventlog_parser_t *p);

/* Number of buffered bytes not yet returned, e.g. to detect a log that
 * ends in the middle of a line.
 */
size_t eventlog_parser_pending (const eventlog_parser_t *p);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_EVENTLOG_H */
