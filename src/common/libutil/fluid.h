/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_UTIL_FLUID_H
#define FLUX_UTIL_FLUID_H

/* FLUIDs: Flux Locally Unique IDs (RFC 19), used as job ids.
 *
 * A FLUID is a 64-bit integer laid out as
 *
 *     [ timestamp: 40 bits | generator id: 14 bits | sequence: 10 bits ]
 *
 * where the timestamp counts milliseconds since the generator's epoch
 * (for job ids, the start of the instance).  Each generator has its own
 * id, so generators never collide; one generator issues at most 1024
 * FLUIDs per millisecond and its FLUIDs strictly increase.
 *
 * The generator is a transparent struct so that it can be embedded in
 * the object that owns it without an allocation.  Its fields are private:
 * touch them only through the functions below.  A generator is not
 * thread-safe.
 *
 * String forms (RFC 19 "Representation", PROTOCOLS.md section 7):
 *   FLUID_STRING_DEC        6731191091817518
 *   FLUID_STRING_HEX        0x17e9fb8df16c2e
 *   FLUID_STRING_DOTHEX     0017.e9fb.8df1.6c2e
 *   FLUID_STRING_KVS        job.0017.e9fb.8df1.6c2e
 *   FLUID_STRING_F58        ƒuZZybuNNy   (U+0192, UTF-8 C6 92)
 *   FLUID_STRING_F58_PLAIN  fuZZybuNNy   (ASCII fallback)
 * Whether to print ƒ or f (e.g. according to the locale) is the caller's
 * decision.
 *
 * Not supported: the mnemonic ("words", e.g. reform-remote-galileo--...)
 * and emoji encodings.  RFC 19 only refers to the external mnemonicode
 * word list and to an emoji table (data/spec_19/basemoji.h) that is not
 * part of the RFC text we implement from, so neither can be implemented
 * faithfully.  fluid_parse() recognizes both forms and fails with EINVAL.
 */
#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t fluid_t;

#define FLUID_TIMESTAMP_BITS 40
#define FLUID_ID_BITS 14
#define FLUID_SEQ_BITS 10
#define FLUID_TIMESTAMP_MAX ((UINT64_C (1) << FLUID_TIMESTAMP_BITS) - 1)
#define FLUID_ID_MAX ((1 << FLUID_ID_BITS) - 1)
#define FLUID_SEQ_MAX ((1 << FLUID_SEQ_BITS) - 1)

/* A buffer of this size holds any encoded FLUID with its NUL. */
#define FLUID_STRING_MAX 32

enum fluid_string_type {
    FLUID_STRING_DEC = 1,
    FLUID_STRING_HEX = 2,
    FLUID_STRING_DOTHEX = 3,
    FLUID_STRING_KVS = 4,
    FLUID_STRING_F58 = 5,
    FLUID_STRING_F58_PLAIN = 6,
};

/* A millisecond clock: store the current time in *ms and return 0, or
 * return -1 with errno set.  Only differences between readings matter.
 * The default clock is CLOCK_MONOTONIC, so wall clock steps never move
 * FLUID timestamps.
 */
typedef int (*fluid_clock_f) (uint64_t *ms, void *arg);

struct fluid_generator {
    uint32_t id;         /* generator id */
    int seq;             /* sequence of the last FLUID, -1 if none at ts */
    uint64_t timestamp;  /* timestamp of the last FLUID (or the start) */
    uint64_t start;      /* timestamp given to fluid_init() */
    uint64_t clock_base; /* clock reading at fluid_init() */
    fluid_clock_f clock;
    void *clock_arg;
};

/* Initialize 'gen' with generator id 'id' (0..FLUID_ID_MAX).  Its clock
 * starts at 'timestamp' ms since the epoch: pass 0 for a new epoch, or
 * after a restart the value of fluid_save_timestamp() (or one more than
 * the largest timestamp issued before) so that new FLUIDs are greater
 * than all earlier ones.  Returns 0, or -1 with errno EINVAL (bad id,
 * timestamp > FLUID_TIMESTAMP_MAX, gen NULL) or the clock's errno.
 */
