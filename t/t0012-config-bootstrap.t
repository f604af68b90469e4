#!/bin/sh
test_description='tbon.topo (kary:N, binomial, custom, the tbon.fanout
alias, default kary:32) and config-file bootstrap: brokers started by hand,
each with its own hostname, from one config file, form one instance'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

# ---- tbon.topo under flux start ----

# tree SIZE ATTRS...: the overlay status tree of an instance, hosts cut.
# overlay status gives each rank 0.5 s by default, short on a loaded CI
# machine under ASAN: a slow answer is "unknown" and exit 1.
tree () {
	size=$1; shift
	timeout -k 5 60 flux start -s $size "$@" \
		sh -c "flux getattr tbon.topo; flux overlay status --timeout=30" >tree.raw &&
	sed -e "s/ [^ ]*: full$//" tree.raw
}

test_expect_success 'the default is flux-core'"'"'s kary:32 (flat at 4)' '
	tree 4 >default.out &&
	cat >default.exp <<-EOF &&
	kary:32
	0
	├─ 1
	├─ 2
	└─ 3
	EOF
	test_cmp default.exp default.out
'
test_expect_success 'kary:2' '
	tree 5 -Stbon.topo=kary:2 >kary2.out &&
	cat >kary2.exp <<-EOF &&
	kary:2
	0
	├─ 1
	│  ├─ 3
	│  └─ 4
	└─ 2
	EOF
	test_cmp kary2.exp kary2.out
'
test_expect_success 'tbon.fanout=2 is an alias of kary:2' '
	tree 5 -Stbon.fanout=2 >fanout.out &&
	test_cmp kary2.exp fanout.out
'
test_expect_success 'kary:0 is flat, kary:1 a chain' '
	tree 3 -Stbon.topo=kary:0 >kary0.out &&
	tail -n +2 kary0.out >kary0.tree &&
	printf "0\n├─ 1\n└─ 2\n" >kary0.exp &&
	test_cmp kary0.exp kary0.tree &&
	tree 3 -Stbon.topo=kary:1 >kary1.out &&
	tail -n +2 kary1.out >kary1.tree &&
	printf "0\n└─ 1\n   └─ 2\n" >kary1.exp &&
	test_cmp kary1.exp kary1.tree
'
test_expect_success 'binomial' '
	tree 8 -Stbon.topo=binomial >binomial.out &&
	cat >binomial.exp <<-EOF &&
	binomial
	0
	├─ 1
	├─ 2
	│  └─ 3
	└─ 4
	   ├─ 5
	   └─ 6
	      └─ 7
	EOF
	test_cmp binomial.exp binomial.out
'
test_expect_success 'tbon.topo from the config file' '
	printf "{\"tbon\":{\"topo\":\"kary:1\"}}\n" >topo.json &&
	tree 3 -c topo.json >cfgtopo.out &&
	head -1 cfgtopo.out | grep -x kary:1
'
# in a binomial tree children are not consecutive ranks (0: 1,2,4,8)
test_expect_success 'a job, the exec agents and resource follow a binomial tree' '
	timeout -k 5 120 flux start -s 16 -Stbon.topo=binomial sh -c \
		"flux run -N16 hostname && flux resource list -n -s free -o {nnodes}" \
		>binrun.out &&
	test $(wc -l <binrun.out) -eq 17 &&
	tail -1 binrun.out | grep -x 16
'
test_expect_success 'bad tbon.topo values are refused with a message' '
	# flux start may end by a signal when rank 1 fails before rank 0
	for t in kary kary:x kary:-1 mesh binomial:3 custom; do
		! timeout -k 10 30 flux start -s 2 -Stbon.topo=$t true 2>bad.err \
			|| return 1
		grep "tbon.topo" bad.err || return 1
	done &&
	! timeout -k 10 30 flux start -s 2 -Stbon.fanout=x true 2>badf.err &&
	grep "tbon.topo kary:x" badf.err
'

# ---- config-file bootstrap ----

# Ports for this run (another test run may be using others).
BASE=$((20000 + ($$ % 2000) * 8))
P0=$BASE
P1=$((BASE + 1))

# start_brokers CONF HOSTS...: the brokers of every host but the first,
# in the background, each its own rundir; their pids in brokers.pids.
start_brokers () {
	conf=$1; shift; shift
	: >brokers.pids
	for h in "$@"; do
		mkdir -p run-$h &&
		timeout -k 5 90 flux-broker -c $conf -Shostname=$h \
			-Srundir="$(pwd)/run-$h" >broker-$h.log 2>&1 &
		echo $! >>brokers.pids
	done
}
# wait_brokers: every background broker exited 0
wait_brokers () {
	rc=0
	for p in $(cat brokers.pids); do wait $p || rc=1; done
	return $rc
}

test_expect_success 'make the shared certificate' '
	flux keygen cert &&
	test "$(stat -c %a cert)" = 600
'
test_expect_success 'config: 4 hosts, a range, kary:2' '
	cat >boot.json <<-EOF
	{
	  "tbon": {"topo": "kary:2"},
	  "bootstrap": {
	    "curve_cert": "$(pwd)/cert",
	    "default_port": $P1,
	    "hosts": [
	      {"host": "fake0", "bind": "tcp://127.0.0.1:$P0",
	       "connect": "tcp://127.0.0.1:$P0"},
	      {"host": "fake1", "bind": "tcp://127.0.0.1:%p",
	       "connect": "tcp://127.0.0.1:%p"},
	      {"host": "fake[2-3]"}
	    ]
	  }
	}
	EOF
