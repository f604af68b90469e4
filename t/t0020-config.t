#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-only
# Copyright the flux-c authors

test_description='the broker configuration: flux start -c, flux config
get/reload/load, the config service, and the job manager purging
inactive jobs by its limits'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc"
CRED="$FLUX_BUILD_DIR/t/rpc-cred"
SIM="--setattr=system.exec.test.run_duration=0.001s"

test_expect_success 'a directory of YAML and JSON files' '
	mkdir conf.d &&
	printf "job-manager:\n  inactive-age-limit: 7d\nx:\n  s: text\n" \
		>conf.d/10-a.yaml &&
	echo "{\"job-manager\":{\"inactive-num-limit\":1000}}" >conf.d/20-b.json &&
	echo "ignored" >conf.d/README &&
	flux start -c conf.d sh -c "flux config get; flux getattr config.path" \
		>dir.out &&
	cat >dir.exp <<-EOT &&
	{"job-manager":{"inactive-age-limit":"7d","inactive-num-limit":1000},"x":{"s":"text"}}
	$PWD/conf.d
	EOT
	test_cmp dir.exp dir.out
'
test_expect_success 'flux config get: a key, types, default, quiet' '
	flux start -c conf.d sh -c "
		flux config get x.s &&
		flux config get job-manager.inactive-num-limit &&
		flux config get --type=fsd job-manager.inactive-age-limit &&
		flux config get --type=object x &&
		flux config get --default=none x.nosuch &&
		flux config get -q job-manager.inactive-age-limit && echo quiet-set
	" >get.out &&
	printf "text\n1000\n604800\n{\"s\":\"text\"}\nnone\nquiet-set\n" >get.exp &&
	test_cmp get.exp get.out
'
test_expect_success 'flux config get: unset and wrong type fail' '
	flux start -c conf.d sh -c "
		flux config get x.nosuch; echo rc=\$?
		flux config get -q x.nosuch; echo rc=\$?
		flux config get --type=integer x.s; echo rc=\$?
		flux config get --type=bogus x.s; echo rc=\$?
	" >bad.out 2>bad.err &&
	printf "rc=1\nrc=1\nrc=1\nrc=1\n" >bad.exp &&
	test_cmp bad.exp bad.out &&
	grep "x.nosuch is not set" bad.err &&
	test $(grep -c "is not set" bad.err) -eq 1 &&
	grep "x.s: the value is not of type integer" bad.err &&
	grep "unknown type bogus" bad.err
'
test_expect_success 'without -c the configuration is empty' '
	flux start flux config get >none.out &&
	echo "{}" >none.exp &&
	test_cmp none.exp none.out
'
test_expect_success 'every broker reads its own: rank 1 answers config.get' '
	flux start -s 2 -c conf.d $RPC -r 1 config.get {} >r1.out &&
	grep "\"inactive-num-limit\":1000" r1.out
