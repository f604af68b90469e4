#!/bin/sh
test_description='guest access (RFC 12): every row of doc/guide/access.md,
asked as a guest (userid 4242, role user) of an instance whose owner runs
a job; refusals are EPERM with a message, allowed calls succeed'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

RPC="$FLUX_BUILD_DIR/t/rpc-cred"
G="$RPC -u 4242 -R 2"

# walk.sh: in the instance, the owner submits a job and waits for it to
# run, then every row is asked as the guest.  Output: one line per row,
# "NAME RC MESSAGE" (RC is the errno, 0 on success).  Rows are
# "NAME EXPECT TOPIC PAYLOAD"; a topic "-s:T" is a streaming request; JOBID
# is the owner's running job.  A refusal must say why: its message may not
# be strerror(EPERM) alone.
cat >rows <<'EOT'
broker.ping 0 broker.ping {}
attr.get 0 attr.get {"name":"size"}
attr.list 0 attr.list {}
attr.set 1 attr.set {"name":"log-stderr-level","value":"7"}
module.list 0 module.list {}
module.load 1 module.load {"path":"/nonexistent.so","args":[]}
module.remove 1 module.remove {"name":"job-list"}
kvs.stats-get 1 kvs.stats-get {}
state-machine.get 0 state-machine.get {}
shutdown.start 1 shutdown.start {"loglevel":3}
overlay.topology 0 overlay.topology {"rank":0}
overlay.subtree-status 1 overlay.subtree-status {"rank":0}
config.get 0 config.get {}
config.reload 1 config.reload {}
config.load 1 config.load {"config":{}}
log.append 1 log.append {}
log.dmesg 1 log.dmesg {"follow":false,"nobacklog":false}
log.clear 1 log.clear {}
groups.get 0 groups.get {"name":"broker.online"}
groups.join 1 groups.join {"name":"x"}
event.publish.user 0 event.publish {"topic":"mygroup.hello","flags":0}
event.publish.job-exception 1 event.publish {"topic":"job-exception","flags":0}
event.publish.shell 1 event.publish {"topic":"shell-1.kill","flags":0}
event.publish.kvs 1 event.publish {"topic":"kvs.namespace-primary-setroot","flags":0}
content.load 1 content.load {}
content.store 1 content.store {}
content.flush 1 content.flush {}
kvs.lookup.primary 1 kvs.lookup {"key":"job","flags":0,"namespace":"primary"}
kvs.commit.primary 1 kvs.commit {"namespace":"primary","flags":0,"ops":[{"key":"x","flags":0,"dirent":{"data":"MQ==","type":"val","ver":1}}]}
kvs.getroot.primary 1 kvs.getroot {"namespace":"primary","flags":0}
kvs.namespace-create 1 kvs.namespace-create {"namespace":"x","owner":4242,"flags":0}
kvs.namespace-list 1 kvs.namespace-list {}
kvs.lookup.other-guest-ns 1 kvs.lookup {"key":"eventlog","flags":0,"namespace":"job-JOBID"}
kvs-watch.lookup.primary 1 kvs-watch.lookup {"key":"job","flags":0,"namespace":"primary"}
resource.status 0 resource.status {}
resource.drain 1 resource.drain {"targets":"0","mode":"overwrite"}
resource.undrain 1 resource.undrain {"targets":"0"}
resource.acquire 1 resource.acquire {}
sched.alloc 1 sched.alloc {}
sched.resource-status 0 sched.resource-status {}
job-ingest.submit.none 1 job-ingest.submit {"J":"dmVyc2lvbgBpMQBtZWNoYW5pc20Ac25vbmUAdXNlcmlkAGk0MjQyAA==.e30=.none","urgency":16,"flags":0}
job-manager.submit 1 job-manager.submit {"jobs":[]}
job-manager.list-other-kill 1 job-manager.kill {"id":JOBID,"signum":15}
job-manager.raise-other 1 job-manager.raise {"id":JOBID,"type":"cancel","severity":0,"note":"x"}
job-manager.urgency-other 1 job-manager.urgency {"id":JOBID,"urgency":0}
job-manager.memo-other 1 job-manager.memo {"id":JOBID,"memo":{"a":1}}
job-manager.getattr-other 1 job-manager.getattr {"id":JOBID,"attrs":["jobspec"]}
job-manager.raiseall-all 1 job-manager.raiseall {"dry_run":true,"userid":-1,"states":62,"severity":0,"type":"cancel"}
job-manager.raiseall-own 0 job-manager.raiseall {"dry_run":true,"userid":4242,"states":62,"severity":0,"type":"cancel"}
job-manager.killall-all 1 job-manager.killall {"dry_run":true,"userid":-1,"signum":15}
job-manager.drain 1 job-manager.drain {}
job-manager.queue-enable 1 job-manager.queue-enable {"enable":false,"all":true}
job-manager.queue-start 1 job-manager.queue-start {"start":false,"all":true}
job-manager.purge 1 job-manager.purge {"age_limit":0,"num_limit":0,"force":1,"batch":10}
job-manager.post-event 1 job-manager.post-event {"id":JOBID,"name":"x"}
job-manager.wait 1 job-manager.wait {"id":JOBID}
job-manager.events-journal 1 job-manager.events-journal {}
job-manager.queue-list 0 job-manager.queue-list {}
job-manager.stats-get 0 job-manager.stats-get {}
job-list.list 0 job-list.list {"max_entries":0,"attrs":["userid","state"]}
job-list.list-id 0 job-list.list-id {"id":JOBID,"attrs":["userid","state","name"]}
job-info.lookup.eventlog-other 1 job-info.lookup {"id":JOBID,"keys":["eventlog"],"flags":0}
job-info.lookup.jobspec-other 1 job-info.lookup {"id":JOBID,"keys":["jobspec"],"flags":0}
job-info.lookup.J-other 1 job-info.lookup {"id":JOBID,"keys":["J"],"flags":0}
job-info.lookup.R-other 1 job-info.lookup {"id":JOBID,"keys":["R"],"flags":0}
job-info.eventlog-watch.guest-other 1 -s:job-info.eventlog-watch {"id":JOBID,"path":"guest.output","flags":0}
rexec.exec 1 rexec.exec {"cmd":{"cwd":"/","cmdline":["true"],"env":{},"opts":{},"channels":[]},"flags":0,"local_flags":0}
rexec.list 1 rexec.list {}
exec-agent.start 1 exec-agent.start {}
exec-agent.kill 1 exec-agent.kill {}
exec-agent.barrier-other 1 exec-agent.barrier {"id":JOBID,"seq":1,"ranks":"0"}
exec-agent.shell-info-other 1 exec-agent.shell-info {"id":JOBID}
job-exec.critical-ranks-other 1 job-exec.critical-ranks {"id":JOBID,"ranks":"0"}
EOT

