#!/bin/sh
test_description='the kvs module: put/get on 1 and 4 brokers, read your
writes across ranks, namespaces and guests, malformed requests, and no
acknowledged write lost when rank 0 is killed'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

K="$FLUX_BUILD_DIR/src/modules/kvs/test/kvstest"
MODS="-Sbroker.modules=content,content-sqlite@0,kvs"
EMPTY=sha1-c0a9faf907dda6216fd73bf81d0b3b21a1a8cb91
# in the scripts below: the content service gone (durable commits wait
# for it), and back
CONTENT_OFF="flux module remove content-sqlite && flux module remove content"
CONTENT_ON="flux module load content && flux module load content-sqlite"

# kvs_run N SCRIPT: run SCRIPT (sh) in an instance of N brokers
kvs_run () {
	n=$1; shift
	flux start -s $n $MODS sh "$@"
}

test_expect_success 'size 1: put, get, append, unlink, mkdir, symlink' '
	cat >basic.sh <<-EOT &&
	$K put a=1 b.c=2 b.d.e=3 || exit 1
	$K get a && $K get b.c && $K get b.d.e || exit 1
	$K append log=x && $K append log=y && $K get log || exit 1
	$K unlink a && $K mkdir m && $K link l b.d || exit 1
	$K get l.e || exit 1
	$K get -f 2 l || exit 1
	$K get a 2>a.err; echo "a: \$?"
	EOT
	kvs_run 1 basic.sh >basic.out &&
	cat >basic.exp <<-EOT &&
	1
	1
	2
	3
	2
	3
	xy
	4
	5
	6
	3
	{"data":{"target":"b.d"},"type":"symlink","ver":1}
	a: 2
	EOT
	test_cmp basic.exp basic.out
'
test_expect_success 'lookup errors: ENOENT, EISDIR, ENOTDIR, EINVAL' '
	cat >errs.sh <<-EOT &&
	$K put v=1 d.x=2 || exit 1
	$K get nosuch; echo "nosuch \$?"
	$K get v.x; echo "through a value \$?"
	$K get d; echo "dir \$?"
	$K get -f 1 v; echo "readdir value \$?"
	$K get -f 2 v; echo "readlink value \$?"
	$K get -f 1 d
	$K get -f 16 d.x
	EOT
	kvs_run 1 errs.sh >errs.out 2>errs.err &&
	cat >errs.exp <<-EOT &&
	1
	nosuch 2
	through a value 2
	dir 21
	readdir value 20
	readlink value 22
	{"data":{"x":{"data":"Mg==","type":"val","ver":1}},"type":"dir","ver":1}
	{"data":"Mg==","type":"val","ver":1}
	EOT
	test_cmp errs.exp errs.out
'
test_expect_success 'commit errors: ENOTDIR fails alone, root key EINVAL' '
	cat >cerr.sh <<-EOT &&
	$K put a=1 || exit 1
	$K put x=1 a.b=2; echo "enotdir \$?"
	$K get x; echo "x \$?"
	$K put .=1; echo "root \$?"
	$K append b.c=1 && $K mkdir dd && $K append dd=z; echo "append to dir \$?"
	EOT
	kvs_run 1 cerr.sh >cerr.out 2>cerr.err &&
	cat >cerr.exp <<-EOT &&
	1
	enotdir 20
	x 2
	root 22
	2
	3
	append to dir 21
	EOT
	test_cmp cerr.exp cerr.out
'
# The content service gone under the kvs (unloaded, or reloading): a
# commit's store waits for it to come back (content.online), and
# completes then.
test_expect_success 'the content service gone: a commit waits for it, then completes' '
	cat >nocontent.sh <<-EOT &&
	$K put a=1 || exit 1
	$CONTENT_OFF || exit 1
	$K put b=2 &
	pid=\$!
	sleep 0.5
	kill -0 \$pid || exit 1
	flux module load content || exit 1
	wait \$pid || exit 1
	flux dmesg | grep -q "content.write refused" || exit 1
	$K get b
	EOT
	kvs_run 1 nocontent.sh >nocontent.out 2>nocontent.err &&
	test "$(tail -n 1 nocontent.out)" = 2
'
# Write-behind (commit.c): a commit with no checkpoint (LAZY, another
# namespace) does not wait for the content service's answer; a
# checkpoint waits until every such write was answered.
test_expect_success 'the content service gone: LAZY and guest-namespace commits are answered, a durable one waits; nothing is lost' '
	rm -rf sd11 && mkdir sd11 &&
	cat >behind.sh <<-EOT &&
	$K put a=1 >/dev/null || exit 1
	$K rpc kvs.namespace-create "{\"namespace\":\"wb\",\"rootref\":\"$EMPTY\",\"owner\":-1,\"flags\":0}" >/dev/null || exit 1
	$CONTENT_OFF || exit 1
	$K -c 8 put lz=2 >/dev/null || exit 1
	$K -n wb put g=4 >/dev/null || exit 1
	$K get lz && $K -n wb get g || exit 1
	$K put d=3 >/dev/null &
	pid=\$!
	sleep 0.5
	kill -0 \$pid || exit 1
	$CONTENT_ON || exit 1
	wait \$pid || exit 1
	$K rpc kvs.stats-get | grep -q "\"checkpoints-deferred\":[1-9]" || exit 1
	EOT
	flux start -Sstatedir="$PWD/sd11" $MODS sh behind.sh >behind.out &&
	flux start -Sstatedir="$PWD/sd11" $MODS \
		sh -c "$K get lz && $K get d && $K -n wb get g" >>behind.out &&
	printf "2\n4\n2\n3\n4\n" >behind.exp &&
	test_cmp behind.exp behind.out
