#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='libflux-core.so: the shared library of libflux

It has a soname and exports the flux_ API and nothing else (the helpers
of libflux-internal.la stay hidden).  The broker, every module and flux
link it; none of them carries a copy of it, and a module needs nothing
from the broker: every symbol it uses comes from its own dependencies.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

LIBFLUX="$FLUX_BUILD_DIR/src/common/libflux/.libs/libflux-core.so"

# The ELF file of a program libtool built: in the build tree,
# DIR/NAME is a wrapper script and the binary is DIR/.libs/NAME.
elf_of() {
	if test -f "${1%/*}/.libs/${1##*/}"; then
		echo "${1%/*}/.libs/${1##*/}"
	else
		echo "$1"
	fi
}
needed() {
	readelf -d "$1" | sed -n "s/.*(NEEDED).*\\[\\(.*\\)\\]/\\1/p"
}
# Functions and data an ELF file defines, global or local (nm: its whole
# symbol table, not only the dynamic one).
defined() {
	nm --defined-only "$1" | awk "\$2 ~ /^[TtDdBbRr]\$/ { print \$3 }" | sort -u
}

test_expect_success 'libflux-core.so has the soname libflux-core.so.0' '
	readelf -d "$LIBFLUX" >dynamic.out &&
	grep "(SONAME).*\\[libflux-core\\.so\\.0\\]" dynamic.out
'
test_expect_success 'libflux-core.so exports flux_ names only' '
	nm -D --defined-only "$LIBFLUX" | awk "{ print \$NF }" | sort >exports &&
	grep -x flux_open exports &&
	grep -x flux_msg_create exports &&
	grep -x flux_msgpipe_create exports &&
	grep -x flux_stats_respond exports &&
	{ grep -v "^flux_" exports >others || true; } &&
	test_must_be_empty others
'
test_expect_success 'the libflux-internal helpers in it are not exported' '
	defined "$LIBFLUX" >all &&
	for sym in errprintf future_strerror base64_encode jsonparse jsonemit \
		waitlist_init msgdeque_push msg_check_type; do
		grep -x $sym all && ! grep -x $sym exports || return 1
	done
'
test_expect_success 'flux-broker and flux link libflux-core.so' '
	for prog in src/broker/flux-broker src/cmd/flux; do
		needed "$(elf_of "$FLUX_BUILD_DIR/$prog")" >needed.out &&
		grep -x "libflux-core\\.so\\.0" needed.out || return 1
	done
'
test_expect_success 'flux-broker exports no symbol of its own to modules' '
	broker=$(elf_of "$FLUX_BUILD_DIR/src/broker/flux-broker") &&
	nm -D --defined-only "$broker" | awk "{ print \$NF }" >broker.exports &&
	! grep "^flux_" broker.exports
'
test_expect_success 'every module has libflux-core.so as a NEEDED entry' '
	ls "$FLUX_BUILD_DIR"/src/modules/*/.libs/*.so >modules &&
	test $(wc -l <modules) -ge 11 &&
	while read so; do
		needed "$so" >needed.out &&
		grep -x "libflux-core\\.so\\.0" needed.out || return 1
	done <modules
'
test_expect_success 'every symbol a module uses is found without the broker' '
	while read so; do
		ldd -r "$so" >ldd.out 2>&1 &&
		! grep "undefined symbol" ldd.out || return 1
	done <modules
'
test_expect_success 'no program or module carries a copy of libflux-core' '
	for f in $(cat modules) \
		"$(elf_of "$FLUX_BUILD_DIR/src/broker/flux-broker")" \
		"$(elf_of "$FLUX_BUILD_DIR/src/cmd/flux")"; do
		defined "$f" | comm -12 - exports >copies &&
		test_must_be_empty copies || return 1
	done
'
test_done
