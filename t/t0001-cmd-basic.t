#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='flux command front end and its subcommands

The subcommands that need a broker run against t/fakebroker, which speaks
the broker protocols of PROTOCOLS.md over fd:// with libflux.  flux start
-s N runs t/pmi-broker.sh as its brokers, which do a real PMI-1 exchange.'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

FLUX="$FLUX_BUILD_DIR/src/cmd/flux"
FAKEBROKER="$FLUX_BUILD_DIR/t/fakebroker"
PMIBROKER="$SHARNESS_TEST_SRCDIR/pmi-broker.sh"
TAB=$(printf '\t')

# --- the front end -------------------------------------------------------

test_expect_success 'flux --version prints versions without a broker' '
	"$FLUX" --version >version.out &&
	grep "^commands:" version.out &&
	grep "^libflux-core:" version.out &&
	"$FLUX" -V | cmp - version.out
'
# Each shared library mapped at start costs every command ~60 us: flux
# loads libyaml only to parse a YAML jobspec, and needs no libm.
# (A sanitizer build links its runtimes, and keeps libraries that
# --as-needed would drop: there only libyaml and libm are checked.)
# In the build tree $FLUX is libtool's wrapper script of .libs/flux.
test_expect_success 'flux maps only libflux-core, libjansson, libuv and libc' '
	bin="$FLUX" &&
	if test -x "$FLUX_BUILD_DIR/src/cmd/.libs/flux"; then
		bin="$FLUX_BUILD_DIR/src/cmd/.libs/flux"
	fi &&
	readelf -d "$bin" | sed -n "s/.*(NEEDED).*\\[\\(.*\\)\\]/\\1/p" | sort >needed.out &&
	grep "^libflux-core\\.so\\." needed.out &&
	if grep -q -e "^libasan" -e "^libubsan" needed.out; then
		! grep -e "^libyaml" -e "^libm\\." needed.out
	else
		printf "libc.so.6\\nlibflux-core.so.0\\nlibjansson.so.4\\nlibuv.so.1\\n" >needed.exp &&
		test_cmp needed.exp needed.out
	fi
'
test_expect_success 'flux --help lists every command with a summary' '
	"$FLUX" --help >help.out &&
	for cmd in dmesg event getattr logger lsattr module overlay ping \
		setattr shutdown start uptime keygen; do
		grep "^   $cmd  *[A-Z]" help.out || return 1
	done
'
test_expect_success 'flux --help lists commands in order, not internal ones' '
	sed -n "/^Commands:\$/,/^\$/p" help.out | awk "NF > 1 { print \$1 }" \
		>names &&
	test $(wc -l <names) -ge 20 &&
	LC_ALL=C sort names >sorted &&
	test_cmp sorted names &&
	! grep -x imp_exec_helper names &&
	"$FLUX" imp_exec_helper --help | grep "^Usage: flux imp_exec_helper"
'
test_expect_success 'flux help is flux --help' '
	"$FLUX" help >help2.out &&
	test_cmp help.out help2.out
'
test_expect_success 'flux with no command: one line on stderr, exit 1' '
	test_expect_code 1 "$FLUX" 2>err &&
	test_line_count = 1 err
'
test_expect_success 'flux with an unknown option: one line, exit 1' '
	test_expect_code 1 "$FLUX" --frobnicate 2>err &&
	test_line_count = 1 err &&
	grep "unknown option" err
'
test_expect_success 'an unknown command fails with one line' '
	test_expect_code 1 "$FLUX" nosuchcommand 2>err &&
	test_line_count = 1 err &&
	grep "not a flux command" err
'
test_expect_success 'a command name with a slash is never executed' '
	test_expect_code 1 "$FLUX" ../bin/true 2>err &&
	grep "not a flux command" err