'
test_expect_success 'the content service gone: writes behind are bounded (256), then commits wait' '
	rm -rf sd12 && mkdir sd12 &&
	cat >bound.sh <<-EOT &&
	$K put a=1 >/dev/null || exit 1
	$CONTENT_OFF || exit 1
	$K -c 8 loop 300 bd >bound.acks &
	pid=\$!
	for i in \$(seq 300); do
		test \$(wc -l <bound.acks) -ge 256 && break
		sleep 0.1
	done
	sleep 0.5
	wc -l <bound.acks
	kill -0 \$pid || exit 1
	$CONTENT_ON || exit 1
	wait \$pid || exit 1
	wc -l <bound.acks
	$K put d=1 >/dev/null
	EOT
	flux start -Sstatedir="$PWD/sd12" $MODS sh bound.sh >bound.out &&
	printf "256\n300\n" >bound.exp &&
	test_cmp bound.exp bound.out &&
	flux start -Sstatedir="$PWD/sd12" $MODS $K verify 300 bd
'
test_expect_success 'size 4: put from every rank, read from every rank' '
	cat >ranks.sh <<-EOT &&
	for r in 0 1 2 3; do
		$K -r \$r put r\$r=v\$r >seq.\$r || exit 1
	done
	v=\$(cat seq.3)
	for r in 0 1 2 3; do
		$K -r \$r wait \$v || exit 1
		for w in 0 1 2 3; do $K -r \$r get r\$w || exit 1; done
	done
	EOT
	kvs_run 4 ranks.sh >ranks.out &&
	for r in 0 1 2 3; do printf "v0\nv1\nv2\nv3\n"; done >ranks.exp &&
	test_cmp ranks.exp ranks.out
'
test_expect_success 'size 4: a commit on rank N is visible on rank N at once' '
	cat >ryw.sh <<-EOT &&
	for i in 1 2 3 4 5 6 7 8 9 10; do
		for r in 1 2 3; do
			$K -r \$r put k\$r=\$i >/dev/null || exit 1
			test "\$($K -r \$r get k\$r)" = \$i || exit 1
		done
	done
	EOT
	kvs_run 4 ryw.sh
'
test_expect_success 'size 4: appends from several ranks stay in order' '
	cat >app.sh <<-EOT &&
	for i in 1 2 3 4 5 6 7 8; do
		$K -r \$((i % 4)) append log=\$i, >/dev/null || exit 1
	done
	$K -r 3 wait \$($K version) && $K -r 3 get log
	EOT
	kvs_run 4 app.sh >app.out &&
	echo "1,2,3,4,5,6,7,8," >app.exp &&
	test_cmp app.exp app.out
'
test_expect_success 'wait-version waits for the version, on any rank' '
	cat >wv.sh <<-EOT &&
	v=\$($K version)
	$K -r 2 wait \$((v + 2)) && echo done >wv.done &
	sleep 0.3
	test -e wv.done && exit 1
	$K -r 1 put a=1 >/dev/null && $K -r 3 put b=1 >/dev/null || exit 1
	wait \$! && test -e wv.done
	EOT
	kvs_run 4 wv.sh
'
test_expect_success 'setroot-pause holds root changes back on a rank' '
	cat >pause.sh <<-EOT &&
	$K put a=1 >/dev/null && $K -r 1 wait \$($K version) || exit 1
	$K -r 1 rpc kvs.setroot-pause >/dev/null || exit 1
	v=\$($K put a=2)
	$K -r 1 get a
	$K -r 1 wait \$v && echo done >p.done &
	sleep 0.3
	test -e p.done && exit 1
	$K -r 1 rpc kvs.setroot-unpause >/dev/null || exit 1
	wait \$! && $K -r 1 get a
	$K rpc kvs.setroot-pause; echo "rank 0: \$?"
	EOT
	kvs_run 2 pause.sh >pause.out 2>pause.err &&
	printf "1\n2\nrank 0: 22\n" >pause.exp &&
	test_cmp pause.exp pause.out
'
test_expect_success 'a forged root change is not kept; ranks resync from rank 0' '
	BOGUS=sha1-0000000000000000000000000000000000000000 &&
	cat >forge.sh <<-EOT &&
	forge () {
		flux event pub kvs.namespace-primary-setroot \
			"{\\"namespace\\":\\"primary\\",\\"rootseq\\":\$1,\\"rootref\\":\\"$BOGUS\\"}"
	}
	v=\$($K put a=1) && $K -r 3 wait \$v || exit 1
	# rank 2 follows primary once it used it (ranks learn a namespace,
	# and hear its events, when first asked)
	$K -r 2 get a >/dev/null || exit 1
	# a jump ahead: rank 3 asks rank 0 and keeps the real root
	forge 999999 && sleep 0.5 && $K -r 3 get a || exit 1
	# the next number with another root cannot be told from a real one:
	# the first lookup that cannot load it resyncs (rank 2), and so does
	# the real event with that number (rank 3, which looked nothing up)
	forge \$((v + 1)) && sleep 0.3
	$K -r 2 get a 2>/dev/null && exit 1
	sleep 0.3 && $K -r 2 get a || exit 1
	v=\$($K put a=2) && $K -r 3 wait \$v && $K -r 3 get a || exit 1
	v=\$($K -r 3 put a=3) && $K -r 2 get a
	EOT
	kvs_run 4 forge.sh >forge.out 2>forge.err &&
	printf "1\n1\n2\n3\n" >forge.exp &&
	test_cmp forge.exp forge.out
