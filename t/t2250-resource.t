#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='resource module and flux resource: discovery on 1 and
4 brokers, a configured R of 1024 nodes, exclude, drain/undrain and their
errors, persistence across a restart, the resource.acquire stream, the
journal, and a lost broker going offline'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"
ACQ="$FLUX_BUILD_DIR/t/resource-acquire"
MODULES=content,content-sqlite@0,kvs,kvs-watch,resource
HOST=$(hostname)

# R of 1024 nodes of 64 cores
cat >R1024.json <<-EOF
{"version":1,"execution":{"R_lite":[{"rank":"0-1023","children":
{"core":"0-63"}}],"starttime":0,"expiration":0,"nodelist":["node[0-1023]"]}}
EOF

# wait_for FILE N: wait (up to 15s) until FILE has N lines
wait_for () {
	for i in $(seq 150); do
		test "$(wc -l <$1)" -ge $2 && return 0
		sleep 0.1
	done
	echo "$1 has $(wc -l <$1) lines, not $2:" >&2
	cat $1 >&2
	return 1
}

test_expect_success '1 broker: R is discovered with hwloc' '
	flux start -s 1 -Sbroker.modules=$MODULES \
		sh -c "flux resource R && flux resource info" >one.out &&
	head -1 one.out >R1.json &&
	jq -e ".version == 1" R1.json &&
	test "$(jq -r ".execution.R_lite[0].rank" R1.json)" = 0 &&
	test "$(jq -r ".execution.nodelist[0]" R1.json)" = "$HOST" &&
	jq -r ".execution.R_lite[0].children.core" R1.json >cores &&
	test -s cores &&
	grep -E "^1 Node, [0-9]+ Cores?, [0-9]+ GPUs?$" one.out
'

# One instance of 4 brokers for most of the tests below (start_instance),
# stopped by the last test.
test_expect_success 'start an instance of 4 brokers with the resource module' '
	start_instance broker 4 -Stbon.topo=kary:2 --test-exit-mode=leader \
		-Sbroker.modules=$MODULES &&
	flux resource status >/dev/null
'
test_expect_success '4 brokers: R has ranks 0-3, each with the same cores' '
	flux resource R >R4.json &&
	test "$(jq -r ".execution.R_lite | length" R4.json)" = 1 &&
	test "$(jq -r ".execution.R_lite[0].rank" R4.json)" = 0-3 &&
	test "$(jq -r ".execution.R_lite[0].children.core" R4.json)" = \
		"$(cat cores)" &&
	jq -r ".execution.nodelist[]" R4.json >nodelist &&
	echo "$HOST,$HOST,$HOST,$HOST" >nodelist.exp &&
	test_cmp nodelist.exp nodelist
'
test_expect_success '4 brokers: resource.R and resource-define are in the KVS' '
	flux kvs get resource.R >kvsR.json &&
	jq -e ".execution.R_lite[0].rank == \"0-3\"" kvsR.json &&
	flux kvs get resource.eventlog >eventlog &&
	grep "\"name\":\"resource-define\".*dynamic-discovery" eventlog
'
test_expect_success '4 brokers: rank 0 heard one message per TBON child' '
	$RPC -r 0 resource.stats-get >stats0 &&
	jq -e ".\"watch-rx\" == 2 and .online == \"0-3\"" stats0 &&
	jq -e ".rx.request > 0 and (.tx | keys) == [\"control\", \"event\", \"request\", \"response\"]" stats0 &&
	$RPC -r 1 resource.stats-get >stats1 &&
	jq -e ".online == \"1,3\" and .\"watch-tx\" == 1" stats1
'
test_expect_success 'flux resource status: all online' '
	flux resource status >status.out &&
	grep -E "^ +online +4 0-3 " status.out &&
	test_line_count = 2 status.out
'
test_expect_success 'flux resource list: all free, nothing allocated or down' '
	flux resource list -n -o "{state} {nnodes} {ranks}" >list.out &&
	printf "free 4 0-3\nallocated 0\ndown 0\n" >list.exp &&
	test_cmp list.exp list.out
'
test_expect_success 'resource.sched-status without a job manager: allocated empty' '
	$RPC -r 0 resource.sched-status >ss.json &&
	jq -e ".allocated.execution.R_lite == [] and
		.all.execution.R_lite[0].rank == \"0-3\" and
		.down.execution.R_lite == []" ss.json
'
test_expect_success 'drain a target with a reason; list drained targets' '
	flux resource drain 1 bad fan &&
	flux resource drain >drained.out &&
	grep -E "^TIMESTAMP +STATE +RANKS +REASON +NODELIST" drained.out &&
	grep -E " drained +1 +bad fan +$HOST$" drained.out &&
	flux resource status -s drained -n -o "{state} {ranks}" >st.out &&
	echo "drained 1" >st.exp &&
	test_cmp st.exp st.out &&
	flux resource list -n -s down -o "{state} {ranks}" >down.out &&
	echo "down 1" >down.exp &&
	test_cmp down.exp down.out