'
test_expect_success 'flux-CMD is found on FLUX_EXEC_PATH and gets the args' '
	mkdir -p bin1 bin2 &&
	printf "#!/bin/sh\necho one \"\$@\"\n" >bin1/flux-hello &&
	printf "#!/bin/sh\necho two \"\$@\"\n" >bin2/flux-hello &&
	chmod +x bin1/flux-hello bin2/flux-hello &&
	FLUX_EXEC_PATH="$PWD/bin2:$PWD/bin1" "$FLUX" hello a "b c" >out &&
	test "$(cat out)" = "two a b c" &&
	FLUX_EXEC_PATH="$PWD/nodir:$PWD/bin1" "$FLUX" hello >out &&
	test "$(cat out)" = "one"
'
# as flux-core's: flux start's initial program runs the same flux
test_expect_success 'flux run by its path puts its directory first in PATH' '
	printf "#!/bin/sh\necho \"\$PATH\"\n" >bin1/flux-path &&
	chmod +x bin1/flux-path &&
	dir=$(cd "$(dirname "$FLUX")" && pwd -P) &&
	FLUX_EXEC_PATH="$PWD/bin1" PATH=/usr/bin:/bin "$FLUX" path >out &&
	test "$(cat out)" = "$dir:/usr/bin:/bin" &&
	FLUX_EXEC_PATH="$PWD/bin1" PATH="$dir:/bin" "$FLUX" path >out &&
	test "$(cat out)" = "$dir:/bin" &&
	(cd "$dir" && FLUX_EXEC_PATH="$OLDPWD/bin1" PATH=/bin ./flux path) >out &&
	test "$(cat out)" = "$dir:/bin"
'
test_expect_success 'flux found in PATH leaves PATH as it is' '
	dir=$(cd "$(dirname "$FLUX")" && pwd -P) &&
	test "$(PATH="/usr/bin:/bin:$dir" command -v flux)" = "$dir/flux" &&
	FLUX_EXEC_PATH="$PWD/bin1" PATH="/usr/bin:/bin:$dir" flux path >out &&
	test "$(cat out)" = "/usr/bin:/bin:$dir"
'
test_expect_success 'flux help lists programs found on the exec path' '
	FLUX_EXEC_PATH="$PWD/bin1" "$FLUX" help >out &&
	grep "^   hello$" out
'
test_expect_success 'every command prints its usage with --help, exit 0' '
	for cmd in getattr setattr lsattr ping dmesg logger event module \
		overlay uptime shutdown start keygen; do
		"$FLUX" $cmd --help >out.$cmd &&
		grep "^Usage: flux $cmd" out.$cmd || return 1
	done
'
test_expect_success 'every group member prints its usage with --help' '
	for sub in "event pub" "event sub" "module load" "module remove" \
		"module list" "module stats" "overlay status"; do
		"$FLUX" $sub --help >out &&
		grep "^Usage: flux $sub" out || return 1
	done
'
test_expect_success 'flux help CMD prints the usage of CMD' '
	"$FLUX" help ping >out &&
	test_cmp out.ping out
'
test_expect_success 'a bad option is one line on stderr and exit 1' '
	test_expect_code 1 "$FLUX" ping --nosuch 0 2>err &&
	test_line_count = 1 err &&
	grep "^flux-ping: unknown option .--nosuch." err &&
	test_expect_code 1 "$FLUX" dmesg -Z 2>err &&
	grep "unknown option .-Z." err
'
test_expect_success 'a missing option argument is a usage error' '
	test_expect_code 1 "$FLUX" ping --count 2>err &&
	test_line_count = 1 err &&
	grep "missing argument for .--count." err
'
test_expect_success 'a bad option value is a usage error' '
	test_expect_code 1 "$FLUX" ping --count=-1 0 2>err &&
	test_line_count = 1 err &&
	test_expect_code 1 "$FLUX" ping --interval=x 0 2>err &&
	test_line_count = 1 err
'
test_expect_success 'group commands reject a missing or unknown member' '
	test_expect_code 1 "$FLUX" event 2>err &&
	test_line_count = 1 err &&
	test_expect_code 1 "$FLUX" module frob 2>err &&
	grep "unknown command .frob." err