'
test_expect_success 'requests right behind a create wait for its root to load' '
	cat >nspipe.sh <<-EOT &&
	ref=\$($K store "{\"data\":{\"a\":{\"data\":\"\$(date +%s%N | base64)\",\"type\":\"val\",\"ver\":1}},\"type\":\"dir\",\"ver\":1}") || exit 1
	$K pipe kvs.namespace-create "{\"namespace\":\"p1\",\"rootref\":\"\$ref\",\"owner\":-1,\"flags\":0}" \
		kvs.commit "{\"namespace\":\"p1\",\"flags\":0,\"ops\":[{\"key\":\"x\",\"flags\":0,\"dirent\":{\"ver\":1,\"type\":\"val\",\"data\":\"MQ==\"}}]}" \
		kvs.lookup "{\"namespace\":\"p1\",\"key\":\"a\",\"flags\":0}" || exit 1
	$K -n p1 get x || exit 1
	$K pipe kvs.namespace-create "{\"namespace\":\"p2\",\"rootref\":\"sha1-0000000000000000000000000000000000000001\",\"owner\":-1,\"flags\":0}" \
		kvs.commit "{\"namespace\":\"p2\",\"flags\":0,\"ops\":[]}" \
		kvs.lookup "{\"namespace\":\"p2\",\"key\":\"a\",\"flags\":0}"
	EOT
	kvs_run 1 nspipe.sh >nspipe.out 2>nspipe.err &&
	cat >nspipe.exp <<-EOT &&
	kvs.namespace-create ok
	kvs.commit ok
	kvs.lookup ok
	1
	kvs.namespace-create errno 22
	kvs.commit errno 95
	kvs.lookup errno 95
	EOT
	test_cmp nspipe.exp nspipe.out
'
test_expect_success 'namespaces: create, list, use from any rank, remove' '
	cat >ns.sh <<-EOT &&
	$K rpc kvs.namespace-create "{\"namespace\":\"t1\",\"rootref\":\"$EMPTY\",\"owner\":-1,\"flags\":0}" || exit 1
	$K rpc kvs.namespace-create "{\"namespace\":\"t1\",\"rootref\":\"$EMPTY\",\"owner\":-1,\"flags\":0}"; echo "again \$?"
	$K -r 2 -n t1 put x=1 && $K -r 3 -n t1 wait 1 && $K -r 3 -n t1 get x || exit 1
	$K get x; echo "primary x \$?"
	$K -r 1 rpc kvs.namespace-list | grep -c t1
	($K -r 2 -n t1 wait 100 2>wait.err; echo "waiter \$?" >wait.out) &
	sleep 0.5
	$K rpc kvs.namespace-remove "{\"namespace\":\"t1\"}" || exit 1
	wait
	cat wait.out
	$K -n t1 get x; echo "removed \$?"
	$K -r 3 -n t1 get x; echo "removed on rank 3 \$?"
	$K rpc kvs.namespace-remove "{\"namespace\":\"t1\"}" && echo "absent ok"
	$K rpc kvs.namespace-remove "{\"namespace\":\"primary\"}"; echo "primary \$?"
	$K rpc kvs.namespace-create "{\"namespace\":\"t2\",\"rootref\":\"sha1-0000000000000000000000000000000000000000\",\"owner\":-1,\"flags\":0}"; echo "bad root \$?"
	$K -n nosuch put a=1; echo "no namespace \$?"
	$K -n t2 get a; echo "no namespace \$?"
	EOT
	kvs_run 4 ns.sh >ns.out 2>ns.err &&
	cat >ns.exp <<-EOT &&

	again 17
	1
	1
	primary x 2
	1

	waiter 95
	removed 95
	removed on rank 3 95

	absent ok
	primary 95
	bad root 22
	no namespace 95
	no namespace 95
	EOT
	test_cmp ns.exp ns.out
'
test_expect_success 'SYNC on a namespace other than primary is EINVAL' '
	cat >sync.sh <<-EOT &&
	$K rpc kvs.commit "{\"namespace\":\"primary\",\"flags\":4,\"ops\":[]}" >/dev/null || exit 1
	$K rpc kvs.namespace-create "{\"namespace\":\"s\",\"rootref\":\"$EMPTY\",\"owner\":-1,\"flags\":0}" >/dev/null || exit 1
	$K rpc kvs.commit "{\"namespace\":\"s\",\"flags\":4,\"ops\":[]}"; echo "sync \$?"
	EOT
	kvs_run 1 sync.sh >sync.out 2>sync.err &&
	echo "sync 22" >sync.exp &&
	test_cmp sync.exp sync.out
'
test_expect_success 'guests: their own namespace only (preset credentials)' '
	cat >guest.sh <<-EOT &&
	$K rpc kvs.namespace-create "{\"namespace\":\"g\",\"rootref\":\"$EMPTY\",\"owner\":4242,\"flags\":0}" >/dev/null || exit 1
	$K -g 4242 -n g put a=guest >/dev/null || exit 1
	$K -g 4242 -n g get a || exit 1
	$K -r 1 -g 4242 -n g get a || exit 1
	$K -g 4242 -n g append log=x >/dev/null || exit 1
	$K -g 4242 -n g mkdir d >/dev/null || exit 1
	$K -g 4242 -n g link l a; echo "symlink \$?"
	$K -g 4242 get a; echo "primary \$?"
	$K -g 4242 put a=1; echo "primary put \$?"
	$K -r 1 -g 4242 put a=1; echo "primary put rank 1 \$?"
	$K -g 4343 -n g get a; echo "other guest \$?"
	$K -r 1 -g 4343 -n g put a=x; echo "other guest put rank 1 \$?"
	$K -g 4242 -n g version
	$K -g 4242 rpc kvs.namespace-list; echo "list \$?"
	$K -g 4242 rpc kvs.stats-get >/dev/null; echo "stats \$?"
	$K -g 4242 rpc kvs.relaycommit "{}"; echo "relay \$?"
	$K -n g get a
	EOT
	kvs_run 2 guest.sh >guest.out 2>guest.err &&
	cat >guest.exp <<-EOT &&
	guest
	guest
	symlink 1
	primary 1
	primary put 1
	primary put rank 1 1
	other guest 1
	other guest put rank 1 1
	3
	list 1
	stats 1
	relay 1
	guest
	EOT
	test_cmp guest.exp guest.out
'
test_expect_success 'a real guest connection (uid 65534) is held to its namespace' '
	cat >realguest.sh <<-EOT &&
	chmod 755 \$(flux getattr rundir) || exit 1
	$K rpc kvs.namespace-create "{\"namespace\":\"ng\",\"rootref\":\"$EMPTY\",\"owner\":65534,\"flags\":0}" >/dev/null || exit 1
	G="setpriv --reuid=65534 --regid=65534 --clear-groups $K"
	\$G -n ng put a=nobody >/dev/null && \$G -n ng get a || exit 1
	\$G get a; echo "primary \$?"
	\$G -n ng link l a; echo "symlink \$?"
	EOT
	flux start -Saccess.allow-guest-user=true $MODS sh realguest.sh \
		>realguest.out 2>realguest.err &&
	printf "nobody\nprimary 1\nsymlink 1\n" >realguest.exp &&
	test_cmp realguest.exp realguest.out
