#!/bin/bash
# Set up everything and run the project's main job.
# Until the broker lands, the main job is the messaging benchmark: RPC round
# trips over the local connector against a bare unix-socket ping-pong.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
cd "$top"
[ -x configure ] || ./autogen.sh >/dev/null
mkdir -p build/run
cd build/run
[ -f Makefile ] || "$top/configure" -q
make -j"$(nproc)" >/dev/null
./bench/msgbench "$@"
