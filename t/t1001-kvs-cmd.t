#!/bin/sh
test_description='flux kvs, flux dump and flux restore against a running
instance with the content, kvs and kvs-watch modules'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

MODULES=${FLUX_KVS_TEST_MODULES:-content,kvs,kvs-watch}

# One instance for the whole script (start_instance), stopped by the last
# test.
test_expect_success 'start an instance with the KVS' '
	start_instance broker 1 -Sbroker.modules=$MODULES &&
	flux kvs getroot >/dev/null
'

# wait_lines N FILE: wait (up to 15s) until FILE has at least N lines.
wait_lines () {
	for i in $(seq 150); do
		test -f "$2" && test $(wc -l <"$2") -ge $1 && return 0
		sleep 0.1
	done
	return 1
}

#
# help and usage
#
test_expect_success 'flux kvs --help lists the commands' '
	flux kvs --help >help.out &&
	for c in get put ls dir unlink mkdir link readlink copy move version \
		wait sync getroot namespace eventlog; do
		grep "^  $c " help.out || return 1
	done
'
test_expect_success 'every kvs command answers --help' '
	for c in get put ls dir unlink mkdir link readlink copy move version \
		wait sync getroot; do
		flux kvs $c --help | grep "^Usage: flux kvs $c" || return 1
	done &&
	flux kvs namespace --help | grep create &&
	flux kvs namespace create --help | grep "^Usage: flux kvs namespace" &&
	flux kvs eventlog --help | grep wait-event &&
	flux kvs eventlog wait-event --help | grep "^Usage: flux kvs eventlog" &&
	flux dump --help | grep "^Usage: flux dump" &&
	flux restore --help | grep "^Usage: flux restore"
'
test_expect_success 'usage errors exit 1 with a message' '
	test_expect_code 1 flux kvs 2>u1.err &&
	grep "missing command" u1.err &&
	test_expect_code 1 flux kvs frobnicate 2>u2.err &&
	grep "unknown command .frobnicate." u2.err &&
	test_expect_code 1 flux kvs get 2>u3.err &&
	grep "^flux-kvs: missing KEY" u3.err &&
	test_expect_code 1 flux kvs get --bogus a 2>u4.err &&
	grep "unknown option" u4.err &&
	test_expect_code 1 flux kvs put novalue 2>u5.err &&
	grep "KEY=VALUE" u5.err &&
	test_expect_code 1 flux kvs get --count=2 a 2>u6.err &&
	grep "need --watch" u6.err &&
	test_expect_code 1 flux kvs namespace 2>u7.err &&
	test_expect_code 1 flux kvs eventlog nosuch 2>u8.err &&
	grep "unknown command" u8.err
'

#
# put / get
#
test_expect_success 'put and get a value' '
	flux kvs put test.a=hello &&
	echo hello >get.exp &&
	flux kvs get test.a >get.out &&
	test_cmp get.exp get.out
'
test_expect_success 'put several keys in one commit, get several keys' '
	flux kvs put test.b=1 test.c=2 "test.d=with space" &&
	printf "1\n2\nwith space\n" >get2.exp &&
	flux kvs get test.b test.c test.d >get2.out &&
	test_cmp get2.exp get2.out
'
test_expect_success 'get --label prints KEY=' '
	flux kvs get --label test.b test.c >label.out &&
	printf "test.b=1\ntest.c=2\n" >label.exp &&
	test_cmp label.exp label.out
'
test_expect_success 'keys are normalized' '
	flux kvs get ..test...b. >norm.out &&
	echo 1 >norm.exp &&
	test_cmp norm.exp norm.out
'
test_expect_success 'a value with = in it keeps everything after the first =' '
	flux kvs put test.eq=a=b &&
	echo a=b >eq.exp &&
	flux kvs get test.eq >eq.out &&
	test_cmp eq.exp eq.out
'
test_expect_success 'get of a missing key fails with a clear error' '
	test_expect_code 1 flux kvs get test.nosuch 2>nokey.err &&
	echo "flux-kvs: test.nosuch: No such file or directory" >nokey.exp &&
	test_cmp nokey.exp nokey.err
