#!/bin/sh
# Regenerate the autotools build files (configure, Makefile.in).
set -e
cd "$(dirname "$0")"
mkdir -p config
autoreconf --install --force >/dev/null 2>&1 || autoreconf --install --force
# automake does not install its TAP driver by itself
cp -f "$(automake --print-libdir)/tap-driver.sh" config/tap-driver.sh
echo "autogen.sh: now run ./configure"