'
test_expect_success 'the drain event is in resource.eventlog (RFC 44)' '
	flux kvs get resource.eventlog | grep "\"name\":\"drain\"" >ev &&
	jq -e ".context.idset == \"1\" and .context.reason == \"bad fan\" and
		.context.overwrite == 0 and .context.nodelist == \"$HOST\"" ev
'
test_expect_success 'draining a drained target fails (EEXIST) unless -f or -u' '
	test_must_fail flux resource drain 1 again 2>eexist.err &&
	grep "ranks 1 already drained" eexist.err &&
	flux resource drain -u 1-2 second &&
	flux resource drain >d2.out &&
	grep -E " 1 +bad fan " d2.out &&
	grep -E " 2 +second " d2.out &&
	flux resource drain -f 1 third &&
	flux resource drain | grep -E " 1 +third " &&
	flux kvs get resource.eventlog | tail -1 | jq -e ".context.overwrite == 1"
'
test_expect_success 'drain -ff overwrites the timestamp too' '
	flux resource drain -f -f 2 fourth &&
	flux kvs get resource.eventlog | tail -1 | jq -e ".context.overwrite == 2"
'
test_expect_success 'the drained list takes --format and --no-header' '
	flux resource drain -n -o "{ranks}:{nnodes}:{state}:{reason}" \
		>d3.out &&
	cat >d3.exp <<-EOF &&
	1:1:drained:third
	2:1:drained:fourth
	EOF
	sort d3.out >d3.sorted &&
	test_cmp d3.exp d3.sorted &&
	flux resource drain -o "{timestamp:>22}|{nodelist}" >d4.out &&
	head -1 d4.out | grep -E "^ +TIMESTAMP\|NODELIST$" &&
	grep -E "^ {3}[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\|$HOST$" d4.out &&
	test_must_fail flux resource drain -o "{bogus}" 2>d5.err &&
	grep "unknown format field .bogus." d5.err &&
	test_must_fail flux resource drain -n 1 why 2>d6.err &&
	grep "only apply to the list" d6.err
'
test_expect_success 'drain errors: bad targets, no targets, bad mode, bad payload' '
	test_must_fail flux resource drain 9 2>e1 &&
	grep "ranks 9 do not exist" e1 &&
	test_must_fail flux resource drain nosuchhost 2>e2 &&
	grep "unknown host nosuchhost" e2 &&
	test_must_fail flux resource drain "[]" 2>e3 &&
	grep "no targets" e3 &&
	test_must_fail flux resource drain -f -u 1 2>e4 &&
	grep "cannot be used together" e4 &&
	test_expect_code 22 $RPC -r 0 resource.drain \
		"{\"targets\":\"3\",\"mode\":\"bogus\"}" 2>e5 &&
	test_expect_code 71 $RPC -r 0 resource.drain "{\"targets\":3}" 2>e6 &&
	test_expect_code 71 $RPC -r 0 resource.drain \
		"{\"targets\":\"3\",\"extra\":1}" 2>e7 &&
	test_expect_code 71 $RPC -r 0 resource.status "[]" 2>e8
'
test_expect_success 'undrain: not drained is EEXIST unless -f' '
	test_must_fail flux resource undrain 3 2>u1 &&
	grep "ranks 3 not drained" u1 &&
	test_must_fail flux resource undrain 2-3 2>u2 &&
	flux resource drain | grep -E " 2 +fourth " &&
	flux resource undrain -f 1-3 all fixed &&
	flux resource drain >d3.out &&
	test_line_count = 1 d3.out &&
	flux kvs get resource.eventlog | tail -1 >undrain.ev &&
	jq -e ".name == \"undrain\" and .context.idset == \"1-2\" and
		.context.reason == \"all fixed\"" undrain.ev
'
test_expect_success 'drain by host name drains every rank of that host' '
	flux resource drain $HOST whole host &&
	flux resource status -s drained -n -o "{ranks}" >h.out &&
	echo 0-3 >h.exp &&
	test_cmp h.exp h.out &&
	flux resource undrain $HOST
'
test_expect_success 'rank 0 services are refused elsewhere (EPROTO)' '
	test_expect_code 71 $RPC -r 1 resource.status 2>r1.err &&
	grep "served on rank 0 only" r1.err