'
test_expect_success 'commands needing a broker fail without FLUX_URI' '
	for cmd in "getattr rank" "lsattr" "ping 0" "dmesg" "logger x" \
		"event pub a" "module list" "overlay status" "uptime"; do
		test_expect_code 1 "$FLUX" $cmd 2>err &&
		grep -x "flux: FLUX_URI is not set: run this inside an instance (e.g. flux start)" err ||
		return 1
	done
'
test_expect_success 'an unreachable FLUX_URI is reported' '
	test_expect_code 1 env FLUX_LOCAL_CONNECTOR_RETRY_COUNT=0 \
		FLUX_URI="local://$PWD/nosock" "$FLUX" getattr rank 2>err &&
	grep "cannot connect" err
'

# --- against the fake broker ----------------------------------------------

test_expect_success 'start the fake broker' '
	("$FAKEBROKER" "$PWD/sock" &
	 echo $! >fakebroker.pid) &&
	i=0 &&
	while ! test -S sock && test $i -lt 100; do
		sleep 0.1; i=$((i + 1))
	done &&
	test -S sock
'
FLUX_URI="local://$PWD/sock"
export FLUX_URI

test_expect_success 'getattr prints a value' '
	"$FLUX" getattr rank >out &&
	test "$(cat out)" = 0
'
test_expect_success 'getattr of an unknown attribute fails' '
	test_expect_code 1 "$FLUX" getattr nosuch 2>err &&
	grep "^flux-getattr: nosuch: No such file or directory" err
'
test_expect_success 'getattr needs exactly one name' '
	test_expect_code 1 "$FLUX" getattr 2>err &&
	test_line_count = 1 err &&
	test_expect_code 1 "$FLUX" getattr a b 2>err
'
test_expect_success 'setattr changes a value' '
	"$FLUX" setattr log-level 7 &&
	test "$("$FLUX" getattr log-level)" = 7
'
test_expect_success 'setattr of an unknown attribute shows the broker text' '
	test_expect_code 1 "$FLUX" setattr nosuch 1 2>err &&
	grep "nosuch: unknown attribute" err
'
test_expect_success 'setattr --expunge removes an attribute' '
	"$FLUX" setattr --expunge log-level &&
	test_must_fail "$FLUX" getattr log-level &&
	test_expect_code 1 "$FLUX" setattr -e log-level 2>err
'
test_expect_success 'lsattr lists the names, sorted' '
	"$FLUX" lsattr >out &&
	sort out | test_cmp - out &&
	grep -x rank out &&
	grep -x broker.starttime out
'
test_expect_success 'lsattr -v shows the values' '
	"$FLUX" lsattr -v >out &&
	grep -x "rank                                    0" out &&
	grep "^hostlist  *fake\[0-4\]$" out
'

test_expect_success 'ping RANK prints one line per response' '
	"$FLUX" ping --count=3 --interval=0 0 >out &&
	test_line_count = 3 out &&
	grep -E "^0!broker\.ping pad=0 seq=0 time=[0-9]+\.[0-9]{3} ms \(fakebrkr\)$" out &&
	grep -E "^0!broker\.ping pad=0 seq=2 " out
'
test_expect_success 'ping SERVICE has no rank prefix' '
	"$FLUX" ping -c 1 kvs >out &&
	grep -E "^kvs\.ping pad=0 seq=0 time=" out
'
test_expect_success 'ping RANK!SERVICE with a pad' '
	"$FLUX" ping -c 2 -i 0 -p 100 "0!kvs" >out &&
	grep -E "^0!kvs\.ping pad=100 seq=1 time=" out
'
test_expect_success 'ping a host name from the hostlist attribute' '
	"$FLUX" ping -c 1 fake0 >out &&
	grep "^fake0!broker.ping pad=0 seq=0" out
'
test_expect_success 'ping --rank and upstream' '
	"$FLUX" ping -c 1 --rank 0 kvs | grep "^0!kvs.ping" &&
	"$FLUX" ping -c 1 upstream | grep "^upstream!broker.ping"
'
test_expect_success 'ping --userid shows the credentials' '
	"$FLUX" ping -c 1 -u 0 >out &&
	grep "pad=0 userid=$(id -u) rolemask=0x[0-9a-f]* seq=0" out