'
test_expect_success 'get of a directory fails with EISDIR' '
	test_expect_code 1 flux kvs get test 2>isdir.err &&
	grep "flux-kvs: test: Is a directory" isdir.err
'
test_expect_success 'an empty value prints nothing' '
	flux kvs put test.empty= &&
	flux kvs get test.empty >empty.out &&
	test_must_be_empty empty.out
'
test_expect_success 'put --raw from stdin keeps bytes exactly' '
	printf "a\000b\nc" >raw.in &&
	flux kvs put --raw test.raw=- <raw.in &&
	flux kvs get --raw test.raw >raw.out &&
	cmp raw.in raw.out
'
test_expect_success 'put --raw of an argument stores no newline' '
	flux kvs put --raw test.raw2=xyz &&
	flux kvs get --raw test.raw2 >raw2.out &&
	printf xyz >raw2.exp &&
	cmp raw2.exp raw2.out
'
test_expect_success 'put --append appends' '
	flux kvs put --append test.app=x &&
	flux kvs put --append test.app=y test.app=z &&
	echo xyz >app.exp &&
	flux kvs get test.app >app.out &&
	test_cmp app.exp app.out
'
test_expect_success 'get --treeobj prints the RFC 11 object' '
	flux kvs get --treeobj test.a >tobj.out &&
	echo "{\"data\":\"aGVsbG8=\",\"type\":\"val\",\"ver\":1}" >tobj.exp &&
	test_cmp tobj.exp tobj.out
'
test_expect_success 'put --treeobj stores an RFC 11 object' '
	flux kvs put --treeobj test.t="{\"data\":\"aGk=\",\"type\":\"val\",\"ver\":1}" &&
	echo hi >t.exp &&
	flux kvs get test.t >t.out &&
	test_cmp t.exp t.out &&
	flux kvs get --treeobj test >dirref.json &&
	flux kvs put --treeobj test.tcopy=- <dirref.json &&
	flux kvs get test.tcopy.a >tcopy.out &&
	echo hello >tcopy.exp &&
	test_cmp tcopy.exp tcopy.out
'
test_expect_success 'put --treeobj of an invalid object fails' '
	test_expect_code 1 flux kvs put --treeobj test.bad="{\"type\":\"val\"}" \
		2>badtobj.err &&
	grep "not a valid RFC 11 object" badtobj.err &&
	test_expect_code 1 flux kvs put --treeobj test.bad=- </dev/null
'
test_expect_success 'put to the root fails' '
	test_expect_code 1 flux kvs put .=x 2>root.err &&
	grep "Invalid argument" root.err
'
test_expect_success 'put --no-merge and put --sync work' '
	flux kvs put --no-merge test.nm=1 &&
	flux kvs put --sync test.sy=1 &&
	flux kvs get test.nm test.sy
'
test_expect_success 'put -s prints the new version' '
	flux kvs put -s test.seq=1 >seq.out &&
	flux kvs version >version.out &&
	test_cmp seq.out version.out
'
test_expect_success 'put -O prints a snapshot usable with get --at' '
	flux kvs put -O test.snap=old >snap.json &&
	grep "\"type\":\"dirref\"" snap.json &&
	flux kvs put test.snap=new &&
	flux kvs get --at "$(cat snap.json)" test.snap >at.out &&
	echo old >at.exp &&
	test_cmp at.exp at.out &&
	flux kvs get test.snap >now.out &&
	echo new >now.exp &&
	test_cmp now.exp now.out
'
test_expect_success 'get --at of something not a dirref fails' '
	test_expect_code 1 flux kvs get --at "{\"x\":1}" test.snap 2>badat.err &&
	grep "dirref" badat.err
'

#
# watch
#
test_expect_success 'get --watch --count=2 prints the value, then the next' '
	flux kvs put test.w=1 &&
	{ flux kvs get --watch --count=2 test.w >watch.out & } &&
	pid=$! &&
	wait_lines 1 watch.out &&
	flux kvs put test.w=2 &&
	wait $pid &&
	printf "1\n2\n" >watch.exp &&
	test_cmp watch.exp watch.out