cat >walk.sh <<EOT
id=\$(flux submit sleep 300) && flux job wait-event -t 60 \$id start >/dev/null || exit 1
jobid=\$(flux job id --to=dec \$id)
while read name expect topic payload; do
	payload=\$(echo "\$payload" | sed "s/JOBID/\$jobid/g")
	case \$topic in
	-s:*) opt=-s; topic=\${topic#-s:} ;;
	*) opt= ;;
	esac
	$G \$opt \$topic "\$payload" >out.\$name 2>err.\$name
	echo "\$name \$? \$(head -1 err.\$name)"
done <rows >walked
echo \$jobid >jobid
flux cancel \$id
EOT

test_expect_success 'walk the table as a guest' '
	flux start sh walk.sh &&
	test $(wc -l <walked) = $(wc -l <rows) &&
	cat walked
'
while read name expect topic payload; do
	test_expect_success "$name: $(test $expect = 0 && echo allowed || echo EPERM)" "
		grep \"^$name \" walked >got.$name &&
		read n rc msg <got.$name &&
		test \"\$rc\" = $expect &&
		if test $expect != 0; then
			test -n \"\$msg\" &&
			test \"\${msg#*: }\" != \"Operation not permitted\"
		fi
	"
done <rows

test_expect_success 'job-list.list: the guest sees the owner'"'"'s job' '
	grep "\"id\":$(cat jobid)," out.job-list.list