'
test_expect_success 'ping all summarizes every rank' '
	"$FLUX" ping -c 1 all >out &&
	grep -E "^all!broker\.ping pad=0 seq=0 time=\([0-9.]+:[0-9.]+:[0-9.]+\) ms stddev [0-9.]+$" out
'
test_expect_success 'ping rejects a response with an extra key' '
	test_expect_code 1 "$FLUX" ping -c 1 badping >out 2>err &&
	test_must_be_empty out &&
	grep "badping.ping: response does not echo the request" err
'
test_expect_success 'ping rejects a response with another pad' '
	test_expect_code 1 "$FLUX" ping -c 1 padping 2>err &&
	grep "does not echo" err
'
test_expect_success 'ping of a missing service reports the error' '
	test_expect_code 1 "$FLUX" ping -c 1 nosuch 2>err &&
	grep "nosuch.ping: Function not implemented" err &&
	test_expect_code 1 "$FLUX" ping -c 5 -i 0 nosuch 2>err &&
	test $(grep -c "Function not implemented" err) -eq 1
'
test_expect_success 'ping of an unknown rank or host is a usage error' '
	test_expect_code 1 "$FLUX" ping "nohost!kvs" 2>err &&
	test_line_count = 1 err &&
	grep "unknown rank or host" err
'

test_expect_success 'logger appends, dmesg prints time app.severity[rank]' '
	"$FLUX" logger hello world &&
	"$FLUX" dmesg >out &&
	grep -E "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}(Z|[+-][0-9]{2}:[0-9]{2}) logger\.info\[0\]: hello world$" out
'
test_expect_success 'logger --severity and --appname' '
	"$FLUX" logger --severity=err --appname=myapp oops &&
	"$FLUX" logger -s debug -n other fine &&
	"$FLUX" dmesg >out &&
	grep "myapp\.err\[0\]: oops$" out &&
	grep "other\.debug\[0\]: fine$" out
'
test_expect_success 'logger reads stdin, one entry per line' '
	printf "line one\nline two\n" | "$FLUX" logger -n multi &&
	"$FLUX" dmesg >out &&
	grep "multi\.info\[0\]: line one$" out &&
	grep "multi\.info\[0\]: line two$" out
'
test_expect_success 'logger rejects a bad severity or appname' '
	test_expect_code 1 "$FLUX" logger -s bogus x 2>err &&
	grep "invalid severity" err &&
	test_expect_code 1 "$FLUX" logger -n "a b" x 2>err &&
	grep "invalid appname" err
'
test_expect_success 'dmesg --human prints minute headers and offsets' '
	"$FLUX" dmesg -H >out &&
	head -1 out | grep -E "^\[[A-Z][a-z]{2}[0-9]{2} [0-9]{2}:[0-9]{2}\] logger\.info\[0\]: hello world$" &&
	grep -E "^\[ *\+[0-9]+\.[0-9]{6}\] myapp\.err\[0\]: oops$" out ||
	grep -E "^\[[A-Z][a-z]{2}[0-9]{2} [0-9]{2}:[0-9]{2}\] myapp" out
'
test_expect_success 'dmesg --follow prints new entries' '
	("$FLUX" dmesg -f -n >follow.out & echo $! >follow.pid) &&
	i=0 &&
	while ! grep -q followme follow.out && test $i -lt 50; do
		"$FLUX" logger followme; sleep 0.1; i=$((i + 1))
	done &&
	kill $(cat follow.pid) &&
	grep "logger.info\[0\]: followme" follow.out &&
	! grep "hello world" follow.out
'
test_expect_success 'dmesg -c prints, then the ring is empty' '
	"$FLUX" dmesg -c >out &&
	grep "hello world" out &&
	"$FLUX" dmesg >out2 &&
	test_must_be_empty out2
'
test_expect_success 'dmesg -C clears without printing' '
	"$FLUX" logger again &&
	"$FLUX" dmesg -C >out &&
	test_must_be_empty out &&
	"$FLUX" dmesg >out &&
	test_must_be_empty out
'