'
test_expect_success 'malformed requests get EPROTO and kvs keeps serving' '
	cat >proto.sh <<-EOT &&
	$K put a=1 >/dev/null || exit 1
	for req in \
	    "kvs.lookup {}" \
	    "kvs.lookup {\"key\":\"a\",\"flags\":0}" \
	    "kvs.lookup {\"key\":1,\"flags\":0,\"namespace\":\"primary\"}" \
	    "kvs.lookup {\"key\":\"a\",\"flags\":0,\"rootdir\":{\"ver\":1}}" \
	    "kvs.lookup not-json" \
	    "kvs.lookup-plus []" \
	    "kvs.commit {\"namespace\":\"primary\",\"flags\":0,\"ops\":{}}" \
	    "kvs.commit {\"namespace\":\"primary\",\"flags\":0,\"ops\":[{\"key\":\"a\"}]}" \
	    "kvs.commit {\"namespace\":\"primary\",\"flags\":0,\"ops\":[{\"key\":\"a\",\"flags\":0,\"dirent\":{\"ver\":1,\"type\":\"val\",\"data\":\"!!\"}}]}" \
	    "kvs.commit {\"namespace\":\"primary\",\"flags\":0,\"ops\":[{\"key\":\"a\",\"flags\":9,\"dirent\":null}]}" \
	    "kvs.commit {\"namespace\":\"primary\",\"flags\":1024,\"ops\":[]}" \
	    "kvs.relaycommit {\"namespace\":\"primary\"}" \
	    "kvs.getroot {}" \
	    "kvs.getroot [1]" \
	    "kvs.wait-version {\"rootseq\":\"x\",\"namespace\":\"primary\"}" \
	    "kvs.namespace-create {\"namespace\":\"z\"}" \
	    "kvs.namespace-remove {}" \
	    "kvs.namespace-list [1]" \
	    "kvs.setroot-pause [1]"; do
		set -- \$req
		$K rpc \$1 "\$2" 2>>proto.err; echo "\$1 \$?"
	done
	$K -r 1 rpc kvs.lookup "{}"; echo "rank 1 kvs.lookup \$?"
	$K -r 1 rpc kvs.commit "{\"namespace\":\"primary\",\"flags\":0,\"ops\":7}"; echo "rank 1 kvs.commit \$?"
	$K get a
	EOT
	kvs_run 2 proto.sh >proto.out 2>proto.err2 &&
	test $(grep -c " 71$" proto.out) -eq 21 &&
	tail -1 proto.out | grep "^1$" &&
	test $(wc -l <proto.err) -eq 19 &&
	! grep "Protocol error" proto.err
'
test_expect_success 'lookup-plus: ENOENT is a success carrying errno' '
	cat >plus.sh <<-EOT &&
	$K put a=1 >/dev/null || exit 1
	$K rpc kvs.lookup-plus "{\"key\":\"nosuch\",\"flags\":0,\"namespace\":\"primary\"}"
	$K rpc kvs.lookup-plus "{\"key\":\"a\",\"flags\":0,\"namespace\":\"primary\"}"
	EOT
	kvs_run 1 plus.sh >plus.out &&
	grep "\"errno\":2" plus.out &&
	grep "\"rootseq\":1" plus.out | grep "\"val\""
'
test_expect_success 'lookupat a snapshot root' '
	cat >at.sh <<-EOT &&
	$K put d.a=old >/dev/null || exit 1
	ref=\$($K rpc kvs.getroot "{\"namespace\":\"primary\"}" | sed -e "s/.*\"rootref\":\"\\([^\"]*\\)\".*/\\1/")
	$K put d.a=new >/dev/null || exit 1
	$K rpc kvs.lookup "{\"key\":\"d.a\",\"flags\":0,\"rootdir\":{\"ver\":1,\"type\":\"dirref\",\"data\":[\"\$ref\"]}}"
	$K get d.a
	EOT
	kvs_run 2 at.sh >at.out &&
	test $(wc -l <at.out) -eq 2 &&
	head -1 at.out | grep "\"data\":\"b2xk\"" &&
	tail -1 at.out | grep "^new$"
'
test_expect_success 'a big directory is stored as an hdir, read as one directory' '
	rm -rf sdh && mkdir sdh &&
	cat >hdir.sh <<-EOT &&
	seq 1 700 | sed "s/.*/h.k&=v&/" | xargs flux kvs put || exit 1
	flux kvs ls h | wc -w
	flux kvs get h.k1 h.k350 h.k700
	ref=\$(flux kvs get --treeobj h | jq -r ".data[0]")
	flux content load \$ref | jq -r ".type, .data.size, .data.func"
	flux kvs put h.k350=changed && flux kvs unlink h.k351 || exit 1
	flux kvs put -A h.log=a && flux kvs put -A h.log=b || exit 1
	flux kvs put h.sub.x=1 || exit 1
	$K -r 1 get h.k350 && $K -r 1 get h.log && $K -r 1 get h.sub.x
	flux kvs ls h | wc -w
	flux kvs dir -R h | grep -c "^h\\.k"
	flux dump hdir.tar && flux restore --key=copy hdir.tar || exit 1
	flux kvs ls copy.h | wc -w
	EOT
	flux start -s 2 -Sstatedir="$PWD/sdh" $MODS sh hdir.sh >hdir.out &&
	cat >hdir.exp <<-EOT &&
	700
	v1
	v350
	v700
	hdir
	67
	fnv1a32
	changed
	ab
	1
	701
	699
	701
	EOT
	test_cmp hdir.exp hdir.out &&
	flux start -Sstatedir="$PWD/sdh" $MODS sh -c \
		"flux kvs get h.k700 copy.h.k350 && flux kvs ls h | wc -w" >hr.out &&
	printf "v700\nchanged\n701\n" >hr.exp &&
	test_cmp hr.exp hr.out