'
test_expect_success 'get --watch --uniq skips writes that change nothing' '
	flux kvs put test.u=1 &&
	{ flux kvs get --watch --uniq --count=2 test.u >uniq.out & } &&
	pid=$! &&
	wait_lines 1 uniq.out &&
	flux kvs put test.u=1 &&
	flux kvs put test.u=1 &&
	flux kvs put test.u=2 &&
	wait $pid &&
	printf "1\n2\n" >uniq.exp &&
	test_cmp uniq.exp uniq.out
'
test_expect_success 'get --watch --append prints only appended data' '
	flux kvs put test.wa=a &&
	{ flux kvs get --watch --append --count=3 test.wa >wa.out & } &&
	pid=$! &&
	wait_lines 1 wa.out &&
	flux kvs put --append test.wa=b &&
	flux kvs put --append test.wa=c &&
	wait $pid &&
	printf "a\nb\nc\n" >wa.exp &&
	test_cmp wa.exp wa.out
'
test_expect_success 'get --watch --full notices a replaced parent' '
	flux kvs put test.fp.v=1 test.fsrc.v=2 &&
	{ flux kvs get --watch --full --count=2 test.fp.v >full.out & } &&
	pid=$! &&
	wait_lines 1 full.out &&
	flux kvs copy test.fsrc test.fp &&
	wait $pid &&
	printf "1\n2\n" >full.exp &&
	test_cmp full.exp full.out
'
test_expect_success 'get --waitcreate waits for the key' '
	{ flux kvs get --waitcreate test.later >later.out & } &&
	pid=$! &&
	sleep 0.3 &&
	flux kvs put test.later=here &&
	wait $pid &&
	echo here >later.exp &&
	test_cmp later.exp later.out
'
test_expect_success 'get --watch of two keys' '
	flux kvs put test.w1=a test.w2=b &&
	flux kvs get --watch --count=1 test.w1 test.w2 >w12.out &&
	sort w12.out >w12.sorted &&
	printf "a\nb\n" >w12.exp &&
	test_cmp w12.exp w12.sorted
'

#
# ls / dir
#
test_expect_success 'set up a directory' '
	flux kvs put d.a=1 d.b=2 d.sub.c=3 &&
	flux kvs link d.a d.l
'
test_expect_success 'ls lists names in columns' '
	flux kvs ls -w 80 d >ls.out &&
	echo "a      b      l      sub" >ls.exp &&
	test_cmp ls.exp ls.out
'
test_expect_success 'ls -w 10 wraps columns' '
	flux kvs ls -w 14 d >ls10.out &&
	printf "a      b\nl      sub\n" >ls10.exp &&
	test_cmp ls10.exp ls10.out
'
test_expect_success 'ls -1 lists one per line' '
	flux kvs ls -1 d >ls1.out &&
	printf "a\nb\nl\nsub\n" >ls1.exp &&
	test_cmp ls1.exp ls1.out
'
test_expect_success 'ls -F classifies' '
	flux kvs ls -1F d >lsF.out &&
	printf "a\nb\nl@\nsub.\n" >lsF.exp &&
	test_cmp lsF.exp lsF.out
'
test_expect_success 'ls -d lists the directory itself' '
	flux kvs ls -d d >lsd.out &&
	echo d >lsd.exp &&
	test_cmp lsd.exp lsd.out &&
	flux kvs ls -dF d >lsdF.out &&
	echo d. >lsdF.exp &&
	test_cmp lsdF.exp lsdF.out
'
test_expect_success 'ls -R recurses with labels' '
	flux kvs ls -R -1 d >lsR.out &&
	printf "d:\na\nb\nl\nsub\n\nd.sub:\nc\n" >lsR.exp &&
	test_cmp lsR.exp lsR.out
'
test_expect_success 'ls of a value prints its name; with a dot it fails' '
	flux kvs ls d.a >lsval.out &&
	echo d.a >lsval.exp &&
	test_cmp lsval.exp lsval.out &&
	test_expect_code 1 flux kvs ls d.a. 2>lsdot.err &&
	grep "d.a: Not a directory" lsdot.err
'
test_expect_success 'ls of values and directories: values first' '
	flux kvs ls -1 d.b d.sub >lsmix.out &&
	printf "d.b\n\nd.sub:\nc\n" >lsmix.exp &&
	test_cmp lsmix.exp lsmix.out