test_expect_success 'event sub prints TOPIC<tab>PAYLOAD of matching events' '
	("$FLUX" event sub --count=2 test. >sub.out & echo $! >sub.pid) &&
	i=0 &&
	while kill -0 $(cat sub.pid) 2>/dev/null && test $i -lt 100; do
		"$FLUX" event pub other.x &&
		"$FLUX" event pub test.a "{\"x\": 1}" &&
		sleep 0.1; i=$((i + 1))
	done &&
	test_line_count = 2 sub.out &&
	head -1 sub.out >first &&
	echo "test.a${TAB}{\"x\": 1}" >expected &&
	test_cmp expected first
'
test_expect_success 'event pub --loopback returns once the event is back' '
	"$FLUX" event pub -l test.loop "[1,2]" &&
	"$FLUX" event pub -l -r test.raw "not json" &&
	"$FLUX" event pub -l -p test.private
'
test_expect_success 'event pub rejects a payload that is not JSON' '
	test_expect_code 1 "$FLUX" event pub test.x "{bad" 2>err &&
	test_line_count = 1 err &&
	grep "not valid JSON" err
'
test_expect_success 'event pub needs a topic' '
	test_expect_code 1 "$FLUX" event pub 2>err &&
	grep "missing TOPIC" err
'

test_expect_success 'module list prints the table' '
	"$FLUX" module list >out &&
	head -1 out | grep -x "Module                   Idle  S Sendq Recvq Service" &&
	grep -x "kvs                         3  R     0     2 kvs-watch" out &&
	grep -x "connector-local          idle  R     0     0 " out
'
test_expect_success 'module list --long adds the path' '
	"$FLUX" module list -l >out &&
	head -1 out | grep " Path$" &&
	grep "^kvs .* /lib/flux/kvs.so$" out
'
test_expect_success 'module load sends an absolute path and the args' '
	touch mymod.so &&
	"$FLUX" module load --name=mymod ./mymod.so a1 a2 &&
	"$FLUX" module list -l >out &&
	grep "^mymod .* $PWD/mymod.so$" out
'
test_expect_success 'module load reports the broker error' '
	test_expect_code 1 "$FLUX" module load nosuch 2>err &&
	grep "nosuch: module not found" err &&
	test_expect_code 1 "$FLUX" module load ./missing/x.so 2>err &&
	grep "No such file" err
'
test_expect_success 'module remove, and -f for a module not loaded' '
	"$FLUX" module remove mymod &&
	! "$FLUX" module list | grep "^mymod" &&
	test_expect_code 1 "$FLUX" module remove mymod 2>err &&
	grep "mymod: No such file or directory" err &&
	"$FLUX" module remove -f mymod
'
test_expect_success 'module stats prints the JSON of NAME.stats-get' '
	"$FLUX" module stats kvs >out &&
	grep "\"request\": 7" out &&
	test_expect_code 1 "$FLUX" module stats nosuch 2>err &&
	grep "nosuch.stats-get: Function not implemented" err
'

cat >overlay.expected <<'EOF'
0 fake0: partial
├─ 1 fake1: full
│  └─ 3 fake3: full
└─ 2 fake2: lost lost connection
   └─ 4 fake4: lost
EOF
test_expect_success 'overlay status draws the tree, ghosts behind lost' '
	"$FLUX" overlay status >out &&
	test_cmp overlay.expected out
'
test_expect_success 'overlay status -v adds the time in state' '
	"$FLUX" overlay status -v >out &&
	grep -x "0 fake0: partial for 1.5m" out &&
	grep -x "└─ 2 fake2: lost for 30s lost connection" out &&
	"$FLUX" overlay status -vv >out &&
	grep -E "^0 fake0: partial for 1.5m \([0-9]+\.[0-9]{3} ms\)$" out
'
test_expect_success 'overlay status --no-pretty, --no-ghost, --summary' '
	"$FLUX" overlay status --no-pretty >out &&
	grep -x "3 fake3: full" out &&
	"$FLUX" overlay status --no-ghost >out &&
	test_line_count = 4 out &&
	"$FLUX" overlay status --summary >out &&
	test_line_count = 1 out &&
	"$FLUX" overlay status --rank=1 >out &&
	head -1 out | grep -x "1 fake1: full"