'
test_expect_success 'hdir-maxdirent=0 keeps big directories flat' '
	flux start -Sbroker.modules=content,content-sqlite@0 sh -c "
		flux module load kvs hdir-maxdirent=0 &&
		seq 1 300 | sed \"s/.*/f.k&=&/\" | xargs flux kvs put &&
		flux content load \$(flux kvs get --treeobj f | jq -r .data[0]) |
			jq -r .type && flux kvs ls f | wc -w" >flat.out &&
	printf "dir\n300\n" >flat.exp &&
	test_cmp flat.exp flat.out
'
# 300 directories two levels deep, then one commit that writes in each:
# applying it needs 600 directories loaded, 1 MiB decoded, in a cache
# of 64 KiB.  Each level is found missing on its own attempt: what was
# loaded for an attempt must be held until the commit is applied, or
# every load expires the previous level and the commit never completes.
test_expect_success 'a commit needing more than the cache holds is applied' '
	flux start -Sbroker.modules=content,content-sqlite@0 sh -c "
		flux module load kvs cache-max-bytes=65536 hdir-maxdirent=0 &&
		seq 1 300 | sed \"s/.*/d&.a.v=&-$(printf %0400d 0)/\" |
			xargs flux kvs put &&
		seq 1 300 | sed \"s/.*/d&.a.w=&/\" | xargs timeout 60 flux kvs put &&
		flux kvs get d1.a.w d300.a.w &&
		flux module stats kvs | jq .cache.expired" >held.out &&
	head -2 held.out >held.head && printf "1\n300\n" >held.exp &&
	test_cmp held.exp held.head &&
	test $(tail -1 held.out) -gt 300
'
# A lookup walks again from the root after each load: with directories
# bigger than the cache, each level loaded expired the one before.
test_expect_success 'a lookup through directories bigger than the cache' '
	flux start -Sbroker.modules=content,content-sqlite@0 sh -c "
		flux module load kvs cache-max-bytes=65536 hdir-maxdirent=0 &&
		for d in x x.y x.y.z; do
			seq 1 300 | sed \"s/.*/\$d.k&=$(printf %0200d 0)/\" |
				xargs flux kvs put || exit 1
		done &&
		flux kvs put x.y.z.last=found && flux kvs put other=1 &&
		timeout 30 flux kvs get x.y.z.last" >lheld.out &&
	echo found >lheld.exp &&
	test_cmp lheld.exp lheld.out