'

# A real guest (uid 4242 through the socket) with munge: its own jobs.
if test "$(id -u)" = 0 && test -x /usr/sbin/munged && command -v munge >/dev/null
then
	test_set_prereq MUNGE
fi
MUNGEDIR=$(pwd)/munge
test_expect_success MUNGE 'start a private munged' '
	$SHARNESS_TEST_SRCDIR/munge-helper.sh start "$MUNGEDIR"
'
cat >own.sh <<EOT
chmod 755 \$(flux getattr rundir) || exit 1
G="setpriv --reuid=4242 --regid=4242 --clear-groups"
oid=\$(flux submit sleep 300) && flux job wait-event -t 60 \$oid start >/dev/null || exit 1
gid=\$(cd / && \$G flux submit --urgency=0 true) || exit 1
echo "submit 0"
\$G flux jobs -A -n -o "{id.dec} {userid}" >jobs.out; echo "jobs \$?"
\$G flux job urgency \$gid 0; echo "urgency-own \$?"
\$G flux job urgency \$oid 10 2>urgency.err; echo "urgency-other \$?"
\$G flux job info \$gid jobspec >/dev/null; echo "info-own \$?"
\$G flux job info \$oid jobspec 2>info.err; echo "info-other \$?"
\$G flux cancel \$oid 2>cancel.err; echo "cancel-other \$?"
\$G flux cancel \$gid; echo "cancel-own \$?"
flux job wait-event -t 60 \$gid clean >/dev/null; echo "clean \$?"
echo \$(flux job id --to=dec \$oid) \$(flux job id --to=dec \$gid) >ids
flux cancel \$oid
EOT
test_expect_success MUNGE 'a real guest acts on its own job and not the owner'"'"'s' '
	FLUX_MUNGE_SOCKET="$MUNGEDIR/munge.socket" \
		flux start -Saccess.allow-guest-user=true sh own.sh \
		>own.out 2>own.err;
	cat own.out &&
	cat >own.exp <<-EOT &&
	submit 0
	jobs 0
	urgency-own 0
	urgency-other 1
	info-own 0
	info-other 1
	cancel-other 1
	cancel-own 0
	clean 0
	EOT
	test_cmp own.exp own.out &&
	set -- $(cat ids) &&
	grep "^$1 $(id -u)\$" jobs.out &&
	grep "^$2 4242\$" jobs.out &&
	grep "own jobs" urgency.err &&
	grep "another user" info.err &&
	cat cancel.err && test -s cancel.err
'
test_expect_success MUNGE 'stop munged' '
	$SHARNESS_TEST_SRCDIR/munge-helper.sh stop "$MUNGEDIR"
'

# A response from a client is routed only if the broker handed that
# client the request it answers: a forger that registered a service gets
# one request from the victim, then answers the victim's other RPC (a
# kvs.wait-version that stays pending) by its route and matchtag.
if test "$(id -u)" = 0 && command -v setpriv >/dev/null
then
	test_set_prereq ROOT_SETPRIV
fi
cat >forge.sh <<EOT
chmod 755 \$(flux getattr rundir) || exit 1
for who in owner guest; do
	if test \$who = guest; then
		G="setpriv --reuid=4242 --regid=4242 --clear-groups"; svc=4242-svc
	else
		G=; svc=\$(id -u)-svc
	fi
	\$G $FLUX_BUILD_DIR/t/client-flood forge \$svc >forge.\$who &
	for i in \$(seq 600); do grep -q registered forge.\$who && break; sleep 0.1; done
	$FLUX_BUILD_DIR/t/client-flood victim \$svc >victim.\$who
	wait
