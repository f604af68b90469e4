#!/bin/sh
test_description='the content store (RFC 10): content and content-sqlite
modules, flux content, persistence across restarts, the checkpoint ordering
contract, a full disk and garbage requests'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"
PIPELINE="$FLUX_BUILD_DIR/src/modules/content/test/pipeline"
MODS="-Sbroker.modules=content,content-sqlite@0"

# blobref of stdin as sha1sum/sha256sum compute it
sha1ref () {
	echo "sha1-$(sha1sum | cut -d" " -f1)"
}

test_expect_success 'store and load on one broker' '
	echo hello >hello &&
	flux start $MODS sh -c "
		flux content store <hello >ref &&
		flux content load \$(cat ref) >hello.out" &&
	sha1ref <hello >ref.exp &&
	test_cmp ref.exp ref &&
	test_cmp hello hello.out
'
test_expect_success 'the same blob stored twice gives the same blobref' '
	flux start $MODS sh -c "
		flux content store <hello &&
		flux content store <hello" >twice &&
	test $(sort -u twice | wc -l) -eq 1
'
test_expect_success 'the empty blob' '
	flux start $MODS sh -c "
		flux content store </dev/null >ref &&
		flux content load \$(cat ref) >empty.out" &&
	echo sha1-da39a3ee5e6b4b0d3255bfef95601890afd80709 >empty.exp &&
	test_cmp empty.exp ref &&
	test_must_be_empty empty.out
'
test_expect_success 'an unknown blob is ENOENT, a bad blobref an error' '
	flux start $MODS sh -c "
		! flux content load sha1-0000000000000000000000000000000000000000 \
			2>enoent.err &&
		! flux content load sha1-XYZ 2>bad1.err &&
		! flux content load SHA1-f572d396fae9206628714fb2ce00f72e94f2258f \
			2>bad2.err &&
		! flux content load sha1f572d396fae9206628714fb2ce00f72e94f2258f \
			2>bad3.err &&
		! flux content load md5-f572d396fae9206628714fb2ce00f72e \
			2>bad4.err" &&
	grep "No such file or directory" enoent.err &&
	grep "not a valid blobref" bad1.err &&
	grep "not a valid blobref" bad2.err &&
	grep "not a valid blobref" bad3.err &&
	grep "not a valid blobref" bad4.err
'
test_expect_success 'a blob of another hash type than the instance is EPROTO' '
	flux start $MODS sh -c "
		! flux content load sha256-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
		2>type.err &&
	grep "20-byte sha1 digest" type.err
'
test_expect_success 'content.hash=sha256 makes sha256 blobrefs' '
	flux start -Scontent.hash=sha256 $MODS sh -c "
		flux content store <hello >ref256 &&
		flux content load \$(cat ref256) >hello256.out" &&
	echo "sha256-$(sha256sum <hello | cut -d" " -f1)" >ref256.exp &&
	test_cmp ref256.exp ref256 &&
	test_cmp hello hello256.out
'
test_expect_success 'a 10 MB blob stored on a leaf of 4 brokers loads on another' '
	dd if=/dev/urandom of=big bs=1M count=10 2>/dev/null &&
	flux start -s 4 $MODS sh -c "
		flux content store -r 3 <big >bigref &&
		flux content load -r 2 \$(cat bigref) >big.2 &&
		flux content load -r 0 \$(cat bigref) >big.0" &&
	sha1ref <big >bigref.exp &&
	test_cmp bigref.exp bigref &&
	cmp big big.2 &&
	cmp big big.0
'
test_expect_success '4 brokers: what one rank stores every rank loads' '
	flux start -s 4 $MODS sh -c "
		for r in 0 1 2 3; do
			echo blob-of-\$r | flux content store -r \$r >ref.\$r || exit 1
		done
		for r in 0 1 2 3; do
			for s in 0 1 2 3; do
				flux content load -r \$s \$(cat ref.\$r) || exit 1
			done
		done" >all.out &&
	for r in 0 1 2 3; do
		test $(grep -c "^blob-of-$r\$" all.out) -eq 4 || return 1
	done