'
test_expect_success 'ls of a missing key fails' '
	test_expect_code 1 flux kvs ls d.nosuch 2>lsno.err &&
	grep "d.nosuch: No such file or directory" lsno.err
'
test_expect_success 'ls of the root lists d' '
	flux kvs ls -1 >lsroot.out &&
	grep "^d$" lsroot.out &&
	grep "^test$" lsroot.out
'
test_expect_success 'dir prints keys and values' '
	flux kvs dir d >dir.out &&
	printf "d.a = 1\nd.b = 2\nd.l -> d.a\nd.sub.\n" >dir.exp &&
	test_cmp dir.exp dir.out
'
test_expect_success 'dir -R descends' '
	flux kvs dir -R d >dirR.out &&
	printf "d.a = 1\nd.b = 2\nd.l -> d.a\nd.sub.c = 3\n" >dirR.exp &&
	test_cmp dirR.exp dirR.out
'
test_expect_success 'dir -d prints keys only' '
	flux kvs dir -d d >dird.out &&
	printf "d.a\nd.b\nd.l -> d.a\nd.sub.\n" >dird.exp &&
	test_cmp dird.exp dird.out
'
test_expect_success 'dir cuts long lines at the width' '
	flux kvs put long.k=abcdefghijklmnopqrstuvwxyz &&
	flux kvs dir -w 12 long >dirw.out &&
	echo "long.k = ..." >dirw.exp &&
	test_cmp dirw.exp dirw.out &&
	flux kvs dir -w 0 long >dirw0.out &&
	echo "long.k = abcdefghijklmnopqrstuvwxyz" >dirw0.exp &&
	test_cmp dirw0.exp dirw0.out
'
test_expect_success 'dir --at reads a snapshot' '
	flux kvs getroot >root.json &&
	flux kvs put d.b=changed &&
	flux kvs dir --at "$(cat root.json)" d >dirat.out &&
	test_cmp dir.exp dirat.out &&
	flux kvs put d.b=2
'
test_expect_success 'dir of a value fails' '
	test_expect_code 1 flux kvs dir d.a 2>dirval.err &&
	grep "d.a: Not a directory" dirval.err
'

#
# unlink, mkdir
#
test_expect_success 'unlink removes a key' '
	flux kvs put u.v=1 &&
	flux kvs unlink u.v &&
	test_expect_code 1 flux kvs get u.v
'
test_expect_success 'unlink of a non-empty directory needs -R' '
	flux kvs put u.d.x=1 &&
	test_expect_code 1 flux kvs unlink u.d 2>ul.err &&
	grep "cannot unlink .u.d.: Directory not empty" ul.err &&
	flux kvs get u.d.x &&
	flux kvs unlink -R u.d &&
	test_expect_code 1 flux kvs get u.d.x
'
test_expect_success 'unlink of a missing key fails unless -f' '
	test_expect_code 1 flux kvs unlink u.nosuch 2>ulno.err &&
	grep "No such file or directory" ulno.err &&
	flux kvs unlink -f u.nosuch
'
test_expect_success 'unlink -s prints the new version' '
	flux kvs put u.s=1 &&
	flux kvs unlink -s u.s >uls.out &&
	flux kvs version >ulv.out &&
	test_cmp ulv.out uls.out
'
test_expect_success 'mkdir makes an empty directory' '
	flux kvs mkdir m.e &&
	flux kvs ls m.e >mk.out &&
	test_must_be_empty mk.out &&
	test_expect_code 1 flux kvs get m.e 2>mk.err &&
	grep "Is a directory" mk.err &&
	flux kvs unlink m.e
'
test_expect_success 'mkdir replaces an existing key' '
	flux kvs put m.r=1 &&
	flux kvs mkdir m.r &&
	flux kvs dir m >mkr.out &&
	echo "m.r." >mkr.exp &&
	test_cmp mkr.exp mkr.out
'