done
flux dmesg >forge.dmesg
EOT
test_expect_success ROOT_SETPRIV 'a client (owner or guest) cannot answer a request it was not given' '
	flux start -Saccess.allow-guest-user=true sh forge.sh &&
	for who in owner guest; do
		cat forge.$who victim.$who &&
		grep "^forged [1-9]" forge.$who &&
		grep "^A: {\"ok\":\"legit\"}" victim.$who &&
		grep "^B: pending" victim.$who || return 1
	done &&
	grep "sent a response kvs.wait-version (matchtag [0-9]*) to a request it was not given: dropped" forge.dmesg
'

# A request's first route names its sender to the services (a disconnect
# ends that sender's watches): a guest may not put routes of its own
# below the id the broker gives it; the owner may (a proxy routing for
# its own clients).
cat >route.sh <<EOT
chmod 755 \$(flux getattr rundir) || exit 1
G="setpriv --reuid=4242 --regid=4242 --clear-groups"
CLIENT_FLOOD_ROUTE=someone-else \$G $FLUX_BUILD_DIR/t/client-flood pending any broker.ping 1 >route.guest &
g=\$!
CLIENT_FLOOD_ROUTE=someone-else $FLUX_BUILD_DIR/t/client-flood pending any broker.ping 1 >route.owner &
o=\$!
for i in \$(seq 600); do test -s route.guest && test -s route.owner && break; sleep 0.1; done
kill -USR1 \$g \$o
wait
EOT
test_expect_success ROOT_SETPRIV 'a guest request carrying routes of its own is refused; the owner may route' '
	flux start -Saccess.allow-guest-user=true sh route.sh &&
	cat route.guest route.owner &&
	grep "^answered 1 refused 1" route.guest &&
	grep "^refused: Protocol error: a guest.s request may not carry routes of its own" route.guest &&
	grep "^answered 1 refused 0" route.owner
'


# What a guest's open requests make the services hold is bounded: with
# broker.client-sendq-limit=1M a guest connection keeps at most 512
# requests unanswered (half the limit at 1 KiB each), and the user 4
# times that on all its connections.  Streaming overlay.health requests
# stay open; errors (ENOSYS) end requests, so a guest may send any number
# of those; a guest that left took its charge with it; the owner is not
# counted.
cat >inflight.sh <<EOT
chmod 755 \$(flux getattr rundir) || exit 1
G="setpriv --reuid=4242 --regid=4242 --clear-groups"
F=$FLUX_BUILD_DIR/t/client-flood
waitfor () {
	for i in \$(seq 600); do grep -q answered \$1 && return 0; sleep 0.1; done
	return 1
}
\$G \$F pending any overlay.health 600 >inflight.1 &
p1=\$!
waitfor inflight.1 || exit 1
\$G \$F pending any nosuch.service 2000 >inflight.enosys &
p2=\$!
waitfor inflight.enosys || exit 1
pids="\$p1 \$p2"
for i in 2 3 4 5; do
	\$G \$F pending any overlay.health 600 >inflight.user.\$i &
	pids="\$pids \$!"
	waitfor inflight.user.\$i || exit 1
done
kill -USR1 \$pids && wait \$pids
\$G \$F pending any overlay.health 600 >inflight.2 &
p3=\$!
\$F pending any overlay.health 600 >inflight.owner &
p4=\$!
waitfor inflight.2 && waitfor inflight.owner || exit 1
kill -USR1 \$p3 \$p4 && wait \$p3 \$p4
flux ping -c 1 broker >/dev/null
EOT
test_expect_success ROOT_SETPRIV 'a guest keeps a bounded number of requests open' '
	flux start -Saccess.allow-guest-user=true \
		-Sbroker.client-sendq-limit=1M sh inflight.sh &&
	cat inflight.1 inflight.enosys inflight.2 inflight.owner &&
	grep "^answered 600 refused 88$" inflight.1 &&
	grep "^refused: No space left on device: this connection holds too much: 512 requests not answered yet (broker.client-sendq-limit)" inflight.1 &&
	grep "^answered 2000 refused 2000$" inflight.enosys &&
	grep "^refused: Function not implemented" inflight.enosys &&
	grep "^answered 600 refused 88$" inflight.user.2 &&
	grep "^answered 600 refused 88$" inflight.user.3 &&
	grep "^answered 600 refused 88$" inflight.user.4 &&
	grep "^answered 600 refused 600$" inflight.user.5 &&
	grep "^refused: No space left on device: user 4242 holds too much: 2048 requests not answered yet on its connections (broker.client-sendq-limit)" inflight.user.5 &&
	grep "^answered 600 refused 88$" inflight.2 &&
	grep "^answered 600 refused 0$" inflight.owner