'
test_expect_success 'a missing or invalid configuration: the broker does not start' '
	test_must_fail flux start -c nonexistent true 2>miss.err &&
	grep "config: .*nonexistent: No such file or directory" miss.err &&
	mkdir bad.d && cp conf.d/* bad.d/ &&
	printf "job-manager:\n  inactive-age-limit: 1d\n" >bad.d/30-c.yaml &&
	test_must_fail flux start -c bad.d true 2>dup.err &&
	grep "bad.d/30-c.yaml: job-manager.inactive-age-limit is also set in 10-a.yaml" dup.err &&
	echo "{" >bad.json &&
	test_must_fail flux start -c bad.json true 2>json.err &&
	grep "bad.json:2:0: " json.err
'
test_expect_success 'reload: a change applies; an error keeps the old one' '
	mkdir rl.d && echo "{\"v\":1}" >rl.d/a.json &&
	flux start -c rl.d sh -c "
		flux config get v &&
		echo \"{\\\"v\\\":2}\" >rl.d/a.json && flux config reload &&
		flux config get v &&
		echo \"{\" >rl.d/a.json &&
		if flux config reload 2>reload.err; then echo reloaded; fi &&
		flux config get v
	" >rl.out &&
	printf "1\n2\n2\n" >rl.exp &&
	test_cmp rl.exp rl.out &&
	grep "rl.d/a.json:2:0:" reload.err
'
test_expect_success 'load: JSON or YAML from standard input or a file' '
	printf "a:\n  b: [1, 2]\n" >load.yaml &&
	flux start sh -c "
		echo \"{\\\"a\\\":1}\" | flux config load && flux config get a &&
		flux config load load.yaml && flux config get a &&
		if echo \"[1]\" | flux config load 2>load.err; then echo loaded; fi &&
		flux config get a
	" >load.out &&
	printf "1\n{\"b\":[1,2]}\n{\"b\":[1,2]}\n" >load.exp &&
	test_cmp load.exp load.out &&
	grep "expected a table" load.err
'
test_expect_success 'config.get streams every change' '
	flux start sh -c "
		$RPC -s config.get {} >stream.out &
		pid=\$!
		while ! test -s stream.out; do sleep 0.05; done
		echo \"{\\\"n\\\":1}\" | flux config load &&
		echo \"{\\\"n\\\":2}\" | flux config load &&
		while test \$(wc -l <stream.out) -lt 3; do sleep 0.05; done
		kill \$pid
	" &&
	printf "{}\n{\"n\":1}\n{\"n\":2}\n" >stream.exp &&
	test_cmp stream.exp stream.out
'
test_expect_success 'a guest may read, not reload or load' '
	flux start sh -c "
		$CRED -u 4242 -R 2 config.get; echo get=\$?
		$CRED -u 4242 -R 2 config.reload; echo reload=\$?
		$CRED -u 4242 -R 2 config.load {}; echo load=\$?
	" >guest.out 2>&1 &&
	grep "^get=0" guest.out &&
	grep "^reload=1$" guest.out &&
	grep "^load=1$" guest.out
'
test_expect_success 'config.load with a payload that is not an object: EPROTO' '
	flux start sh -c "$RPC config.load [1]; echo rc=\$?; flux config get" \
		>eproto.out 2>&1 &&
	grep "rc=71" eproto.out && tail -1 eproto.out | grep "^{}$"
'
test_expect_success 'inactive-num-limit: the job manager keeps the newest N' '
	printf "job-manager:\n  inactive-num-limit: 3\n" >num.yaml &&
	flux start -c num.yaml sh -c "
		flux submit --cc=1-10 --quiet $SIM true &&
		flux queue drain &&
		while test \$(flux jobs -a -n | wc -l) -gt 3; do sleep 0.05; done &&
		flux jobs -a -n -o {id} | wc -l &&
		flux job stats | jq .inactive_purged
	" >num.out &&
	printf "3\n7\n" >num.exp &&
	test_cmp num.exp num.out
'
test_expect_success 'inactive-age-limit, set by a reload: jobs go once that old' '
	echo "{}" >age.json &&
	flux start -c age.json sh -c "
		flux submit --cc=1-4 --quiet $SIM true &&
		flux queue drain &&
		flux jobs -a -n | wc -l &&
		echo \"{\\\"job-manager\\\":{\\\"inactive-age-limit\\\":\\\"0.5s\\\"}}\" >age.json &&
		flux config reload &&
		while test \$(flux jobs -a -n | wc -l) -gt 0; do sleep 0.05; done &&
		flux submit --quiet $SIM true && flux queue drain &&
		flux jobs -a -n | wc -l &&
		while test \$(flux jobs -a -n | wc -l) -gt 0; do sleep 0.05; done &&
		echo gone
	" >age.out &&
	printf "4\n1\ngone\n" >age.exp &&
	test_cmp age.exp age.out
'
test_expect_success 'an invalid limit is logged and the previous one kept' '
	printf "job-manager:\n  inactive-num-limit: 2\n" >inv.yaml &&
	flux start -c inv.yaml sh -c "
		echo \"{\\\"job-manager\\\":{\\\"inactive-num-limit\\\":-1,\\\"inactive-age-limit\\\":5}}\" |
			flux config load &&
		flux submit --cc=1-5 --quiet $SIM true &&
		flux queue drain &&
		while test \$(flux jobs -a -n | wc -l) -gt 2; do sleep 0.05; done &&
		flux jobs -a -n | wc -l &&
		flux dmesg | grep \"config: job-manager\"
	" >inv.out 2>/dev/null &&
	head -1 inv.out | grep "^2$" &&
	grep "inactive-num-limit: expected an integer >= 0" inv.out &&
	grep "inactive-age-limit: expected a duration" inv.out
'
test_expect_success 'the limits apply to jobs restored at a restart, and stay applied' '
	rm -rf sd && mkdir sd &&
	flux start -Sstatedir="$PWD/sd" sh -c "
		flux submit --cc=1-6 --quiet $SIM true && flux queue drain" &&
	printf "job-manager:\n  inactive-num-limit: 2\n" >rs.yaml &&
	flux start -Sstatedir="$PWD/sd" -c rs.yaml sh -c "
		while test \$(flux jobs -a -n | wc -l) -gt 2; do sleep 0.05; done &&
		flux jobs -a -n | wc -l" >rs.out &&
	flux start -Sstatedir="$PWD/sd" flux jobs -a -n >rs2.out &&
	echo 2 >rs.exp && test_cmp rs.exp rs.out &&
	test $(wc -l <rs2.out) -eq 2
'

test_expect_success 'kvs.gc-threshold: flux shutdown collects once the KVS version is over it' '
	rm -rf sdg && mkdir sdg &&
	echo "{\"kvs\":{\"gc-threshold\":1000}}" >gc.json &&
	flux start -Sstatedir="$PWD/sdg" -c gc.json sh -c "
		flux kvs put a=1 && flux shutdown; sleep 30" 2>under.err &&
	! grep "gc-threshold" under.err &&
	test ! -e sdg/content.sqlite.gc &&
	echo "{\"kvs\":{\"gc-threshold\":3}}" >gc.json &&
	flux start -Sstatedir="$PWD/sdg" -c gc.json sh -c "
		for i in 1 2 3 4; do flux kvs put a=\$i || exit 1; done &&
		flux shutdown --skip-gc; sleep 30" 2>skip.err &&
	! grep "gc-threshold" skip.err &&
	test ! -e sdg/content.sqlite.gc &&
	flux start -Sstatedir="$PWD/sdg" -c gc.json sh -c "
		flux shutdown; sleep 30" 2>over.err &&
	grep "the KVS version [0-9]* is over kvs.gc-threshold (3)" over.err &&
	grep "will be garbage collected at the next start" over.err &&
	test -e sdg/content.sqlite.gc &&
	echo "{\"kvs\":{\"gc-threshold\":\"x\"}}" >gc.json &&
	flux start -Sstatedir="$PWD/sdg" -c gc.json sh -c "
		flux shutdown; sleep 30" 2>inval.err &&
	grep "kvs.gc-threshold: expected an integer > 0: ignored" inval.err
'

test_expect_success 'TOML: a file, and a directory mixing TOML, YAML and JSON' '
	mkdir toml.d &&
	printf "[job-manager]\ninactive-age-limit = \"7d\"\n[x]\ns = '"'"'text'"'"'\n" \
		>toml.d/10-a.toml &&
	echo "{\"job-manager\":{\"inactive-num-limit\":1000}}" >toml.d/20-b.json &&
	printf "y:\n  n: 1\n" >toml.d/30-c.yaml &&
	flux start -c toml.d flux config get >toml-dir.out &&
	echo "{\"job-manager\":{\"inactive-age-limit\":\"7d\",\"inactive-num-limit\":1000},\"x\":{\"s\":\"text\"},\"y\":{\"n\":1}}" \
		>toml-dir.exp &&
	test_cmp toml-dir.exp toml-dir.out &&
	flux start -c toml.d/10-a.toml flux config get x.s >toml-file.out &&
	echo text >toml-file.exp &&
	test_cmp toml-file.exp toml-file.out
'
test_expect_success 'TOML: an error names the file, line and column; a key set in two files' '
	printf "[a]\nb = 1\nb = 2\n" >twice.toml &&
	test_must_fail flux start -c twice.toml true 2>twice.err &&
	grep "config: .*twice.toml:3:1: b is defined twice" twice.err &&
	mkdir tbad.d && cp toml.d/* tbad.d/ &&
	printf "[x]\ns = \"again\"\n" >tbad.d/40-d.toml &&
	test_must_fail flux start -c tbad.d true 2>tdup.err &&
	grep "tbad.d/40-d.toml: x.s is also set in 10-a.toml" tdup.err
'
test_expect_success 'TOML: a flux-core system.toml loads unchanged (flux config get, reload)' '
	mkdir -p etc/flux/system/conf.d &&
	echo "[x]" >etc/flux/system/conf.d/00-x.toml &&
	flux start -c etc/flux/system/conf.d sh -c "
		cp $SHARNESS_TEST_SRCDIR/conf/flux-core-system.toml \
			etc/flux/system/conf.d/system.toml &&
		flux config reload &&
		flux config get &&
		flux config get bootstrap.hosts &&
		flux config get --type=fsd exec.kill-timeout
	" >site.out &&
	jq -S . $SHARNESS_TEST_SRCDIR/conf/flux-core-system.json \
		| jq -S ". + {x: {}}" >site.exp &&
	head -1 site.out | jq -S . >site.got &&
	test_cmp site.exp site.got &&
	sed -n 2p site.out | jq -r ".[1].host" >hosts.out &&
	echo "test[1-3]" >hosts.exp &&
	test_cmp hosts.exp hosts.out &&
	test "$(sed -n 3p site.out)" = 30
'

test_done