'
test_expect_success 'overlay status --wait for the current state returns' '
	"$FLUX" overlay status --summary --wait=partial >out &&
	test_line_count = 1 out &&
	test_expect_code 1 "$FLUX" overlay status --wait=bogus 2>err
'

test_expect_success 'uptime prints state, age, owner, depth and size' '
	"$FLUX" uptime >out &&
	grep -E "^ [0-9]{2}:[0-9]{2}:[0-9]{2} run (1\.[5-9][0-9]*|[2-9](\.[0-9]+)?)m,  owner [^ ]+,  depth 0,  size 1$" out
'
test_expect_success 'shutdown copies the log stream to stderr' '
	"$FLUX" shutdown 2>err &&
	grep "^broker.info\[0\]: shutdown started$" err &&
	"$FLUX" shutdown --background
'
test_expect_success 'stop the fake broker' '
	kill $(cat fakebroker.pid)
'

# --- flux start ----------------------------------------------------------

test_expect_success 'start -vX prints the broker command without running it' '
	FLUX_BROKER_PATH=/bin/false "$FLUX" start -vX -o -v,,-x -o -y \
		-Sa=b --setattr c=d=e true x >out 2>err &&
	test_must_be_empty out &&
	echo "flux-start: /bin/false -v -x -y -Sa=b -Sc=d=e -- true x" >expected &&
	test_cmp expected err
'
test_expect_success 'start -vX -s 2: the initial program goes to rank 0 only' '
	FLUX_BROKER_PATH=/bin/false "$FLUX" start -vX -s 2 -Sa=b echo hi \
		2>err &&
	cat >expected <<-EOF &&
	flux-start: rank 0: /bin/false -Sa=b -- echo hi
	flux-start: rank 1: /bin/false -Sa=b
	EOF
	test_cmp expected err
'
test_expect_success 'start rejects bad options' '
	test_expect_code 1 "$FLUX" start -s 0 true 2>err &&
	test_line_count = 1 err &&
	test_expect_code 1 "$FLUX" start -S novalue true 2>err &&
	grep "NAME=VALUE" err
'
test_expect_success 'start without -s execs the broker with its args' '
	printf "#!/bin/sh\necho \"\$PMI_FD:\$*\"\nexit 3\n" >broker.sh &&
	chmod +x broker.sh &&
	test_expect_code 3 env FLUX_BROKER_PATH="$PWD/broker.sh" "$FLUX" start \
		-Sx=y cmd arg >out &&
	echo ":-Sx=y -- cmd arg" >expected &&
	test_cmp expected out
'
test_expect_success 'start -s 4 serves PMI, runs the program on rank 0' '
	rm -f pmi.log &&
	FLUX_BROKER_PATH="$PMIBROKER" FAKE_BROKER_LOG=$PWD/pmi.log \
		"$FLUX" start -s 4 -Sa=b sh -c "echo initial program; exit 5" \
		>out 2>err;
	test $? = 5 &&
	test "$(cat out)" = "initial program" &&
	test "$(grep -c "cmd=finalize_ack rc=0" pmi.log)" = 4 &&
	grep "^1: args: -Sa=b$" pmi.log &&
	grep "^0: args: -Sa=b -- sh -c" pmi.log
'
test_expect_success 'start -s 1 works and exits 0' '
	FLUX_BROKER_PATH="$PMIBROKER" "$FLUX" start -s 1 true
'
test_expect_success 'start -vv traces PMI' '
	FLUX_BROKER_PATH="$PMIBROKER" "$FLUX" start -vv -s 2 true 2>err &&
	grep "flux-start: rank 1:" err &&
	grep "flux-start: pmi 1: C: cmd=barrier_in" err
'
test_expect_success 'start -s 2: a broker lost in bootstrap stops all' '
	test_expect_code 143 env FLUX_BROKER_PATH="$PMIBROKER" \
		FAKE_BROKER_MODE=kill1early "$FLUX" start -s 2 sleep 30 2>err &&
	grep "flux-start: rank 1: Killed" err