'
test_expect_success 'a leaf caches what it loaded; dropcache empties it' '
	flux start -s 4 $MODS sh -c "
		ref=\$(echo cached | flux content store -r 0) &&
		flux content load -r 3 \$ref >/dev/null &&
		$RPC -r 3 content.stats-get >stats.before &&
		flux content dropcache -r 3 &&
		$RPC -r 3 content.stats-get >stats.after &&
		flux content load -r 3 \$ref" >cached.out &&
	grep "\"count\":1," stats.before &&
	grep "\"count\":0," stats.after &&
	echo cached >cached.exp &&
	test_cmp cached.exp cached.out
'
test_expect_success 'a leaf keeps its cache under purge-target-size' '
	flux start -s 4 -Scontent.purge-target-size=2000 $MODS sh -c "
		for i in \$(seq 20); do
			seq 100 | sed s/^/\$i./ | flux content store -r 3 || exit 1
		done >refs &&
		$RPC -r 3 content.stats-get >purge.stats &&
		for r in \$(cat refs); do
			flux content load -r 3 \$r >/dev/null || exit 1
		done" &&
	size=$(sed "s/.*\"size\":\([0-9]*\).*/\1/" purge.stats) &&
	test $size -le 2000 &&
	test $(wc -l <refs) -eq 20
'
test_expect_success 'flush needs a backing store on rank 0 (ENOSYS), not on leaves' '
	flux start -s 2 -Sbroker.modules=content sh -c "
		echo x | flux content store -r 1 >/dev/null &&
		flux content flush -r 1 &&
		! flux content flush -r 0 2>flush.err" &&
	grep "no backing store" flush.err
'
test_expect_success 'without a backing store blobs and the checkpoint stay in memory' '
	flux start -Sbroker.modules=content sh -c "
		ref=\$(flux content store <hello) &&
		flux content checkpoint put \$ref 3 &&
		flux content checkpoint get &&
		flux content load \$ref" >mem.out &&
	echo "$(cat ref.exp) 3" >mem.exp &&
	cat hello >>mem.exp &&
	test_cmp mem.exp mem.out
'
test_expect_success 'blobs and the checkpoint survive a restart (statedir)' '
	flux start -Sstatedir="$(pwd)/state1" $MODS sh -c "
		flux content store <hello >ref &&
		flux content store <big >bigref &&
		flux content checkpoint put \$(cat ref) 7" &&
	test -f state1/content.sqlite &&
	flux start -Sstatedir="$(pwd)/state1" $MODS sh -c "
		flux content checkpoint get &&
		flux content load \$(cat ref) &&
		flux content load \$(cat bigref) >big.restart" >restart.out &&
	echo "$(cat ref.exp) 7" >restart.exp &&
	cat hello >>restart.exp &&
	test_cmp restart.exp restart.out &&
	cmp big big.restart
'
test_expect_success 'checkpoint get --json prints the whole object' '
	flux start -Sstatedir="$(pwd)/state1" $MODS \
		flux content checkpoint get --json >cp.json &&
	grep "\"version\":1" cp.json &&
	grep "\"sequence\":7" cp.json &&
	grep "\"timestamp\":" cp.json
'
test_expect_success 'without statedir the database is in rundir and goes away' '
	flux start $MODS sh -c "
		flux content store <hello >/dev/null &&
		$RPC content-sqlite.stats-get" >nostate.stats &&
	grep "\"object_count\":1" nostate.stats &&
	dbfile=$(sed "s/.*\"dbfile\":\"\([^\"]*\)\".*/\1/" nostate.stats) &&
	test ! -e "$dbfile"
