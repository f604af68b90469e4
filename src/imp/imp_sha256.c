/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* SHA-256 for J (libcontent's, compiled in: flux-imp links no flux
 * library). */
#include "sha256.c"