'
test_expect_success 'four brokers started by hand form one instance' '
	start_brokers boot.json fake0 fake1 fake2 fake3 &&
	mkdir -p run-fake0 &&
	timeout -k 5 90 flux-broker -c boot.json -Shostname=fake0 \
		-Srundir="$(pwd)/run-fake0" sh -c "
		flux getattr size &&
		flux getattr hostlist &&
		flux getattr tbon.topo &&
		flux overlay status --timeout=30 &&
		flux exec -r all flux getattr rank | sort -n | tr \"\n\" \" \" &&
		echo &&
		flux run -N4 hostname | wc -l
	" >boot.out 2>boot.err &&
	wait_brokers &&
	cat boot.out &&
	cat >boot.exp <<-EOF &&
	4
	fake[0-3]
	kary:2
	0 fake0: full
	├─ 1 fake1: full
	│  └─ 3 fake3: full
	└─ 2 fake2: full
	0 1 2 3 
	4
	EOF
	test_cmp boot.exp boot.out
'
test_expect_success 'custom: the hosts name their parents' '
	cat >custom.json <<-EOF &&
	{
	  "bootstrap": {
	    "curve_cert": "$(pwd)/cert",
	    "hosts": [
	      {"host": "fake0", "bind": "tcp://127.0.0.1:$P0",
	       "connect": "tcp://127.0.0.1:$P0"},
	      {"host": "fake1", "parent": "fake0"},
	      {"host": "fake2", "parent": "fake0", "bind": "tcp://127.0.0.1:$P1",
	       "connect": "tcp://127.0.0.1:$P1"},
	      {"host": "fake3", "parent": "fake2"}
	    ]
	  }
	}
	EOF
	start_brokers custom.json fake0 fake1 fake2 fake3 &&
	timeout -k 5 90 flux-broker -c custom.json -Shostname=fake0 \
		-Srundir="$(pwd)/run-fake0" sh -c "
		flux getattr tbon.topo &&
		flux overlay status --timeout=30 &&
		flux run -N4 hostname | wc -l
	" >custom.out 2>custom.err &&
	wait_brokers &&
	cat >custom.exp <<-EOF &&
	custom
	0 fake0: full
	├─ 1 fake1: full
	└─ 2 fake2: full
	   └─ 3 fake3: full
	4
	EOF
	test_cmp custom.exp custom.out
'
test_expect_success 'a host not in the list is refused' '
	test_must_fail timeout -k 10 30 flux-broker -c boot.json -Shostname=other \
		true 2>other.err &&
	grep "this host (other) is not in the list" other.err
'
test_expect_success 'a host listed twice, a bad range: refused' '
	cat >dup.json <<-EOF &&
	{"bootstrap": {"curve_cert": "$(pwd)/cert",
	  "hosts": [{"host": "fake[0-2]"}, {"host": "fake1"}]}}
	EOF
	test_must_fail timeout -k 10 30 flux-broker -c dup.json -Shostname=fake0 \
		true 2>dup.err &&
	grep "host fake1 is listed twice" dup.err &&
	cat >range.json <<-EOF &&
	{"bootstrap": {"curve_cert": "$(pwd)/cert",
	  "hosts": [{"host": "fake[0-x]"}]}}
	EOF
	test_must_fail timeout -k 10 30 flux-broker -c range.json -Shostname=fake0 \
		true 2>range.err &&
	grep "bad host" range.err
'
test_expect_success 'custom without parents in the config is refused' '
	test_must_fail timeout -k 10 30 flux-broker -c boot.json -Shostname=fake0 \
		-Stbon.topo=custom true 2>nocustom.err &&
	grep "tbon.topo custom" nocustom.err
'
test_expect_success 'a rogue broker with a key not the instance'"'"'s cannot join, and is logged' '
	flux keygen rogue &&
	cat >two.json <<-EOF &&
	{"bootstrap": {"curve_cert": "$(pwd)/cert",
	  "hosts": [{"host": "fake0", "bind": "tcp://127.0.0.1:$P0",
	             "connect": "tcp://127.0.0.1:$P0"}, {"host": "fake1"}]}}
	EOF
	sed "s|$(pwd)/cert|$(pwd)/rogue|" two.json >rogue.json &&
	mkdir -p run-r0 run-r1 &&
	{ timeout -k 2 8 flux-broker -c two.json -Shostname=fake0 \
		-Slog-stderr-level=6 -Sbroker.quorum-warn=1s \
		-Srundir="$(pwd)/run-r0" true >r0.log 2>&1 & } &&
	{ timeout -k 2 8 flux-broker -c rogue.json -Shostname=fake1 \
		-Srundir="$(pwd)/run-r1" >r1.log 2>&1 & } &&
	sleep 9 &&
	cat r0.log &&
	grep "refused unknown key\|handshake with a peer at .* failed" r0.log &&
	grep "still waiting for rank.* 1" r0.log &&
	! grep -i "quorum reached\|-> run" r0.log
'
test_done