'
test_expect_success 'a sha1 database is refused by a sha256 instance' '
	test_might_fail flux start -Sstatedir="$(pwd)/state1" -Scontent.hash=sha256 \
		$MODS flux dmesg >refused.out 2>&1 &&
	grep "holds sha1 blobs" refused.out
'
test_expect_success 'checkpoint-put is answered only when every earlier store is durable' '
	flux start $MODS $PIPELINE -n 3000 >pipe1.out &&
	grep "^3000 blobs" pipe1.out &&
	flux start -Scontent.flush-batch-limit=2 $MODS $PIPELINE -n 1000 \
		>pipe2.out &&
	grep "^1000 blobs" pipe2.out
'
# The stores before the checkpoint are written lazily (no fsync), in
# batches as large as what has arrived; under load they may trickle in
# one per turn, so what is counted is the durable (synced) transactions:
# the 2000 writes and their checkpoint cost a handful of fsyncs, not one
# each.
test_expect_success 'group commit: many writes share a synced transaction' '
	flux start $MODS sh -c "
		$PIPELINE -n 2000 >/dev/null &&
		$RPC content-sqlite.stats-get" >group.stats &&
	commits=$(sed "s/.*\"commits\":\([0-9]*\).*/\1/" group.stats) &&
	lazy=$(sed "s/.*\"lazy_commits\":\([0-9]*\).*/\1/" group.stats) &&
	test $((commits - lazy)) -ge 1 &&
	test $((commits - lazy)) -lt 10
'
test_expect_success 'kill -9 right after an acknowledged checkpoint loses nothing' '
	rundir=$(mktemp -d) &&
	test_expect_code 137 flux start -Sstatedir="$(pwd)/state2" \
		-Srundir=$rundir $MODS \
		$PIPELINE -n 2000 -o killrefs -k >kill.out &&
	rm -rf $rundir &&
	grep "checkpoint acknowledged" kill.out &&
	flux start -Sstatedir="$(pwd)/state2" $MODS sh -c "
		flux content checkpoint get &&
		$PIPELINE -v killrefs" >afterkill.out &&
	grep "^$(tail -1 killrefs) 2000\$" afterkill.out &&
	grep "^2000 of 2000 blobs" afterkill.out
'
test_expect_success 'a reloaded content module gets its backing store back' '
	flux start -Sstatedir="$(pwd)/state4" $MODS sh -c "
		flux module reload content &&
		for i in \$(seq 50); do
			test \"\$(flux module stats content | jq -r .backing)\" = content-sqlite && break
			sleep 0.1
		done &&
		flux module stats content | jq -r .backing &&
		flux content store <hello >ref4 &&
		flux content checkpoint put \$(cat ref4) 9" >reload.out 2>reload.err &&
	test "$(cat reload.out)" = content-sqlite &&
	! grep -i "content-sqlite.*exited" reload.err &&
	flux start -Sstatedir="$(pwd)/state4" $MODS sh -c "
		flux content checkpoint get" >reload2.out &&
	test "$(cat reload2.out)" = "$(cat ref4) 9"
'
test_expect_success 'unloading content-sqlite writes out what is dirty first' '
	flux start -Sstatedir="$(pwd)/state3" $MODS sh -c "
		$PIPELINE -n 500 -o unloadrefs >/dev/null 2>&1 &
		sleep 0.1 &&
		flux module remove content-sqlite &&
		wait
		flux module load content-sqlite &&
		flux content flush" &&
	flux start -Sstatedir="$(pwd)/state3" $MODS sh -c "
		flux content dropcache &&
		$PIPELINE -v unloadrefs" >unload.out &&
	grep "^500 of 500 blobs" unload.out
'

# A full disk: a tiny tmpfs as statedir (needs root to mount).
if mkdir -p full && mount -t tmpfs -o size=1m tmpfs full 2>/dev/null; then
	test_set_prereq TMPFS
else
	say "skipping the full disk test: cannot mount a tmpfs"