'
test_expect_success 'start -s 2: a broker lost after bootstrap stops all' '
	env FLUX_BROKER_PATH="$PMIBROKER" FAKE_BROKER_MODE=kill1 \
		"$FLUX" start -s 2 sleep 30 2>err;
	test $? = 143 &&
	grep "flux-start: rank 1: Killed" err &&
	grep "flux-start: rank 1 failed: stopping the instance" err
'
test_expect_success 'start -s 2 --test-exit-mode=leader: it is only reported' '
	env FLUX_BROKER_PATH="$PMIBROKER" FAKE_BROKER_MODE=kill1 \
		"$FLUX" start -s 2 --test-exit-mode=leader \
		sh -c "sleep 0.5; exit 4" 2>err;
	test $? = 4 &&
	grep "flux-start: rank 1: Killed" err &&
	! grep "stopping the instance" err &&
	test_must_fail "$FLUX" start -s 2 --test-exit-mode=all true 2>mode.err &&
	grep "must be any or leader" mode.err
'
test_expect_success 'start -s 2: a PMI abort stops all, with its exit code' '
	test_expect_code 7 env FLUX_BROKER_PATH="$PMIBROKER" \
		FAKE_BROKER_MODE=abort1 "$FLUX" start -s 2 sleep 30 2>err &&
	grep "rank 1: PMI abort (exit code 7): rank one gives up" err
'
test_expect_success 'start -s 2: brokers left after rank 0 exits get SIGKILL' '
	FLUX_BROKER_PATH="$PMIBROKER" FAKE_BROKER_MODE=sleep1 \
		"$FLUX" start -s 2 --test-exit-timeout=0.2s true 2>err &&
	grep "still running after 0.2s: sending SIGKILL" err
'
test_expect_success 'start -s 2: SIGTERM is forwarded to the brokers' '
	(FLUX_BROKER_PATH="$PMIBROKER" FAKE_BROKER_MODE=sleepall \
		"$FLUX" start -s 2 true & echo $! >start.pid; wait $! ;
	 echo $? >start.status) &
	sleep 0.5 &&
	kill -TERM $(cat start.pid) &&
	i=0 &&
	while ! test -s start.status && test $i -lt 100; do
		sleep 0.1; i=$((i + 1))
	done &&
	test "$(cat start.status)" = 143
'
test_expect_success 'start reports a missing broker' '
	test_expect_code 1 env FLUX_BROKER_PATH="$PWD/nosuch" "$FLUX" start \
		true 2>err &&
	grep "nosuch: No such file" err &&
	test_expect_code 1 env FLUX_BROKER_PATH="$PWD/nosuch" "$FLUX" start \
		-s 2 true 2>err &&
	grep "nosuch: No such file" err
'

# --- keygen --------------------------------------------------------------

test_expect_success 'keygen writes a CURVE certificate, mode 0600' '
	"$FLUX" keygen cert &&
	test "$(stat -c %a cert)" = 600 &&
	grep -x "curve" cert &&
	grep -E "^    public-key = \".{40}\"$" cert &&
	grep -E "^    secret-key = \".{40}\"$" cert
'
test_expect_success 'keygen --name and --meta go to the metadata' '
	"$FLUX" keygen --name=foo --meta=site=lab cert2 &&
	grep -x "    name = \"foo\"" cert2 &&
	grep -x "    site = \"lab\"" cert2
'
test_expect_success 'keygen makes a new key pair each time' '
	"$FLUX" keygen cert3 &&
	test "$(grep secret-key cert)" != "$(grep secret-key cert3)"
'
test_expect_success 'keygen usage errors' '
	test_expect_code 1 "$FLUX" keygen 2>err &&
	test_line_count = 1 err &&
	test_expect_code 1 "$FLUX" keygen --meta=x cert4 2>err &&
	grep "KEY=VALUE" err &&
	test_expect_code 1 "$FLUX" keygen nodir/cert 2>err &&
	grep "No such file" err
'

test_done
