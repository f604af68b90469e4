#!/bin/sh
test_description='flux jobs: default and custom formats, filters, users,
--since, --count, --json, job ids, over job-list and a stand-in journal
(t/module/journal-fake.so)'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc-cred"
FAKE="$FLUX_BUILD_DIR/t/module/.libs/journal-fake.so"
MODULES=content,content-sqlite@0,kvs,kvs-watch
ME=$(id -u)
MYNAME=$(id -un | cut -c1-8)
export FLUX_F58_FORCE_ASCII=1 TZ=UTC

ev () { # TIME NAME [CONTEXT]
	if test -n "$3"; then
		printf '{"timestamp":%s,"name":"%s","context":%s}' "$1" "$2" "$3"
	else
		printf '{"timestamp":%s,"name":"%s"}' "$1" "$2"
	fi
}
submit () { # TIME USERID
	ev $1 submit "{\"userid\":$2,\"urgency\":16,\"flags\":0,\"version\":1}"
}
jobspec () { # NAME NTASKS [QUEUE]
	q=${3:+,\"queue\":\"$3\"}
	printf '{"version":1,"resources":[{"type":"slot","count":%s,"label":"task","with":[{"type":"core","count":1}]}],"tasks":[{"command":["/bin/%s"],"slot":"task","count":{"per_slot":1}}],"attributes":{"system":{"duration":300%s}}}' $2 "$1" "$q"
}
R='{"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0"}}],"nodelist":["node[0-1]"],"starttime":1700000003,"expiration":0}}'

# 2001 done (mine), 2002 failed (4242), 2003 running (mine, queue q1),
# 2004 pending (mine), 2005 canceled pending (mine), 2006 held (4242)
test_expect_success 'create a canned journal' '
	{
	printf "{\"id\":2001,\"events\":[%s,%s,%s,%s,%s,%s],\"jobspec\":%s,\"R\":%s}\n" \
		"$(submit 1700000001 $ME)" "$(ev 1700000001.5 validate)" \
		"$(ev 1700000002 alloc)" "$(ev 1700000003 start)" \
		"$(ev 1700000004.5 finish {\"status\":0})" \
		"$(ev 1700000010 clean)" "$(jobspec hostname 2)" "$R" &&
	printf "{\"id\":2002,\"events\":[%s,%s,%s,%s,%s],\"jobspec\":%s,\"R\":%s}\n" \
		"$(submit 1700000002 4242)" "$(ev 1700000002.5 validate)" \
		"$(ev 1700000003 alloc)" "$(ev 1700000004 finish {\"status\":256})" \
		"$(ev 1700000020 clean)" "$(jobspec false 1)" "$R" &&
	printf "{\"id\":2003,\"events\":[%s,%s,%s],\"jobspec\":%s,\"R\":%s}\n" \
		"$(submit 1700000003 $ME)" "$(ev 1700000003.5 validate)" \
		"$(ev 1700000004 alloc)" "$(jobspec averyverylongname 4 q1)" "$R" &&
	printf "{\"id\":2004,\"events\":[%s,%s,%s,%s],\"jobspec\":%s}\n" \
		"$(submit 1700000004 $ME)" "$(ev 1700000004.5 validate)" \
		"$(ev 1700000004.6 depend)" \
		"$(ev 1700000004.7 priority {\"priority\":16})" \
		"$(jobspec sleep 1)" &&
	printf "{\"id\":2005,\"events\":[%s,%s,%s,%s],\"jobspec\":%s}\n" \
		"$(submit 1700000005 $ME)" "$(ev 1700000005.5 validate)" \
		"$(ev 1700000030 exception "{\"type\":\"cancel\",\"severity\":0,\"note\":\"\"}")" \
		"$(ev 1700000031 clean)" "$(jobspec sleep 1)" &&
	printf "{\"id\":2006,\"events\":[%s,%s,%s,%s],\"jobspec\":%s}\n" \
		"$(submit 1700000006 4242)" "$(ev 1700000006.5 validate)" \
		"$(ev 1700000006.6 depend)" \
		"$(ev 1700000006.7 priority {\"priority\":0})" \
		"$(jobspec held 1)" &&
	echo "{\"id\":-1,\"events\":[]}"
	} >journal.txt &&
	jq -c . journal.txt >/dev/null
'

test_expect_success 'start an instance with the fake journal and job-list' '
	touch keepalive
	flux start -Sbroker.modules=$MODULES \
		sh -c "echo \$FLUX_URI >uri.tmp && mv uri.tmp uri && n=0 &&
		while test -e keepalive && test \$n -lt 9000; do
			sleep 0.1; n=\$((n+1)); done" \
		>broker.log 2>&1 3>&- 4>&- &
	echo $! >broker.pid &&
	for i in $(seq 300); do test -s uri && break; sleep 0.1; done &&
	FLUX_URI=$(cat uri) && export FLUX_URI &&
	flux module load --name=job-manager $FAKE "file=$PWD/journal.txt" &&
	flux module load job-list
'

test_expect_success 'flux jobs: my pending and running jobs, default format' '
	flux jobs >default.out &&
	sed -n 1p default.out | grep "^       JOBID QUEUE    USER     NAME       ST NTASKS NNODES     TIME INFO$" &&
	test_line_count = 3 default.out &&
	sed -n 2p default.out | grep "^         fbZ  *$MYNAME  *sleep       S      1      -       5m $" &&
	sed -n 3p default.out | grep "^         fbY q1  *$MYNAME  *averyvery+  R      4      2  *[0-9.]*d node\[0-1\]$"
'
test_expect_success 'the id is printed in F58' '
	flux jobs -o "{id.f58} {id} {id.dec} {id.hex} {id.f58plain}" -n 2004 \
		>id.out &&
	echo "fbZ fbZ 2004 0x7d4 fbZ" >id.exp &&
	test_cmp id.exp id.out
'
# flux-core formats {id}, a JobID (an int whose str() is F58), with
# Python format(): F58 when there is no spec or it takes str() (!s, :h),
# a decimal number, right-aligned, with any other spec
test_expect_success '{id} with a spec is formatted as flux-core formats it' '
	flux jobs -o "{id:}|{id:<6}|{id:>6}|{id:h}|{id!s:>5}|{id:06}" -n 2004 \
		>idspec.out &&
	echo "fbZ|2004  |  2004|fbZ|  fbZ|002004" >idspec.exp &&
	test_cmp idspec.exp idspec.out
'
test_expect_success '!s of a string or a bool field is that string' '
	flux jobs -o "{name!s}|{name!s:>7}|{success!s}|{ntasks!s:>3}" -n 2001 \
		>conv-s.out &&
	echo "hostname|hostname|True|  2" >conv-s.exp &&
	test_cmp conv-s.exp conv-s.out
'
test_expect_success 'flux jobs -a: with inactive jobs, most recent first' '
	flux jobs -a -n -o "{id.dec} {status_abbrev} {status}" >a.out &&
	cat >a.exp <<-EOF &&
	2004 S SCHED
	2003 R RUN
	2005 CA CANCELED
	2001 CD COMPLETED
	EOF
	test_cmp a.exp a.out
'
test_expect_success 'flux jobs -A and -u select users' '
	flux jobs -A -n -o "{id.dec}" | tr "\n" " " >A.out &&
	printf "2004 2006 2003 " >A.exp && test_cmp A.exp A.out &&
	flux jobs -a -u 4242 -n -o "{id.dec} {userid}" >u.out &&
	printf "2006 4242\n2002 4242\n" >u.exp && test_cmp u.exp u.out &&
	flux jobs -a --user=all -n -o "{id.dec}" | wc -l >all.out &&
	echo 6 >all.exp && test_cmp all.exp all.out &&
	test_must_fail flux jobs -u nosuchuser_xyz 2>baduser.err &&
	grep "Invalid user" baduser.err
'
test_expect_success 'flux jobs --filter: states and results' '
	flux jobs -A -n -f failed,canceled -o "{id.dec}" | tr "\n" " " >f1.out &&
	printf "2005 2002 " >f1.exp && test_cmp f1.exp f1.out &&
	flux jobs -A -n --filter=sched -o "{id.dec}" | tr "\n" " " >f2.out &&
	printf "2004 2006 " >f2.exp && test_cmp f2.exp f2.out &&
	flux jobs -A -n -f running,completed -o "{id.dec}" | tr "\n" " " >f3.out &&
	printf "2003 2001 " >f3.exp && test_cmp f3.exp f3.out &&
	test_must_fail flux jobs -f bogus 2>f4.err &&
	grep "Invalid filter specified: bogus" f4.err
'
test_expect_success 'flux jobs --since, --name, --queue, --count' '
	flux jobs -A -n --since=1700000025 -o "{id.dec}" | tr "\n" " " >s.out &&
	printf "2004 2006 2003 2005 " >s.exp && test_cmp s.exp s.out &&
	flux jobs -A -n --since=-3650d -o "{id.dec}" | wc -l | grep -w 6 &&
	test_must_fail flux jobs --since=2999-01-01 2>future.err &&
	grep "appears to be in the future" future.err &&
	flux jobs -a -n --name=sleep -o "{id.dec}" | tr "\n" " " >n.out &&
	printf "2004 2005 " >n.exp && test_cmp n.exp n.out &&
	test "$(flux jobs -a -n --queue=q1 -o "{id.dec}")" = 2003 &&
	flux jobs -A -n -c 2 -o "{id.dec}" | tr "\n" " " >c.out &&
	printf "2004 2006 " >c.exp && test_cmp c.exp c.out
'
test_expect_success 'flux jobs -n leaves out the header, -o sets the format' '
	flux jobs -a -n -o "{id.dec}:{name}:{ntasks}:{nnodes}:{ranks}" >o.out &&
	cat >o.exp <<-EOF &&
	2004:sleep:1::
	2003:averyverylongname:4:2:[0-1]
	2005:sleep:1::
	2001:hostname:2:2:[0-1]
	EOF
	test_cmp o.exp o.out &&
	flux jobs -a -o "{id:>6}|{name:^9.5}|{ntasks:<3}|" >h.out &&
	head -2 h.out >h2.out &&
	printf "%s\n" " JOBID|  NAME   |NTASKS|" "  2004|  sleep  |1  |" >h.exp &&
	test_cmp h.exp h2.out
'
test_expect_success 'time fields and conversions' '
	flux jobs -a -n -o "{id.dec} {t_submit!D} {t_inactive!D:h} {runtime!F:h} {runtime!H:h}" \
		2001 2004 >t.out &&
	cat >t.exp <<-EOF &&
	2001 2023-11-14T22:13:21 2023-11-14T22:13:30 2.500s 0:00:02
	2004 2023-11-14T22:13:24 - - -
	EOF
	test_cmp t.exp t.out &&
	flux jobs -n -o "{t_submit!d:%H:%M:%S::>10}|{t_submit}" 2001 >d.out &&
	echo "  22:13:21|1700000001.0" >d.exp &&
	test_cmp d.exp d.out
'
test_expect_success 'result, exception, returncode and contextual fields' '
	flux jobs -n -o "{id.dec} {result} {result_abbrev} {success} {exception.occurred} {exception.type} {returncode} {waitstatus} {inactive_reason}" \
		2001 2002 2005 >r.out &&
	cat >r.exp <<-EOF &&
	2001 COMPLETED CD True False  0 0 Exit 0
	2002 FAILED F False False  1 256 Exit 1
	2005 CANCELED CA False True cancel -128  Canceled
	EOF
	test_cmp r.exp r.out &&
	flux jobs -n -o "{id.dec} {contextual_info}" 2006 2004 2003 >ci.out &&
	printf "%s\n" "2006 priority-hold" "2004 " "2003 node[0-1]" >ci.exp &&
	test_cmp ci.exp ci.out
'
test_expect_success '?: leaves out a column empty for every job' '
	flux jobs -n -o "{id.dec} ?:{queue} {name}" 2001 >q1.out &&
	echo "2001 hostname" >q1.exp && test_cmp q1.exp q1.out &&
	flux jobs -n -o "{id.dec} ?:{queue} {name}" 2001 2003 >q2.out &&
	printf "%s\n" "2001  hostname" "2003 q1 averyverylongname" >q2.exp &&
	test_cmp q2.exp q2.out
'
test_expect_success 'named formats: deps, long, endreason, help' '
	flux jobs -o deps >deps.out &&
	head -1 deps.out | grep "JOBID.*URG.*PRI.*STATE.*DEPENDENCIES" &&
	flux jobs -a -o long >long.out &&
	head -1 long.out | grep "STATUS" &&
	flux jobs -n -o endreason 2005 2001 >endreason.out &&
	test_debug "cat endreason.out" &&
	sed -n 1p endreason.out | grep "^ *fb[1-9A-Za-z]* .* sleep  *CA  *[A-Z][a-z][a-z][0-9][0-9] [0-9:]* Canceled" &&
	sed -n 2p endreason.out | grep "^ *fb[1-9A-Za-z]* .* hostname  *CD  *[A-Z][a-z][a-z][0-9][0-9] [0-9:]* Exit 0$" &&
	flux jobs --format=help >help.out &&
	grep default help.out && grep deps help.out && grep endreason help.out &&
	FLUX_JOBS_FORMAT_DEFAULT="{id.dec}" flux jobs -n >env.out &&
	printf "2004\n2003\n" >env.exp && test_cmp env.exp env.out
'
test_expect_success 'bad formats are errors' '
	test_must_fail flux jobs -o "{nosuchfield}" 2>bf1.err &&
	grep "Unknown format field: nosuchfield" bf1.err &&
	test_must_fail flux jobs -o "{id" 2>bf2.err &&
	grep "unmatched" bf2.err &&
	test_must_fail flux jobs -o nosuchformat 2>bf3.err &&
	grep "No such format nosuchformat" bf3.err
'
test_expect_success 'job ids: the jobs asked for; unknown ids are reported' '
	flux jobs -n -o "{id.dec}" 2005 2001 >ids.out &&
	printf "2005\n2001\n" >ids.exp && test_cmp ids.exp ids.out &&
	test_must_fail flux jobs -n -o "{id.dec}" 2001 999 >ids2.out 2>ids2.err &&
	grep "JobID 999 unknown" ids2.err &&
	echo 2001 >ids2.exp && test_cmp ids2.exp ids2.out &&
	test_must_fail flux jobs notanid 2>ids3.err &&
	grep "invalid JOBID" ids3.err
'
test_expect_success 'flux jobs --json' '
	flux jobs -a --json >j.json &&
	jq -e ".jobs | length == 4" j.json &&
	jq -e ".jobs[3].id == 2001 and .jobs[3].state == \"INACTIVE\"
		and .jobs[3].result == \"COMPLETED\" and .jobs[3].returncode == 0
		and .jobs[3].runtime == 2.5 and .jobs[3].username == \"$(id -un)\"
		and .jobs[3].exception.occurred == false" j.json &&
	flux jobs --json 2005 >j1.json &&
	jq -e ".id == 2005 and .status == \"CANCELED\"
		and .exception.type == \"cancel\"" j1.json
'
test_expect_success 'flux jobs --stats: the summary of all users, then the list' '
	flux jobs --stats -n -o "{id.dec}" >st.out &&
	cat >st.exp <<-EOF &&
	1 running, 1 completed, 1 failed, 1 canceled, 0 timeout, 2 pending
	2004
	2003
	EOF
	test_cmp st.exp st.out
'
test_expect_success 'flux jobs --stats --queue: the queue'"'"'s summary' '
	flux jobs --stats --queue=q1 -n -o "{id.dec}" >stq.out &&
	cat >stq.exp <<-EOF &&
	1 running, 0 completed, 0 failed, 0 canceled, 0 timeout, 0 pending
	2003
	EOF
	test_cmp stq.exp stq.out &&
	test_must_fail flux jobs --stats-only --queue=nosuch 2>stq.err &&
	grep "no jobs in queue nosuch" stq.err
'
test_expect_success 'flux jobs --stats-only: the summary alone, 0 while jobs are active' '
	flux jobs --stats-only -a -o "{id.dec}" >so.out &&
	head -n 1 st.exp >so.exp && test_cmp so.exp so.out &&
	flux job stats >stats.json &&
	jq -e ".job_states.run == 1 and .job_states.sched == 2
		and .job_states.inactive == 3 and .job_states.total == 6
		and .successful == 1 and .failed == 1 and .canceled == 1" stats.json &&
	test_must_fail flux job stats extra 2>stats.err &&
	grep "expected no arguments" stats.err
'
test_expect_success 'flux jobs without job-list fails with a message' '
	flux module remove job-list &&
	test_must_fail flux jobs 2>nojl.err &&
	grep "job-list.list" nojl.err &&
	flux module load job-list
'
test_expect_success 'flux jobs -a over 1000 jobs' '
	flux module remove job-list &&
	flux module remove job-manager &&
	flux module load --name=job-manager $FAKE synth=1000 &&
	flux module load job-list &&
	flux jobs -a -c 0 -n >big.out &&
	test_line_count = 1000 big.out &&
	test $(grep -c " CD " big.out) = 900 &&
	test $(grep -c " F " big.out) = 100 &&
	flux jobs -a -c 0 -n -o "{id.dec}" | sort -n -r | head -1 >first.exp &&
	flux jobs -a -c 1 -n -o "{id.dec}" >first.out &&
	test_cmp first.exp first.out
'
test_expect_success 'flux jobs --help' '
	flux jobs --help | grep "Usage: flux jobs"
'

test_expect_success 'stop the instance' '
	rm -f keepalive &&
	wait $(cat broker.pid)
'
test_done