fi
test_expect_success TMPFS 'a full disk gives ENOSPC and the broker keeps serving' '
	head -c 3000000 /dev/urandom >random3m &&
	flux start -Sstatedir="$(pwd)/full/state" $MODS sh -c "
		small=\$(echo small | flux content store) &&
		flux content flush &&
		flux content store <random3m >/dev/null &&
		! flux content flush 2>flush.err &&
		! flux content checkpoint put \$small 1 2>cp.err &&
		flux content load \$small &&
		$RPC content-sqlite.stats-get >/dev/null &&
		flux ping -c 1 broker >/dev/null &&
		echo still serving" >full.out 2>full.err
	umount full &&
	grep "full" flush.err &&
	grep "full" cp.err &&
	grep "^small\$" full.out &&
	grep "still serving" full.out
'
test_expect_success 'garbage to content.* and content-backing.* gets errors' '
	cat >garbage.sh <<-EOF &&
	code () { want=\$1; shift; $RPC "\$@" >/dev/null; test \$? -eq \$want; }
	ref=\$(flux content store <hello) &&
	v2="{\"value\":{\"version\":2,\"rootref\":\"\$ref\",\"sequence\":1,\"timestamp\":1.0}}" &&
	junk="{\"value\":{\"version\":1,\"rootref\":\"junk\",\"sequence\":1,\"timestamp\":1.0}}" &&
	code 71 content.load &&
	code 71 content.load xyz &&
	code 71 content.validate xyz &&
	code 71 content.checkpoint-put &&
	code 71 content.checkpoint-put {} &&
	code 71 content.checkpoint-put "{\"value\":1}" &&
	code 22 content.checkpoint-put "\$v2" &&
	code 22 content.checkpoint-put "\$junk" &&
	code 71 content.register-backing &&
	code 71 content.register-backing "{\"name\":1}" &&
	code 16 content.register-backing "{\"name\":\"other\"}" &&
	code 71 content-backing.load xyz &&
	code 71 content-backing.checkpoint-put "{\"value\":1}" &&
	code 0 content.flush &&
	code 0 content.stats-get &&
	flux content load \$ref &&
	$RPC broker.ping {} >/dev/null
	EOF
	flux start $MODS sh garbage.sh >garbage.out 2>garbage.err &&
	test_cmp hello garbage.out
'
test_expect_success 'a blob over content.blob-size-limit is EFBIG' '
	seq 1000 >hello.1k &&
	flux start -Scontent.blob-size-limit=1000 $MODS sh -c "
		seq 100 | flux content store >/dev/null &&
		! flux content store <big 2>efbig.err &&
		! flux content store -r 0 <hello.1k 2>>efbig.err" &&
	grep -c "exceeds the limit" efbig.err >efbig.count &&
	echo 2 >efbig.exp &&
	test_cmp efbig.exp efbig.count
'
test_expect_success 'unregister without a backing store is EINVAL' '
	flux start -Sbroker.modules=content \
		sh -c "$RPC content.unregister-backing; test \$? -eq 22"
'

test_expect_success 'content-sqlite synchronous=: FULL by default, NORMAL on request, a bad mode is refused' '
	flux start "-Sbroker.modules=content,content-sqlite@0" \
		$RPC content-sqlite.stats-get >sync.default &&
	jq -e ".synchronous == \"FULL\"" sync.default &&
	flux start "-Sbroker.modules=content,content-sqlite@0 synchronous=normal" \
		sh -c "echo sync | flux content store &&
			$RPC content-sqlite.stats-get" >sync.out &&
	tail -1 sync.out | jq -e ".synchronous == \"NORMAL\"" &&
	test_must_fail flux start \
		"-Sbroker.modules=content,content-sqlite@0 synchronous=fast" \
		true 2>sync.err &&
	grep "synchronous=fast: use OFF, NORMAL, FULL or EXTRA" sync.err
'