'
test_expect_success 'the same on rank 1, which loads every level from rank 0' '
	flux start -s 2 "-Sbroker.modules=content,content-sqlite@0,kvs cache-max-bytes=65536 hdir-maxdirent=0" sh -c "
		for d in x x.y x.y.z; do
			seq 1 300 | sed \"s/.*/\$d.k&=$(printf %0200d 0)/\" |
				xargs flux kvs put || exit 1
		done &&
		flux kvs put x.y.z.last=found && flux kvs put other=1 &&
		timeout 30 $FLUX_BUILD_DIR/t/rpc -r 1 kvs.lookup {\\\"key\\\":\\\"x.y.z.last\\\",\\\"flags\\\":0,\\\"namespace\\\":\\\"primary\\\"} |
			jq -r .val.data | base64 -d" >lheld1.out &&
	test "$(cat lheld1.out)" = found
'
# cache-max-age: what rank 1 loaded for a lookup and then did not use
# is dropped (aged) once that old, and is loaded again when asked for.
test_expect_success 'an unused cache entry is dropped after cache-max-age' '
	flux start -s 2 "-Sbroker.modules=content,content-sqlite@0,kvs cache-max-age=1" sh -c "
		seq 1 50 | sed \"s/.*/age.k&=$(printf %0300d 0)&/\" |
			xargs $K put >/dev/null &&
		$K -r 1 get age.k7 >/dev/null &&
		$FLUX_BUILD_DIR/t/rpc -r 1 kvs.stats-get {} | jq .cache.count &&
		sleep 3.5 &&
		$FLUX_BUILD_DIR/t/rpc -r 1 kvs.stats-get {} | jq .cache.count,.cache.aged &&
		$K -r 1 get age.k7 | tail -c 4" >aged.out &&
	cat aged.out &&
	test $(sed -n 1p aged.out) -gt 2 &&
	test $(sed -n 2p aged.out) -eq 0 &&
	test $(sed -n 3p aged.out) -gt 2 &&
	test "$(sed -n 4p aged.out)" = "007"
'
test_expect_success 'cache-max-age=-1 is refused' '
	test_must_fail flux start "-Sbroker.modules=content,content-sqlite@0,kvs cache-max-age=-1" true 2>age.err &&
	grep "invalid argument: cache-max-age=-1" age.err
'
test_expect_success 'an hdir is refused as a put dirent (EPROTO)' '
	cat >hput.sh <<-EOT &&
	$K rpc kvs.commit "{\"namespace\":\"primary\",\"flags\":0,\"ops\":[{\"key\":\"x\",\"flags\":0,\"dirent\":{\"ver\":1,\"type\":\"hdir\",\"data\":{\"size\":1,\"func\":\"fnv1a32\",\"bucket\":[null]}}}]}"
	echo "rc=\$?"
	$K put ok=1 && $K get ok
	EOT
	kvs_run 1 hput.sh >hput.out 2>hput.err &&
	grep "rc=[1-9]" hput.out && grep "hdir" hput.err && tail -1 hput.out | grep "^1$"
'
test_expect_success 'a clean restart keeps everything' '
	rm -rf sd1 && mkdir sd1 &&
	flux start -Sstatedir="$PWD/sd1" $MODS sh -c "
		$K put a=1 b.c=2 && $K append log=x && $K append log=y" &&
	flux start -s 2 -Sstatedir="$PWD/sd1" $MODS sh -c "
		$K version && $K get a && $K -r 1 get b.c && $K get log &&
		$K put a=3" >restart.out &&
	flux start -Sstatedir="$PWD/sd1" $MODS $K get a >>restart.out &&
	printf "3\n1\n2\nxy\n4\n3\n" >restart.exp &&
	test_cmp restart.exp restart.out
'
test_expect_success 'a disconnecting client: its parked requests are dropped' '
	cat >disc.sh <<-EOT &&
	parked () {
		$K -r \$1 rpc kvs.stats-get | sed -e "s/.*\"parked\":\([0-9]*\).*/\1/"
	}
	$K wait 1000 & p0=\$!
	$K -r 1 wait 1000 & p1=\$!
	sleep 0.5
	echo "\$(parked 0) \$(parked 1)"
	kill \$p0 \$p1
	sleep 0.5
	echo "\$(parked 0) \$(parked 1)"
	EOT
	kvs_run 2 disc.sh >disc.out 2>disc.err &&
	printf "1 1\n0 0\n" >disc.exp &&
	test_cmp disc.exp disc.out
'
test_expect_success 'shutdown while commits are in flight: acknowledged ones survive' '
	rm -rf sd3 && mkdir sd3 &&
	flux start -Sstatedir="$PWD/sd3" $MODS \
		sh -c "$K loop 1000000 sh >acked.sh 2>loop.sh.err & sleep 1" &&
	n=$(wc -l <acked.sh) && echo "$n acknowledged" && test $n -gt 10 &&
	flux start -Sstatedir="$PWD/sd3" $MODS $K verify $n sh
'
# fault test: the broker of rank 0 dies while commits are in flight.
# kill0.sh DELAY PREFIX
cat >kill0.sh <<EOT
$K loop 1000000 \$2 >acked.\$2 2>loop.\$2.err &
sleep \$1
kill -9 \$(flux getattr broker.pid)
EOT
test_expect_success 'SIGKILL of rank 0 mid-loop: every acknowledged write survives' '
	rm -rf sd2 && mkdir sd2 &&
	{ flux start -Sstatedir="$PWD/sd2" $MODS sh kill0.sh 2 d1 || true; } &&
	n=$(wc -l <acked.d1) && echo "$n acknowledged" &&
	test $n -gt 100 &&
	flux start -Sstatedir="$PWD/sd2" $MODS $K verify $n d1
'
test_expect_success 'SIGKILL again after the restart: both loops survive' '
	{ flux start -Sstatedir="$PWD/sd2" $MODS sh kill0.sh 1 d2 || true; } &&
	n=$(wc -l <acked.d1) && m=$(wc -l <acked.d2) &&
	echo "$m more acknowledged" && test $m -gt 10 &&
	flux start -Sstatedir="$PWD/sd2" $MODS sh -c \
		"$K verify $n d1 && $K verify $m d2"
'
test_expect_success 'SIGKILL while content-sqlite folds its index often: nothing acknowledged is lost' '
	rm -rf sd7 && mkdir sd7 &&
	cat >killfold.sh <<-EOT &&
	flux module load content-sqlite index-min=64 || exit 1
	flux module load kvs || exit 1
	$K loop 1000000 f1 >acked.f1 2>loop.f1.err &
	sleep 1.5
	flux module stats content-sqlite >fold.stats
	sleep 0.5
	kill -9 \$(flux getattr broker.pid)
	EOT
	{ flux start -Sstatedir="$PWD/sd7" -Sbroker.modules=content \
		sh killfold.sh || true; } &&
	n=$(wc -l <acked.f1) && echo "$n acknowledged" && test $n -gt 100 &&
	folds=$(sed -n "s/.*\"index_folds\": *\([0-9]*\).*/\1/p" fold.stats) &&
	echo "$folds folds before the kill" && test "$folds" -gt 0 &&
	flux start -Sstatedir="$PWD/sd7" $MODS $K verify $n f1
'
test_expect_success 'content-sqlite refuses a bad index-min' '
	test_must_fail flux start -Sbroker.modules=content \
		flux module load content-sqlite index-min=0 2>imin.err &&
	grep "index-min=0: expected a count" imin.err
'
# commits: the "commits" count of content-sqlite (its transactions)
cat >txcount.sh <<EOT
$K rpc content-sqlite.stats-get | sed -e 's/.*"commits":\([0-9]*\).*/\1/'
EOT
# LAZY (libkvs/kvs.h): answered once applied, durable with the next commit
# that is not LAZY, or at the unload; lost if rank 0 dies first
cat >ckseq.sh <<EOT
flux content checkpoint get | cut -d" " -f2
EOT
test_expect_success 'LAZY: answered before it is checkpointed; the next commit checkpoints it' '
	cat >lazy.sh <<-EOT &&
	s0=\$(sh ckseq.sh)
	s1=\$($K -c 8 put lz=1) || exit 1
	$K get lz || exit 1
	s2=\$(sh ckseq.sh)
	test \$s1 -gt \$s0 && test \$s2 -eq \$s0 || { echo "lazy \$s0 \$s1 \$s2"; exit 1; }
	s3=\$($K put d=1) || exit 1
	s4=\$(sh ckseq.sh)
	test \$s4 -eq \$s3 || { echo "durable \$s3 \$s4"; exit 1; }
	$K rpc kvs.stats-get | grep -q "\"lazy-batches\":1," || exit 1
	$K -c 12 put x=1 2>both.err; echo "both \$?"
	EOT
	kvs_run 1 lazy.sh >lazy.out &&
	printf "1\nboth 22\n" >lazy.exp &&
	test_cmp lazy.exp lazy.out &&
	grep "SYNC and LAZY" both.err
'
test_expect_success 'LAZY goes ahead of queued durable commits of others, not of its own sender' '
	cat >race.sh <<-EOT &&
	$K race 100 && $K rpc kvs.stats-get
	EOT
	kvs_run 1 race.sh >race.out &&
	head -2 race.out >race.head &&
	printf "C ahead\nB kept\n" >race.exp &&
	test_cmp race.exp race.head &&
	! grep -q "\"lazy-first\":0," race.out
'
# Overtaking (commit.c may_overtake): a LAZY commit is applied on the
# published root and answered while a durable batch of another sender
# waits for its storage; that one is applied again after it, once stored.
# The content service is removed to hold the durable commit in flight.
test_expect_success 'LAZY overtakes a durable commit in flight, which follows it' '
	rm -rf sd13 && mkdir sd13 &&
	cat >over.sh <<-EOT &&
	$K put a=1 >/dev/null || exit 1
	$CONTENT_OFF || exit 1
	$K put d.x=3 >d.seq &
	pid=\$!
	sleep 0.5
	kill -0 \$pid || exit 1
	$K -c 8 put lz=2 >lz.seq &
	p2=\$!
	sleep 0.5
	if kill -0 \$p2; then
		echo "lz waits"
		$CONTENT_ON
		exit 1
	fi
	lz=\$(cat lz.seq)
	kill -0 \$pid || exit 1
	$K get lz || exit 1
	$K get d.x 2>/dev/null && exit 1
	$CONTENT_ON || exit 1
	wait \$pid || exit 1
	test \$(cat d.seq) -gt \$lz || { echo "seq \$lz \$(cat d.seq)"; exit 1; }
	$K get d.x && $K get lz || exit 1
	$K rpc kvs.stats-get | grep -q "\"overtakes\":1," || exit 1
	EOT
	flux start -Sstatedir="$PWD/sd13" $MODS sh over.sh >over.out &&
	flux start -Sstatedir="$PWD/sd13" $MODS \
		sh -c "$K get a && $K get d.x && $K get lz" >>over.out &&
	printf "2\n3\n2\n1\n3\n2\n" >over.exp &&
	test_cmp over.exp over.out
'
test_expect_success 'overtaken, then SIGKILL of rank 0: the durable commit kept, the LAZY one lost' '
	rm -rf sd14 && mkdir sd14 &&
	cat >overkill.sh <<-EOT &&
	$K put a=1 >/dev/null || exit 1
	$CONTENT_OFF || exit 1
	$K put d=3 >/dev/null &
	pid=\$!
	sleep 0.5
	$K -c 8 put lz=2 >/dev/null &
	p2=\$!
	sleep 0.5
	kill -0 \$p2 2>/dev/null && echo "lz waits"
	$CONTENT_ON || exit 1
	wait \$pid || exit 1
	flux content flush || exit 1
	kill -9 \$(flux getattr broker.pid)
	EOT
	{ flux start -Sstatedir="$PWD/sd14" $MODS sh overkill.sh >overkill1.out || true; } &&
	test_must_be_empty overkill1.out &&
	flux start -Sstatedir="$PWD/sd14" $MODS sh -c "
		$K get a; $K get d; $K get lz; echo lz \$?" >overkill.out 2>overkill.err &&
	printf "1\n3\nlz 2\n" >overkill.exp &&
	test_cmp overkill.exp overkill.out
'
test_expect_success 'no overtaking where the durable commit could change: related keys, a symlink, its own sender' '
	cat >noover.sh <<-EOT &&
	$K put t.a=1 >/dev/null && $K link s t >/dev/null || exit 1
	$CONTENT_OFF || exit 1
	$K put r.x=1 >/dev/null &
	p1=\$!
	sleep 0.3
	$K -c 8 put r=2 >/dev/null &
	p2=\$!
	sleep 0.3
	kill -0 \$p2 || { echo "r overtook r.x"; exit 1; }
	$CONTENT_ON || exit 1
	wait \$p1 && wait \$p2 || exit 1
	$CONTENT_OFF || exit 1
	$K put s.b=1 >/dev/null &
	p1=\$!
	sleep 0.3
	$K -c 8 put other=2 >/dev/null &
	p2=\$!
	sleep 0.3
	kill -0 \$p2 || { echo "other overtook s.b"; exit 1; }
	$CONTENT_ON || exit 1
	wait \$p1 && wait \$p2 || exit 1
	$K get r && $K get t.b && $K get other || exit 1
	$K rpc kvs.stats-get | grep -q "\"overtakes\":0," || exit 1
	$K race 100 | sed -n 2p
	EOT
	kvs_run 1 noover.sh >noover.out &&
	printf "2\n1\n2\nB kept\n" >noover.exp &&
	test_cmp noover.exp noover.out
'
test_expect_success 'LAZY last: a clean unload checkpoints it, a restart has it' '
	rm -rf sd8 && mkdir sd8 &&
	flux start -Sstatedir="$PWD/sd8" $MODS sh -c "
		$K put a=1 >/dev/null && $K -c 8 put lz=2 && sh ckseq.sh" >lz1.out &&
	flux start -Sstatedir="$PWD/sd8" $MODS sh -c "
		sh ckseq.sh && $K get a && $K get lz" >lz2.out &&
	seq=$(head -1 lz1.out) &&
	test $(sed -n 2p lz1.out) -eq $((seq - 1)) &&
	printf "%s\n1\n2\n" $seq >lz2.exp &&
	test_cmp lz2.exp lz2.out
'
test_expect_success 'LAZY last, then SIGKILL of rank 0: lost; the durable commit before it kept' '
	rm -rf sd9 && mkdir sd9 &&
	cat >lzkill.sh <<-EOT &&
	$K put a=1 >/dev/null && $K -c 8 put lz=2 >/dev/null || exit 1
	kill -9 \$(flux getattr broker.pid)
	EOT
	{ flux start -Sstatedir="$PWD/sd9" $MODS sh lzkill.sh || true; } &&
	flux start -Sstatedir="$PWD/sd9" $MODS sh -c "
		$K get a; $K get lz; echo lz \$?" >lz3.out 2>lz3.err &&
	printf "1\nlz 2\n" >lz3.exp &&
	test_cmp lz3.exp lz3.out &&
	grep "No such file or directory" lz3.err
'
test_expect_success 'a kvs reload keeps the other namespaces, their roots and owners' '
	cat >nskeep.sh <<-EOT &&
	$K rpc kvs.namespace-create "{\"namespace\":\"keep\",\"rootref\":\"$EMPTY\",\"owner\":1234,\"flags\":0}" >/dev/null || exit 1
	$K rpc kvs.namespace-create "{\"namespace\":\"gone\",\"rootref\":\"$EMPTY\",\"owner\":-1,\"flags\":0}" >/dev/null || exit 1
	$K -n keep put a=1 >/dev/null && $K -n keep put b=2 || exit 1
	$K rpc kvs.namespace-remove "{\"namespace\":\"gone\"}" >/dev/null || exit 1
	flux module reload kvs || exit 1
	$K -n keep get a && $K -n keep version || exit 1
	$K -n keep put c=3 || exit 1
	$K rpc kvs.namespace-list | grep -o "\"namespace\":\"[a-z]*\",\"owner\":[0-9]*" | sort
	EOT
	rm -rf sd10 && mkdir sd10 &&
	flux start -Sstatedir="$PWD/sd10" $MODS sh nskeep.sh >nskeep.out &&
	flux start -Sstatedir="$PWD/sd10" $MODS $K -n keep get c >>nskeep.out &&
	cat >nskeep.exp <<-EOT &&
	2
	1
	2
	3
	"namespace":"keep","owner":1234
	"namespace":"primary","owner":$(id -u)
	3
	EOT
	test_cmp nskeep.exp nskeep.out
'
test_expect_success 'a commit costs one sqlite transaction: blobs and checkpoint together' '
	cat >tx.sh <<-EOT &&
	c0=\$(sh txcount.sh)
	$K loop 50 tx >/dev/null || exit 1
	c1=\$(sh txcount.sh)
	echo \$((c1 - c0))
	EOT
	rm -rf sd4 && mkdir sd4 &&
	flux start -Sstatedir="$PWD/sd4" $MODS sh tx.sh >tx.out &&
	n=$(cat tx.out) && echo "$n transactions for 50 commits" &&
	test $n -ge 1 && test $n -le 52
'
test_expect_success 'a commit of more blobs than one content.write takes goes in chunks' '
	rm -rf sd6 && mkdir sd6 &&
	flux start -Sstatedir="$PWD/sd6" \
		-Sbroker.modules=content,content-sqlite@0 sh -c "
		flux module load kvs write-chunk=2 inline-max=4 &&
		$K put c.a=value-a c.b=value-b c.c=value-c c.d=value-d c.e=value-e
		" >chunk.out &&
	flux start -Sstatedir="$PWD/sd6" $MODS sh -c "
		$K get c.a && $K get c.c && $K get c.e" >chunk.out &&
	printf "value-a\nvalue-c\nvalue-e\n" >chunk.exp &&
	test_cmp chunk.exp chunk.out
'
# four loops at once, rank 0 killed: commits share transactions
cat >kill4.sh <<EOT
for p in a b c d; do
	$K loop 1000000 \$p >acked4.\$p 2>loop4.\$p.err &
done
sleep \$1
kill -9 \$(flux getattr broker.pid)
EOT
test_expect_success 'SIGKILL with four loops at once: every acknowledged write survives' '
	rm -rf sd5 && mkdir sd5 &&
	{ flux start -Sstatedir="$PWD/sd5" $MODS sh kill4.sh 2 || true; } &&
	for p in a b c d; do
		n=$(wc -l <acked4.$p) && echo "$p: $n acknowledged" &&
		test $n -gt 10 || return 1
	done &&
	flux start -Sstatedir="$PWD/sd5" $MODS sh -c "
		$K verify $(wc -l <acked4.a) a && $K verify $(wc -l <acked4.b) b &&
		$K verify $(wc -l <acked4.c) c && $K verify $(wc -l <acked4.d) d"
'
test_expect_success 'namespace events go only to the ranks that follow the namespace' '
	cat >route.sh <<-EOT &&
	uri () { flux exec -r \$1 flux getattr local-uri; }
	heard () { # primary setroot events rank \$1 got from its parent
		FLUX_URI=\$(uri \$1) flux module stats broker | jq -r \
			".msgcount[\"parent event kvs.namespace-primary-setroot\"] // 0"
	}
	$K put a=1 >/dev/null && $K put a=2 >/dev/null || exit 1
	echo "rank 3 before: \$(heard 3)"
	$K -r 3 get a || exit 1
	v=\$($K put a=3) && $K -r 3 wait \$v && $K -r 3 get a || exit 1
	test \$(heard 3) -ge 1 && echo "rank 3 after: heard"
	echo "rank 2: \$(heard 2)"
	# a client of rank 2 subscribed to every namespace event gets them
	FLUX_URI=\$(uri 2) timeout -k 5 60 flux event sub -c 1 kvs.namespace- \
		>sub.out &
	pid=\$!
	for i in \$(seq 100); do
		kill -0 \$pid 2>/dev/null || break
		$K put b=\$i >/dev/null; sleep 0.1
	done
	wait \$pid && grep -c "kvs.namespace-primary-setroot" sub.out
	# its client gone, rank 2 follows nothing
	u2=\$(uri 2)
	for i in \$(seq 100); do
		k=\$(FLUX_URI=\$u2 flux module stats broker | jq ".\"evroute-keys\"")
		test "\$k" = 0 && break
		sleep 0.1
	done
	echo "rank 2 keys: \$k"
	EOT
	FLUX_BROKER_MSGCOUNT=1 timeout -k 10 300 flux start -s 4 \
		-Sbroker.modules=rexec,content,content-sqlite@0,kvs \
		sh route.sh >route.out 2>route.err &&
	cat >route.exp <<-EOT &&
	rank 3 before: 0
	2
	3
	rank 3 after: heard
	rank 2: 0
	1
	rank 2 keys: 0
	EOT
	test_cmp route.exp route.out
'

test_done