#
# link, readlink
#
test_expect_success 'link makes a symlink that get follows' '
	flux kvs link d.a lnk &&
	echo 1 >lnk.exp &&
	flux kvs get lnk >lnk.out &&
	test_cmp lnk.exp lnk.out &&
	flux kvs readlink lnk >rl.out &&
	echo d.a >rl.exp &&
	test_cmp rl.exp rl.out
'
test_expect_success 'a link to a directory lists as the directory' '
	flux kvs link d.sub lnkdir &&
	flux kvs ls -1 lnkdir >lnkdir.out &&
	echo c >lnkdir.exp &&
	test_cmp lnkdir.exp lnkdir.out &&
	flux kvs get lnkdir.c
'
test_expect_success 'link --target-namespace and readlink -o / -k' '
	flux kvs link --target-namespace other x.y lnk2 &&
	flux kvs readlink lnk2 >rl2.out &&
	echo other::x.y >rl2.exp &&
	test_cmp rl2.exp rl2.out &&
	flux kvs readlink -o lnk2 >rlo.out &&
	echo other >rlo.exp &&
	test_cmp rlo.exp rlo.out &&
	flux kvs readlink -k lnk2 >rlk.out &&
	echo x.y >rlk.exp &&
	test_cmp rlk.exp rlk.out
'
test_expect_success 'readlink of a value fails' '
	test_expect_code 1 flux kvs readlink d.a 2>rlv.err &&
	grep "d.a: not a symbolic link" rlv.err
'
test_expect_success 'readlink --at reads a snapshot' '
	flux kvs getroot >rlroot.json &&
	flux kvs link d.b lnk &&
	flux kvs readlink --at "$(cat rlroot.json)" lnk >rlat.out &&
	test_cmp rl.exp rlat.out
'
test_expect_success 'link needs two arguments' '
	test_expect_code 1 flux kvs link onlyone 2>link.err &&
	grep "TARGET and LINKNAME" link.err
'

#
# copy, move
#
test_expect_success 'copy copies a directory' '
	flux kvs copy d d2 &&
	flux kvs dir -R d2 >cp.out &&
	sed -e "s/^d\./d2./" dirR.exp >cp.exp &&
	test_cmp cp.exp cp.out
'
test_expect_success 'move moves a directory' '
	flux kvs move d2 d3 &&
	test_expect_code 1 flux kvs get d2.a &&
	flux kvs get d3.a
'
test_expect_success 'copy of a missing key fails' '
	test_expect_code 1 flux kvs copy nosuch x 2>cpno.err &&
	grep "nosuch: No such file or directory" cpno.err
'
test_expect_success 'copy needs two arguments' '
	test_expect_code 1 flux kvs copy a 2>cp2.err &&
	grep "SOURCE and DESTINATION" cp2.err
'

#
# version, wait, sync, getroot
#
test_expect_success 'version increases with commits' '
	v1=$(flux kvs version) &&
	flux kvs put vv=1 &&
	v2=$(flux kvs version) &&
	test $v2 -gt $v1
'
test_expect_success 'wait returns at once for a past version' '
	flux kvs wait $(flux kvs version)
'
test_expect_success 'wait blocks until the version is reached' '
	v=$(flux kvs version) &&
	{ flux kvs wait $((v+1)) & } &&
	pid=$! &&
	sleep 0.2 &&
	flux kvs put vv=2 &&
	wait $pid
'
test_expect_success 'wait of a bad version is a usage error' '
	test_expect_code 1 flux kvs wait abc
'
test_expect_success 'sync works on the primary namespace' '
	flux kvs sync &&
	flux kvs sync -s >sync.out &&
	flux kvs version >syncv.out &&
	test_cmp syncv.out sync.out
'
test_expect_success 'getroot prints a dirref, its sequence, blobref, owner' '
	flux kvs getroot >gr.json &&
	grep "^{\"data\":\[\"sha[0-9]*-[0-9a-f]*\"\],\"type\":\"dirref\",\"ver\":1}$" gr.json &&
	flux kvs getroot -s >grs.out &&
	flux kvs version >grv.out &&
	test_cmp grv.out grs.out &&
	flux kvs getroot -b >grb.out &&
	grep "$(cat grb.out)" gr.json &&
	flux kvs getroot -o >gro.out &&
	id -u >gro.exp &&
	test_cmp gro.exp gro.out
