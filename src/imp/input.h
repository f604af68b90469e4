/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef IMP_INPUT_H
#define IMP_INPUT_H
/* The two messages flux-imp parses besides J and its configuration:
 * - the exec input {"J":s, "options"?:o} from FLUX_IMP_EXEC_HELPER's
 *   output or stdin (PROTOCOLS-exec.md section 5.2);
 * - the privilege separation message, child to parent:
 *   {"cmd":"exec", "uid":i, "shell":s, "args":[s...]}.
 */
#include <stddef.h>
#include <stdint.h>

#include "imperr.h"

#define IMP_INPUT_MAX (1024 * 1024)
#define IMP_ARGS_MAX 1024

/* Returns J (a new string) from the exec input, or NULL with e set. */
char *imp_input_decode (const char *text, size_t len, struct imp_err *e);

struct imp_msg {
    uint32_t uid;
    char *shell;
    char **args; /* NULL-terminated, args[0] is shell */
};

/* Encode to a new NUL-terminated JSON text (NULL on ENOMEM). */
char *imp_msg_encode (uint32_t uid, const char *shell, char *const args[]);

/* Decode text (len bytes); -1 with e set.  imp_msg_clear() frees. */
int imp_msg_decode (const char *text, size_t len, struct imp_msg *m,
                    struct imp_err *e);
void imp_msg_clear (struct imp_msg *m);

#endif /* !IMP_INPUT_H */