'
test_expect_success 'resource.acquire: first {resources, up}, then up/down' '
	$ACQ -n 5 >acq.out &
	echo $! >acq.pid &&
	wait_for acq.out 1 &&
	flux resource drain 2 &&
	wait_for acq.out 2 &&
	flux resource drain 1 &&
	wait_for acq.out 3 &&
	flux resource undrain 1-2 &&
	wait_for acq.out 4 &&
	head -1 acq.out >first.json &&
	jq -e ".up == \"0-3\" and .resources.execution.R_lite[0].rank == \"0-3\"" \
		first.json &&
	sed -n 2,4p acq.out >updates &&
	printf "{\"down\":\"2\"}\n{\"down\":\"1\"}\n{\"up\":\"1-2\"}\n" \
		>updates.exp &&
	test_cmp updates.exp updates
'
test_expect_success 'a second acquirer is refused with EBUSY' '
	test_expect_code 16 $ACQ -n 1 2>busy.err &&
	grep "already acquired" busy.err
'
test_expect_success 'a non-streaming acquire is EPROTO' '
	test_expect_code 71 $RPC -r 0 resource.acquire 2>ns.err &&
	grep "streaming" ns.err
'
test_expect_success 'the acquirer disconnects: another may acquire, and cancel' '
	kill $(cat acq.pid) && wait $(cat acq.pid) 2>/dev/null;
	for i in $(seq 50); do
		$ACQ -n 1 -c >acq2.out 2>acq2.err && break; sleep 0.1
	done &&
	tail -1 acq2.out | grep ENODATA &&
	$ACQ -n 1 -c >acq3.out &&
	head -1 acq3.out | jq -e ".up == \"0-3\""
'
test_expect_success 'resource.journal: the backlog, then the sentinel' '
	$ACQ -t resource.journal -n 2 -c >journal.out &&
	head -1 journal.out >backlog.json &&
	jq -e ".events[0].name == \"restart\" and
		.events[0].context.ranks == \"0-3\"" backlog.json &&
	jq -e "[.events[].name] | index(\"resource-define\") != null" \
		backlog.json &&
	jq -e ".R.execution.R_lite[0].rank == \"0-3\"" backlog.json &&
	jq -e "[.events[] | select(.name == \"online\") | .context.idset] |
		length >= 1" backlog.json &&
	sed -n 2p journal.out >sentinel &&
	echo "{\"events\":[]}" >sentinel.exp &&
	test_cmp sentinel.exp sentinel &&
	tail -1 journal.out | grep ENODATA
'
# wait_status STATE RANKS: wait (up to 10s) until STATE holds exactly RANKS
wait_status () {
	for i in $(seq 100); do
		test "$(flux resource status -s $1 -n -o {ranks})" = "$2" && return 0
		sleep 0.1
	done
	flux resource status >&2
	return 1
}
test_expect_success 'resource module reloaded on rank 1: its subtree goes and comes back' '
	$ACQ -n 3 >acqr.out &
	echo $! >acqr.pid &&
	wait_for acqr.out 1 &&
	$RPC -r 1 module.remove "{\"name\":\"resource\"}" &&
	wait_status offline 1,3 &&
	wait_for acqr.out 2 &&
	$RPC -r 1 module.load "{\"path\":\"resource\"}" &&
	wait_status online 0-3 &&
	wait_for acqr.out 3 &&
	sed -n 2,3p acqr.out >reload &&
	printf "{\"down\":\"1,3\"}\n{\"up\":\"1,3\"}\n" >reload.exp &&
	test_cmp reload.exp reload &&
	wait $(cat acqr.pid)
'
test_expect_success 'a broker killed: its rank goes offline' '
	$ACQ -t resource.journal >jstream.out &
	echo $! >j.pid &&
	$ACQ -n 3 >acq4.out &
	echo $! >acq4.pid &&
	wait_for acq4.out 1 &&
	pid=$($RPC -r 3 attr.get "{\"name\":\"broker.pid\"}" | jq -r .value) &&
	kill -9 $pid &&
	wait_for acq4.out 2 &&
	sed -n 2p acq4.out >down3 &&
	echo "{\"down\":\"3\"}" >down3.exp &&
	test_cmp down3.exp down3 &&
	flux resource status >st2.out &&
	grep -E "^ +online +3 0-2 " st2.out &&
	grep -E "^ +offline +1 3 " st2.out &&
	flux resource list -n -s down -o "{state} {ranks}" >down4.out &&
	echo "down 3" >down4.exp &&
	test_cmp down4.exp down4.out &&
	wait_for jstream.out 3 &&
	grep "\"name\":\"offline\",\"context\":{\"idset\":\"3\"}" jstream.out &&
	kill $(cat j.pid) $(cat acq4.pid)
'
test_expect_success 'stop the instance' '
	stop_instance broker 2>/dev/null; true