# Blobs of 256 bytes or more go to the file compressed (zstd) unless
# compression=none; either kind reads back after a restart, whatever the
# setting then.
test_expect_success 'content-sqlite compresses big blobs; compression=none does not; both read back' '
	rm -rf sdz && mkdir sdz &&
	printf "%s\n" $(seq 1 400) >big.blob &&
	echo small >small.blob &&
	flux start -Sstatedir="$PWD/sdz" sh -c "
		flux content store <big.blob >big.ref &&
		flux content store <small.blob >small.ref &&
		flux content flush &&
		$RPC content-sqlite.stats-get" >z.stats &&
	jq -e ".compression == \"zstd\" and .stored.compressed >= 1" z.stats &&
	jq -e ".stored.file_bytes < .stored.bytes" z.stats &&
	flux start -Sstatedir="$PWD/sdz" \
		"-Sbroker.modules=content,content-sqlite@0 compression=none" sh -c "
		flux content load \$(cat big.ref) >big.out &&
		flux content load \$(cat small.ref) >small.out &&
		printf \"%s\\n\" \$(seq 401 800) | flux content store >big2.ref &&
		flux content flush &&
		$RPC content-sqlite.stats-get" >n.stats &&
	test_cmp big.blob big.out &&
	test_cmp small.blob small.out &&
	jq -e ".compression == \"none\" and .stored.compressed == 0" n.stats &&
	jq -e ".stored.file_bytes == .stored.bytes and .stored.bytes > 0" n.stats &&
	flux start -Sstatedir="$PWD/sdz" sh -c "
		flux content load \$(cat big2.ref)" >big2.out &&
	printf "%s\n" $(seq 401 800) >big2.exp &&
	test_cmp big2.exp big2.out &&
	test_must_fail flux start \
		"-Sbroker.modules=content,content-sqlite@0 compression=lz4" \
		true 2>z.err &&
	grep "compression=lz4: expected zstd or none" z.err
'

# Offline garbage collection: every version of every directory stays in
# the store; flux shutdown --gc has the next start keep what the KVS
# reaches from its checkpoint, and nothing of it is lost (the dumps
# before and after are the same but for the eventlog the resource
# module appends to at each start).
test_expect_success 'flux shutdown --gc: the next start keeps only what the KVS reaches' '
	rm -rf sdgc && mkdir sdgc &&
	flux start -Sstatedir="$PWD/sdgc" sh -c "
		for i in \$(seq 1 60); do
			flux kvs put d.k\$i=\$i-$(printf %0300d 0) || exit 1
		done &&
		flux kvs unlink -R d && flux kvs put keep.a=1 keep.b.c=2 &&
		flux kvs link keep.a keep.l &&
		flux kvs put big=$(printf %02000d 7) &&
		flux module stats content-sqlite | jq .object_count >before.count &&
		flux dump before.tar &&
		flux shutdown --gc; sleep 30" 2>gc1.err &&
	grep "will be garbage collected at the next start" gc1.err &&
	test -e sdgc/content.sqlite.gc &&
	flux start -Sstatedir="$PWD/sdgc" sh -c "
		flux dmesg | grep \"garbage collection: kept\" &&
		flux module stats content-sqlite >gc.stats &&
		jq .object_count gc.stats >after.count &&
		flux dump after.tar && flux kvs get keep.b.c" >gc2.out &&
	test ! -e sdgc/content.sqlite.gc &&
	echo "objects: $(cat before.count) before, $(cat after.count) after" &&
	jq -e ".gc.kept > 0 and .gc.kept <= $(cat after.count)
		and .gc.before >= $(cat before.count)
		and .gc.file_after < .gc.file_before and .gc_requested == false" \
		gc.stats &&
	test $(cat after.count) -gt 0 &&
	test $(($(cat after.count) * 10)) -lt $(cat before.count) &&
	tar tf before.tar >before.list && tar tf after.tar >after.list &&
	test_cmp before.list after.list &&
	rm -rf before.d after.d && mkdir before.d after.d &&
	tar xf before.tar -C before.d && tar xf after.tar -C after.d &&
	diff -r --no-dereference -x eventlog before.d after.d &&
	test -L after.d/keep/l && test $(cat after.d/big) = $(printf %02000d 7) &&
	tail -1 gc2.out | grep "^2$"