'
test_expect_success 'getroot options are exclusive' '
	test_expect_code 1 flux kvs getroot -s -o
'

#
# namespaces
#
test_expect_success 'namespace create, use and list' '
	flux kvs namespace create ns1 &&
	flux kvs put -N ns1 k=v1 &&
	flux kvs get -N ns1 k >ns.out &&
	echo v1 >ns.exp &&
	test_cmp ns.exp ns.out &&
	test_expect_code 1 flux kvs get k &&
	flux kvs namespace list >nslist.out &&
	grep "^primary " nslist.out &&
	grep "^ns1 *$(id -u) 0x00000000$" nslist.out &&
	head -1 nslist.out | grep "^NAMESPACE *OWNER *FLAGS$"
'
test_expect_success 'FLUX_KVS_NAMESPACE selects the namespace' '
	FLUX_KVS_NAMESPACE=ns1 flux kvs get k >nsenv.out &&
	test_cmp ns.exp nsenv.out
'
test_expect_success 'a new namespace starts empty' '
	flux kvs namespace create ns-empty &&
	flux kvs ls -N ns-empty >nsempty.out &&
	test_must_be_empty nsempty.out &&
	flux kvs namespace remove ns-empty
'
test_expect_success 'namespace create of an existing name fails' '
	test_expect_code 1 flux kvs namespace create ns1 2>nsexist.err &&
	grep "^flux-kvs: ns1: .*exists" nsexist.err
'
test_expect_success 'namespace names are at most 255 bytes' '
	long=$(printf "%0255d" 0) &&
	flux kvs namespace create $long &&
	flux kvs put -N $long a=1 &&
	flux kvs namespace remove $long &&
	test_expect_code 1 flux kvs namespace create ${long}x 2>nslong.err &&
	grep "longer than 255 bytes" nslong.err
'
test_expect_success 'namespace create -o sets the owner' '
	flux kvs namespace create -o 1234 ns2 &&
	flux kvs getroot -N ns2 -o >ns2o.out &&
	echo 1234 >ns2o.exp &&
	test_cmp ns2o.exp ns2o.out &&
	flux kvs namespace list | grep "^ns2 *1234 "
'
test_expect_success 'copy between namespaces' '
	flux kvs copy -D ns1 d.sub nsd &&
	flux kvs get -N ns1 nsd.c >nscp.out &&
	echo 3 >nscp.exp &&
	test_cmp nscp.exp nscp.out &&
	flux kvs move -S ns1 -D ns2 nsd nsd2 &&
	flux kvs get -N ns2 nsd2.c &&
	test_expect_code 1 flux kvs get -N ns1 nsd.c
'
test_expect_success 'sync of another namespace fails' '
	test_expect_code 1 flux kvs sync -N ns1
'
test_expect_success 'namespace remove' '
	flux kvs namespace remove ns1 ns2 &&
	test_expect_code 1 flux kvs get -N ns1 k 2>nsrm.err &&
	grep "Operation not supported" nsrm.err &&
	flux kvs namespace list >nslist2.out &&
	test_must_fail grep "^ns1 " nslist2.out
'
test_expect_success 'namespace remove of primary fails' '
	test_expect_code 1 flux kvs namespace remove primary
'
test_expect_success 'operations on a missing namespace fail' '
	test_expect_code 1 flux kvs put -N nosuchns a=1 2>nons.err &&
	grep "^flux-kvs: commit: .*nosuchns" nons.err &&
	test_expect_code 1 flux kvs getroot -N nosuchns &&
	test_expect_code 1 flux kvs version -N nosuchns
'

#
# eventlogs
#
test_expect_success 'eventlog append and get' '
	flux kvs eventlog append el ev1 &&
	flux kvs eventlog append el ev2 "{\"a\":1}" &&
	flux kvs eventlog get el >el.out &&
	sed -e "s/^[0-9]*\.[0-9]* //" el.out >el.names &&
	printf "ev1\nev2 {\"a\":1}\n" >el.exp &&
	test_cmp el.exp el.names &&
	grep -c "^[0-9]*\.[0-9]\{6\} " el.out >el.count &&
	echo 2 >el.count.exp &&
	test_cmp el.count.exp el.count