int fluid_init (struct fluid_generator *gen, uint32_t id, uint64_t timestamp);

/* As fluid_init() but reading time from 'clock' (for tests and
 * simulation).  The clock must eventually advance: see fluid_generate().
 */
int fluid_init_clock (struct fluid_generator *gen, uint32_t id,
                      uint64_t timestamp, fluid_clock_f clock, void *arg);

/* Issue the next FLUID into *fluid.  FLUIDs from one generator strictly
 * increase.  The timestamp is the clock's elapsed time since fluid_init()
 * plus the starting timestamp; if the clock reads earlier than the last
 * FLUID, the last timestamp is reused.  When the 1024 sequence numbers of
 * a millisecond are used up, the call waits (sleeps) until the clock
 * reaches the next millisecond, as RFC 19 allows only 1024 ids per ms;
 * if the clock is behind the last timestamp (it stepped back) the
 * timestamp is advanced by one instead of waiting.  Returns 0, or -1 with
 * errno EINVAL (NULL argument), EOVERFLOW (the 40-bit timestamp is
 * exhausted) or the clock's errno; a failed call changes nothing.
 */
int fluid_generate (struct fluid_generator *gen, fluid_t *fluid);

/* The timestamp to pass to fluid_init() when restarting: greater than
 * the timestamp of every FLUID 'gen' has issued (its start timestamp if
 * it issued none).
 */
uint64_t fluid_save_timestamp (const struct fluid_generator *gen);

/* Fields of a FLUID. */
uint64_t fluid_get_timestamp (fluid_t fluid);
uint32_t fluid_get_id (fluid_t fluid);
uint32_t fluid_get_seq (fluid_t fluid);

/* Encode 'fluid' in form 'type' into buf (bufsz bytes, NUL included).
 * Returns 0, or -1 with errno EINVAL (unknown type, buf NULL, bufsz <= 0)
 * or EOVERFLOW (buffer too small; buf is then left as an empty string).
 */
int fluid_encode (char *buf, int bufsz, fluid_t fluid,
                  enum fluid_string_type type);

/* Decode 's' strictly as form 'type': no whitespace, no other form.
 * Dothex needs exactly four groups of four hex digits; hex needs "0x"
 * and 1 or more hex digits; decimal only digits; F58 a "ƒ" (for
 * FLUID_STRING_F58) or "f" (FLUID_STRING_F58_PLAIN) prefix and 1 to 12
 * base58 digits.  Either case of hex digit is accepted.  Returns 0, or -1
 * with errno EINVAL (bad syntax, a value beyond 64 bits, NULL argument).
 */
int fluid_decode (const char *s, fluid_t *fluid, enum fluid_string_type type);

/* Decode any supported form, telling which one it was in *type (which
 * may be NULL).  Follows RFC 19 and PROTOCOLS.md section 7: leading and
 * trailing whitespace is ignored and a "job." prefix is stripped; then
 * a string containing '.' is dothex (reported as FLUID_STRING_KVS when
 * the prefix was present), one containing '-' is mnemonic words
 * (unsupported), one starting with "ƒ" or "f" is F58, one starting with
 * bytes F0 9F is emoji (unsupported), one starting with "0x" is hex, and
 * anything else is decimal.  Returns 0, or -1 with errno EINVAL (empty
 * string, bad syntax, overflow, or a words/emoji form).
 */
int fluid_decode_type (const char *s, fluid_t *fluid,
                       enum fluid_string_type *type);

/* fluid_decode_type() without the type. */
int fluid_parse (const char *s, fluid_t *fluid);

#ifdef __cplusplus
}
#endif

#endif /* !FLUX_UTIL_FLUID_H */