'

# A guest user holds at most broker.guest-connection-limit connections;
# the owner is not counted, and a guest's connections that closed count
# no more.
cat >conns.sh <<EOT
chmod 755 \$(flux getattr rundir) || exit 1
G="setpriv --reuid=4242 --regid=4242 --clear-groups"
\$G $FLUX_BUILD_DIR/t/client-flood subscribe 4 >conns.hold &
p=\$!
for i in \$(seq 600); do grep -q ready conns.hold && break; sleep 0.1; done
\$G flux getattr size >conns.guest 2>&1
echo "guest \$?" >>conns.rc
flux getattr size >conns.owner 2>&1
echo "owner \$?" >>conns.rc
kill -USR1 \$p && wait \$p
\$G flux getattr size >conns.after 2>&1
echo "after \$?" >>conns.rc
flux dmesg >conns.dmesg
EOT
test_expect_success ROOT_SETPRIV 'a guest holds at most broker.guest-connection-limit connections' '
	flux start -Saccess.allow-guest-user=true \
		-Sbroker.guest-connection-limit=4 sh conns.sh &&
	cat conns.rc conns.guest &&
	grep "^ready 4" conns.hold &&
	printf "guest 1\nowner 0\nafter 0\n" >conns.rc.exp &&
	test_cmp conns.rc.exp conns.rc &&
	grep "connection refused by broker: Too many open files" conns.guest &&
	grep "local connector: refused a connection of uid 4242: it holds 4 connections (broker.guest-connection-limit)" conns.dmesg &&
	flux start flux getattr broker.guest-connection-limit >conns.dflt &&
	test $(cat conns.dflt) -ge 16
'

# The job shell's own services: a guest asking the owner's job shell to
# take a task's exit (task-exit, which the shells send without waiting
# for an answer) or an exception gets EPERM with a message, and nothing
# is written into the owner's job: before, the task-exit request went
# unanswered (the guest waited until its timeout) and was logged by the
# shell as malformed; the exception's EPERM had no text.
cat >shellsvc.sh <<EOT
chmod 755 \$(flux getattr rundir) || exit 1
G="setpriv --reuid=4242 --regid=4242 --clear-groups"
id=\$(flux submit sleep 300) && flux job wait-event -t 60 \$id start >/dev/null || exit 1
svc=\$(id -u)-shell-\$(flux job id --to=f58plain \$id)
flux job wait-event -t 60 -p exec \$id shell.start >/dev/null || exit 1
for m in task-exit exception; do
	timeout 60 \$G $RPC \$svc.\$m '{"localid":0,"rank":0,"state":"Exited","pid":1,"wait_status":0,"signaled":0,"exitcode":0,"type":"x","severity":0,"shell_rank":0}' 2>\$m.err
	echo "\$m \$?"
done
flux cancel \$id
flux job attach \$id >shellsvc.output 2>&1
true
EOT
test_expect_success ROOT_SETPRIV 'a guest cannot feed the owner'"'"'s job shell task-exit or exception requests' '
	flux start -Saccess.allow-guest-user=true sh shellsvc.sh >shellsvc.out &&
	cat shellsvc.out task-exit.err exception.err &&
	grep "^task-exit 1$" shellsvc.out &&
	grep "^exception 1$" shellsvc.out &&
	grep "job belongs to another user" task-exit.err &&
	grep "job belongs to another user" exception.err &&
	! grep "malformed task-exit" shellsvc.output
'

test_done