'
test_expect_success 'eventlog append joins CONTEXT words, -t sets the time' '
	flux kvs eventlog append -t 1.5 el ev3 "{\"b\":" "2}" &&
	flux kvs eventlog get -u el >elu.out &&
	tail -1 elu.out >elu.last &&
	echo "{\"timestamp\":1.5,\"name\":\"ev3\",\"context\":{\"b\":2}}" >elu.exp &&
	test_cmp elu.exp elu.last
'
test_expect_success 'the eventlog is RFC 18 text' '
	flux kvs get el >elraw.out &&
	test_line_count = 4 elraw.out &&
	tail -2 elraw.out | head -1 | grep "^{\"timestamp\":1.5,"
'
test_expect_success 'eventlog append with a bad context fails' '
	test_expect_code 1 flux kvs eventlog append el ev4 notjson 2>elbad.err &&
	grep "JSON object" elbad.err
'
test_expect_success 'eventlog get --count' '
	flux kvs eventlog get --count=1 el >elc.out &&
	test_line_count = 1 elc.out
'
test_expect_success 'eventlog get --watch prints new events' '
	{ flux kvs eventlog get --watch --count=4 el >elw.out & } &&
	pid=$! &&
	wait_lines 3 elw.out &&
	flux kvs eventlog append el ev4 &&
	wait $pid &&
	tail -1 elw.out | grep " ev4$"
'
test_expect_success 'eventlog get --waitcreate --watch' '
	{ flux kvs eventlog get --waitcreate --watch --count=1 el2 >elwc.out & } &&
	pid=$! &&
	sleep 0.2 &&
	flux kvs eventlog append el2 first &&
	wait $pid &&
	grep " first$" elwc.out
'
test_expect_success 'eventlog get of a missing key fails' '
	test_expect_code 1 flux kvs eventlog get nosuchlog 2>elno.err &&
	grep "No such file or directory" elno.err
'
test_expect_success 'eventlog get of a value that is not an eventlog fails' '
	test_expect_code 1 flux kvs eventlog get test.a 2>elmal.err &&
	grep "malformed" elmal.err
'
test_expect_success 'eventlog wait-event prints the event' '
	flux kvs eventlog wait-event el ev2 >we.out &&
	grep "ev2 {\"a\":1}$" we.out &&
	test_line_count = 1 we.out
'
test_expect_success 'wait-event -q prints nothing, -v prints what came before' '
	flux kvs eventlog wait-event -q el ev2 >weq.out &&
	test_must_be_empty weq.out &&
	flux kvs eventlog wait-event -v el ev2 >wev.out &&
	test_line_count = 2 wev.out &&
	flux kvs eventlog wait-event -u el ev1 >weu.out &&
	grep "^{\"timestamp\":.*\"name\":\"ev1\"}$" weu.out
'
test_expect_success 'wait-event waits for a later event' '
	{ flux kvs eventlog wait-event el later >wel.out & } &&
	pid=$! &&
	sleep 0.2 &&
	flux kvs eventlog append el later &&
	wait $pid &&
	grep " later$" wel.out
'
test_expect_success 'wait-event --timeout fails when the event does not come' '
	test_expect_code 1 flux kvs eventlog wait-event --timeout=0.3s el never \
		2>wet.err &&
	grep "wait-event timeout on event .never." wet.err
'
test_expect_success 'wait-event on a missing eventlog fails, -W waits' '
	test_expect_code 1 flux kvs eventlog wait-event nosuchlog x 2>wen.err &&
	grep "eventlog path nosuchlog not found" wen.err &&
	{ flux kvs eventlog wait-event -W el3 go >wew.out & } &&
	pid=$! &&
	sleep 0.2 &&
	flux kvs eventlog append el3 go &&
	wait $pid &&
	grep " go$" wew.out
'

