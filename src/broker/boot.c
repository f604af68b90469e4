/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* boot.c - find this broker's place in the instance.
 *
 * The PMI bootstrap (boot_pmi_open/exchange/close: simple over PMI_FD or
 * PMI_PORT, PMIx, singleton) is in boot_pmi.c, over the methods of
 * common/libpmi/upmi.h.
 */
#include "boot.h"