'

test_expect_success '16 brokers: an interior broker lost takes its subtree offline' '
	cat >interior.sh <<-EOT &&
	flux resource R >R16.json || exit 1
	$RPC -r 0 resource.stats-get >stats16 || exit 1
	pid=\$($RPC -r 1 attr.get "{\"name\":\"broker.pid\"}" | jq -r .value)
	kill -9 \$pid
	for i in \$(seq 100); do
		flux resource status -s offline -n -o "{ranks}" >off16 &&
		test "\$(cat off16)" = "1,3-4,7-10,15" && break
		sleep 0.1
	done
	flux resource status -s online -n -o "{ranks}" >on16
	EOT
	flux start -s 16 -Stbon.topo=kary:2 --test-exit-mode=leader \
		-Sbroker.modules=$MODULES sh interior.sh &&
	jq -e ".\"watch-rx\" == 2" stats16 &&
	jq -e ".execution.R_lite[0].rank == \"0-15\"" R16.json &&
	echo "1,3-4,7-10,15" >off16.exp &&
	test_cmp off16.exp off16 &&
	echo "0,2,5-6,11-14" >on16.exp &&
	test_cmp on16.exp on16
'

test_expect_success 'configured R: 1024 nodes of 64 cores, forced up' '
	flux start -s 1 -Sbroker.modules=$MODULES \
		-Sresource.path=R1024.json -Sresource.monitor-force-up=1 \
		sh -c "flux resource info && flux resource list &&
			flux resource status &&
			flux kvs get resource.eventlog" >c1.out &&
	grep "^1024 Nodes, 65536 Cores, 0 GPUs$" c1.out &&
	grep -E "^ +free +1024 +65536 +0 node\[0-1023\]$" c1.out &&
	grep -E "^ +online +1024 0-1023 +node\[0-1023\]$" c1.out &&
	grep "resource-define.*configuration" c1.out
'
test_expect_success 'configured R without force-up: ranks with no broker are offline' '
	flux start -s 2 -Sbroker.modules=$MODULES -Sresource.path=R1024.json \
		sh -c "for i in \$(seq 100); do
			flux resource status -n -o \"{state} {nnodes} {ranks}\" \
				>c2.out || exit 1
			grep -q \"^online 2 \" c2.out && exit 0; sleep 0.1
		done" &&
	printf "online 2 0-1\noffline 1022 2-1023\n" >c2.exp &&
	test_cmp c2.exp c2.out
'
test_expect_success 'exclude: targets are not given to the scheduler' '
	flux start -s 1 -Sbroker.modules=$MODULES \
		-Sresource.path=R1024.json -Sresource.monitor-force-up=1 \
		-Sresource.exclude=1000-1023 \
		sh -c "flux resource info &&
			flux resource status -s excluded -n &&
			$ACQ -n 1 &&
			! flux resource drain 1010 2>ex.err &&
			flux resource drain node[5-9] maint &&
			flux resource list -n -s down -o \"{nnodes} {nodelist}\"" \
		>c3.out &&
	grep "^1000 Nodes, 64000 Cores, 0 GPUs$" c3.out &&
	grep -E "^ +excluded +24 1000-1023 +node\[1000-1023\]$" c3.out &&
	grep "\"up\":\"0-999\"" c3.out &&
	grep "ranks 1010 are excluded" ex.err &&
	grep "^5 node\[5-9\]$" c3.out
'
test_expect_success 'a bad configured R or exclude stops the instance' '
	echo "{\"version\":1}" >bad.json &&
	test_must_fail flux start -s 1 -Sbroker.modules=$MODULES \
		-Sresource.path=bad.json true 2>bad.err &&
	grep "R:" bad.err &&
	test_must_fail flux start -s 1 -Sbroker.modules=$MODULES \
		-Sresource.path=R1024.json -Sresource.exclude=2000 true 2>bad2.err &&
	grep "resource.exclude" bad2.err
'
test_expect_success 'drains persist across a restart (eventlog replay)' '
	flux start -s 2 -Sstatedir=state -Sbroker.modules=$MODULES \
		flux resource drain 1 keep me &&
	flux start -s 2 -Sstatedir=state -Sbroker.modules=$MODULES \
		sh -c "flux resource drain &&
			flux resource status -s drained -n -o {ranks} &&
			for i in \$(seq 300); do
				flux kvs get resource.eventlog |
					grep -q \"resource-define.*kvs\" && break
				sleep 0.1
			done
			flux kvs get resource.eventlog" >restart.out &&
	grep -E " drained +1 +keep me " restart.out &&
	grep "^1$" restart.out &&
	grep "resource-define.*\"kvs\"" restart.out
'

test_done