'
test_expect_success 'flux shutdown --skip-gc cancels it; the next start collects nothing' '
	flux start -Sstatedir="$PWD/sdgc" sh -c "
		$RPC content-sqlite.gc {} >/dev/null &&
		test -e sdgc/content.sqlite.gc &&
		flux module stats content-sqlite |
			jq -e \".gc_requested and .gc == null\" >/dev/null &&
		touch skip.asked && flux shutdown --skip-gc; sleep 30" &&
	test -e skip.asked &&
	test ! -e sdgc/content.sqlite.gc &&
	flux start -Sstatedir="$PWD/sdgc" flux dmesg >gc3.out &&
	! grep "garbage collection" gc3.out
'
# A kvs (or a content cache) that lived through a collection would know
# blobs as stored that the collection dropped, and never store them again.
test_expect_success 'a collection is refused while the instance runs, kept for the next start' '
	rm -rf sdrun && mkdir sdrun &&
	flux start -Sstatedir="$PWD/sdrun" sh -c "
		flux kvs put a=1 && flux kvs put a=2 &&
		flux module remove content-sqlite &&
		flux module load content-sqlite gc &&
		$RPC content-sqlite.gc {} >/dev/null &&
		flux module reload content-sqlite &&
		flux dmesg | grep \"garbage collection\" &&
		flux kvs put b=3 && flux kvs get a" >run.out &&
	grep "only as the instance starts (the kvs is loaded): not done" run.out &&
	grep "only as the instance starts (the kvs is loaded): kept for the next start" run.out &&
	! grep "garbage collection: kept" run.out &&
	test -e sdrun/content.sqlite.gc &&
	flux start -Sstatedir="$PWD/sdrun" sh -c "
		flux dmesg | grep -c \"garbage collection: kept\" &&
		flux kvs get a && flux kvs get b" >run2.out &&
	printf "1\n2\n3\n" >run2.exp && test_cmp run2.exp run2.out &&
	test ! -e sdrun/content.sqlite.gc
'
test_expect_success 'flux shutdown --gc without a statedir, or not on rank 0, is refused, and shuts nothing down' '
	flux start sh -c "flux shutdown --gc; echo rc=\$?;
		flux getattr rank" >gc4.out 2>gc4.err &&
	grep "is not kept (no statedir)" gc4.err &&
	printf "rc=1\n0\n" >gc4.exp && test_cmp gc4.exp gc4.out &&
	test_must_fail flux shutdown --gc --skip-gc 2>gc5.err &&
	grep "exclusive" gc5.err &&
	flux start -s 2 -Sstatedir="$PWD/sdgc" sh -c "
		FLUX_URI=\$($RPC -r 1 attr.get {\\\"name\\\":\\\"local-uri\\\"} |
			jq -r .value) flux shutdown --gc; test \$? -eq 1" 2>gc7.err &&
	grep "shutdown must be sent to rank 0" gc7.err &&
	test ! -e sdgc/content.sqlite.gc
'
test_expect_success 'content-sqlite.gc: a bad payload is EPROTO' '
	flux start -Sstatedir="$PWD/sdgc" sh -c "
		$RPC content-sqlite.gc {\\\"cancel\\\":3}; echo rc=\$?;
		$RPC content-sqlite.gc; echo rc=\$?" >gc6.out 2>&1 &&
	test $(grep -c "expected {cancel?:b}" gc6.out) -eq 2 &&
	test $(grep -c "rc=71" gc6.out) -eq 2
'

test_done