#
# dump / restore
#
LONGKEY=dr.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.cccccccccccccccccccccccccccccccccccccccccccccccccc.dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd
test_expect_success 'set up content to dump' '
	flux kvs namespace create dumpns &&
	flux kvs put -N dumpns a.b=1 a.c=two "s=with space" &&
	flux kvs put -N dumpns --raw bin=- <raw.in &&
	flux kvs put -N dumpns $LONGKEY=long &&
	flux kvs mkdir -N dumpns emptydir &&
	flux kvs link -N dumpns a.b ln &&
	flux kvs link -N dumpns --target-namespace primary d.a ln2 &&
	flux kvs dir -N dumpns -R -w 0 >dump.exp
'
test_expect_success 'dump writes a tar archive' '
	flux dump -N dumpns dump.tar &&
	tar -tf dump.tar >tar.list &&
	grep "^a/b$" tar.list &&
	grep "^bin$" tar.list &&
	grep "^emptydir/$" tar.list &&
	grep "^ln$" tar.list &&
	grep "^dr/aaaa.*/dddd*$" tar.list
'
test_expect_success 'GNU tar extracts it' '
	mkdir x &&
	tar -C x -xf dump.tar &&
	printf two >x.exp &&
	cmp x.exp x/a/c &&
	cmp raw.in x/bin &&
	test "$(readlink x/ln)" = a.b &&
	test "$(readlink x/ln2)" = primary::d.a &&
	test -d x/emptydir
'
test_expect_success 'restore into a new namespace reproduces it' '
	flux kvs namespace create restorens &&
	flux restore -N restorens dump.tar &&
	flux kvs dir -N restorens -R -w 0 >restore.out &&
	test_cmp dump.exp restore.out &&
	flux kvs get -N restorens --raw bin >restore.bin &&
	cmp raw.in restore.bin &&
	flux kvs get -N restorens $LONGKEY >restore.long &&
	echo long >restore.long.exp &&
	test_cmp restore.long.exp restore.long
'
test_expect_success 'dump to stdout, restore from stdin, under --key' '
	flux dump -N dumpns - | flux restore --key=restored - &&
	flux kvs get restored.a.c >rk.out &&
	echo two >rk.exp &&
	test_cmp rk.exp rk.out &&
	flux kvs readlink restored.ln
'
test_expect_success 'dump -v counts keys' '
	flux dump -v -N dumpns dump2.tar 2>dumpv.err &&
	grep "archived 8 keys" dumpv.err
'
test_expect_success 'restore reads an archive made by GNU tar' '
	mkdir -p gnu/top/sub &&
	printf "one" >gnu/top/f1 &&
	printf "two" >gnu/top/sub/f2 &&
	(cd gnu && tar -cf ../gnu.tar top) &&
	flux restore gnu.tar &&
	test "$(flux kvs get top.f1)" = one &&
	test "$(flux kvs get top.sub.f2)" = two
'
test_expect_success 'restore of something not a tar archive fails' '
	echo garbage >garbage.tar &&
	test_expect_code 1 flux restore garbage.tar 2>garbage.err &&
	grep "truncated archive" garbage.err &&
	dd if=/dev/urandom of=garbage2.tar bs=512 count=4 2>/dev/null &&
	test_expect_code 1 flux restore garbage2.tar 2>garbage2.err &&
	grep "not a tar archive" garbage2.err
'
test_expect_success 'dump of a missing namespace fails' '
	test_expect_code 1 flux dump -N nosuchns x.tar
'
test_expect_success 'dump --checkpoint dumps the last checkpoint' '
	flux kvs put cp.k=before &&
	flux kvs sync &&
	flux dump --checkpoint cp.tar &&
	tar -xOf cp.tar cp/k >cpk.out &&
	printf before >cpk.exp &&
	cmp cpk.exp cpk.out
'
test_expect_success 'kvs stats time the commits it answered' '
	flux module stats kvs >kst.before &&
	flux kvs put stats.k=1 &&
	flux module stats kvs >kst.after &&
	jq -e ".commits >= 1 and .\"commit-seconds\" > 0
		and .\"queue-seconds\" >= 0
		and .\"queue-seconds\" <= .\"commit-seconds\"" kst.after &&
	jq -e --slurpfile b kst.before \
		".\"commit-seconds\" > \$b[0].\"commit-seconds\"" kst.after
'

test_expect_success 'stop the instance' '
	stop_instance broker
'

test_done
