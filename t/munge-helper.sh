#!/bin/sh
# munge-helper.sh start|stop DIR - a private munged for tests (root only):
# a fresh key in DIR, its socket at DIR/munge.socket (mode 0777 as munged
# makes it), pid in DIR/munged.pid.  Tests point FLUX_MUNGE_SOCKET at the
# socket.  "start" waits until the socket answers.
set -e
dir=$2
case "$1" in
start)
	mkdir -p "$dir"
	chmod 755 "$dir"
	dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null
	chmod 600 "$dir/munge.key"
	/usr/sbin/munged --force --key-file="$dir/munge.key" \
		--socket="$dir/munge.socket" --pid-file="$dir/munged.pid" \
		--log-file="$dir/munged.log" --seed-file="$dir/munged.seed"
	i=0
	until munge --socket="$dir/munge.socket" -n >/dev/null 2>&1; do
		i=$((i + 1))
		test $i -lt 100 || { echo "munged did not start" >&2; exit 1; }
		sleep 0.1
	done
	;;
stop)
	if test -f "$dir/munged.pid"; then
		kill "$(cat "$dir/munged.pid")" 2>/dev/null || true
		rm -f "$dir/munged.pid"
	fi
	;;
*)
	echo "usage: munge-helper.sh start|stop DIR" >&2
	exit 2
	;;
esac
