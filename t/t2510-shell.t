#!/bin/sh
test_description='flux-shell run by hand against one broker, with a
stand-in for the exec-agent (t/module/agent-fake.c): task environment,
ranks and task maps, cwd, rlimits, affinity, exit codes, output into the
guest namespace and its bound, output and input files, the stdin service,
signals and the kill event, PMI-1 across two shells of one job'

. "$SHARNESS_TEST_SRCDIR/sharness-setup.sh"

SHELL_BIN="$FLUX_BUILD_DIR/src/shell/flux-shell"
AGENT_SO="$FLUX_BUILD_DIR/t/module/.libs/agent-fake.so"
PMI_CLIENT="$FLUX_BUILD_DIR/t/pmi-client"
RPC="$FLUX_BUILD_DIR/t/rpc"
MODULES=content,kvs,kvs-watch

# R_lite of NNODES ranks (0..) with CORES and optional GPUS each
make_R () {
	ranks=0; test $1 -gt 1 && ranks="0-$(($1-1))"
	gpu=""; test -n "$3" && gpu=",\"gpu\":\"$3\""
	echo "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"$ranks\",\
\"children\":{\"core\":\"$2\"$gpu}}],\"starttime\":0,\"expiration\":0}}"
}

# job ID NNODES CORES [GPUS] -- SUBMIT-ARGS...: write the job record the
# fake agent reads and create the guest namespace
job () {
	id=$1 nnodes=$2 cores=$3 gpus=
	shift 3
	if test "$1" != "--"; then gpus=$1; shift; fi
	shift
	key=$(flux job id --to=dothex $id) &&
	flux submit --dry-run --env=-* --env=PATH=/usr/bin:/bin "$@" >js.$id &&
	make_R $nnodes $cores $gpus >R.$id &&
	flux kvs put -r job.$key.jobspec="$(cat js.$id)" \
		job.$key.R="$(cat R.$id)" &&
	flux kvs namespace create job-$id
}

# wait_event ID KEY EVENT: wait (bounded) for EVENT in eventlog KEY of job ID
wait_event () {
	timeout 60 flux kvs eventlog wait-event --namespace=job-$1 -W $2 $3
}

getlog () {
	flux kvs eventlog get --namespace=job-$1 $2
}

# the data written to stream $2 by task rank $3 of job $1
task_output () {
	getlog $1 output | grep "\"stream\":\"$2\",\"rank\":\"$3\",\"data\"" |
		sed 's/.*"data":"\(.*\)"}$/\1/'
}

# "STREAM RANK" for each task rank an EOF entry of job $1's output names
# (the leader writes the EOFs of many tasks as one entry, rank an idset)
eof_pairs () {
	getlog $1 output |
	sed -n "s/.*\"stream\":\"\([a-z]*\)\",\"rank\":\"\([0-9,-]*\)\",\"eof\":true.*/\1 \2/p" |
	while read s r; do
		echo "$r" | tr , "\n" | while IFS=- read a b; do
			for i in $(seq $a ${b:-$a}); do echo "$s $i"; done
		done
	done | sort
}

test_expect_success 'start an instance with the fake exec-agent' '
	start_instance broker 1 -Sbroker.modules=$MODULES &&
	flux module load --name=exec-agent $AGENT_SO
'
test_expect_success 'flux-shell --help; bad command lines fail' '
	$SHELL_BIN --help | grep "Usage: flux-shell" &&
	test_must_fail $SHELL_BIN &&
	test_must_fail $SHELL_BIN 12x &&
	test_must_fail $SHELL_BIN 1 2 &&
	test_must_fail $SHELL_BIN --bogus 1
'
test_expect_success 'a shell without an agent answer exits 1 at once' '
	test_expect_code 1 timeout 20 env FLUX_KVS_NAMESPACE=job-999 \
		$SHELL_BIN 999 2>noinfo.err &&
	grep "shell-info" noinfo.err
'
test_expect_success 'a shell without FLUX_KVS_NAMESPACE refuses to run' '
	test_expect_code 1 env -u FLUX_KVS_NAMESPACE $SHELL_BIN 998 \
		2>nons.err &&
	grep "FLUX_KVS_NAMESPACE is not set" nons.err
'
test_expect_success 'tasks get the FLUX_* environment and only the job env' '
	job 101 1 0-1 -- -n2 --env=FOO=bar --cwd=/ \
		sh -c "env | sort >\"$PWD/env.\$FLUX_TASK_RANK\"" &&
	run_shell 101 &&
	grep "^FLUX_TASK_RANK=0$" env.0 &&
	grep "^FLUX_TASK_RANK=1$" env.1 &&
	grep "^FLUX_TASK_LOCAL_ID=1$" env.1 &&
	grep "^FLUX_JOB_SIZE=2$" env.0 &&
	grep "^FLUX_JOB_NNODES=1$" env.0 &&
	grep "^FLUX_JOB_ID=$(flux job id --to=f58plain 101)$" env.0 &&
	grep "^FLUX_KVS_NAMESPACE=job-101$" env.0 &&
	grep "^FLUX_URI=$FLUX_URI$" env.0 &&
	grep "^FOO=bar$" env.0 &&
	grep "^FLUX_JOB_TMPDIR=" env.0 &&
	grep "^PMI_RANK=1$" env.1 &&
	grep "^PMI_SIZE=2$" env.1 &&
	grep "^PMI_FD=3$" env.1 &&
	grep "^CUDA_VISIBLE_DEVICES=-1$" env.0 &&
	! grep "^HOME=" env.0
'
test_expect_success 'FLUX_JOB_TMPDIR exists while tasks run, is removed after' '
	job 102 1 0 -- -n1 sh -c "test -d \$FLUX_JOB_TMPDIR &&
		touch \$FLUX_JOB_TMPDIR/x && echo \$FLUX_JOB_TMPDIR" &&
	run_shell 102 &&
	dir=$(task_output 102 stdout 0 | sed "s/.n$//") &&
	test -n "$dir" &&
	test ! -e "$dir"
'
kvs_commits () {
	flux module stats kvs | jq .commits
}
# one commit if the task's exit and its EOFs come within the 20 ms hold
# (a busy machine, or EOFs read after the exit, may need a few tries; a
# shell built with AddressSanitizer on a loaded machine may miss the hold
# every time: there, two at most, and the first try with two is enough)
test_expect_success 'a short job of one shell commits to the KVS once' '
	rm -f commits.173 &&
	asan=no && { ! asan_build || asan=yes; } &&
	for i in $(seq 10); do
		id=$((1730 + i)) &&
		job $id 1 0 -- -n1 true &&
		c0=$(kvs_commits) &&
		run_shell $id &&
		c1=$(kvs_commits) &&
		echo "$id: $((c1 - c0))" >>commits.173 || return 1
		test $((c1 - c0)) -eq 1 && break
		test $((c1 - c0)) -le 2 && test "$asan" = yes && break
	done
	cat commits.173 &&
	{ test $((c1 - c0)) -eq 1 ||
		{ test "$asan" = yes && test $((c1 - c0)) -le 2; }; } &&
	getlog $id exec.eventlog >ev.173 &&
	grep -n "^[0-9.]* shell\." ev.173 | cut -d" " -f2 >names.173 &&
	printf "%s\n" shell.init shell.start shell.task-exit >names.exp &&
	test_cmp names.exp names.173 &&
	getlog $id output | grep -q "\"eof\":true"
'
test_expect_success 'a longer one posts shell.init and shell.start while it runs' '
	job 174 1 0 -- -n1 timeout 30 $(command -v flux) kvs eventlog wait-event \
		--namespace=job-174 -W exec.eventlog shell.start &&
	run_shell 174 &&
	test "$(getlog 174 exec.eventlog | grep -c shell.start)" -eq 1
'
test_expect_success 'exec.eventlog gets shell.init, shell.start, shell.task-exit' '
	getlog 101 exec.eventlog >ev.101 &&
	grep "shell.init {\"leader-rank\":0,\"size\":1,\"service\":\"$(id -u)-shell-$(flux job id --to=f58plain 101)\"}" ev.101 &&
	grep "shell.start {\"taskmap\":{\"version\":1,\"map\":\[\[0,1,2,1\]\]}}" ev.101 &&
	grep "shell.task-exit .*\"exitcode\":0" ev.101 &&
	test $(grep -c shell.task-exit ev.101) -eq 1
'
test_expect_success 'the first exit on another shell is posted by the leader' '
	job 109 2 0 -- -N2 -n2 \
		sh -c "test \$FLUX_TASK_RANK = 1 && exit 4; sleep 2" &&
	test_expect_code 4 run_shell 109 2 &&
	getlog 109 exec.eventlog >ev.109 &&
	test $(grep -c shell.task-exit ev.109) -eq 1 &&
	grep "shell.task-exit .*\"rank\":1,.*\"exitcode\":4" ev.109
'
test_expect_success 'exit-timeout: the others are killed once it expires' '
	job 150 1 0-1 -- -n2 -o exit-timeout=1s \
		sh -c "test \$FLUX_TASK_RANK = 0 && exit 0; sleep 100" &&
	test_expect_code 1 run_shell 150 &&
	getlog 150 exec.eventlog | grep "task 0 exited and exit-timeout=1s has expired"
'
test_expect_success 'exit-on-error: a failed task ends the job at once' '
	job 151 1 0-1 -- -n2 -o exit-on-error \
		sh -c "test \$FLUX_TASK_RANK = 1 && exit 3; sleep 100" &&
	test_expect_code 3 run_shell 151 &&
	getlog 151 exec.eventlog | grep "task 1 exited with exit code 3"
'
test_expect_success 'a bad exit-timeout is fatal' '
	job 152 1 0 -- -n1 -o exit-timeout=soon true &&
	test_expect_code 1 run_shell 152
'
test_expect_success '--reconnect is accepted' '
	job 100 1 0 -- -n1 true &&
	FLUX_KVS_NAMESPACE=job-100 $SHELL_BIN --reconnect 100
'
test_expect_success 'tasks run in the jobspec cwd' '
	mkdir -p wd &&
	job 103 1 0 -- -n1 --cwd="$PWD/wd" pwd &&
	run_shell 103 &&
	test "$(task_output 103 stdout 0)" = "$PWD/wd\\n"
'
test_expect_success 'a cwd that does not exist is fatal and named' '
	job 104 1 0 -- -n1 --cwd=/nonexistent/dir true &&
	test_expect_code 1 run_shell 104 &&
	getlog 104 exec.eventlog | grep "log .*/nonexistent/dir"
'
test_expect_success 'the shell exits with the largest task exit code' '
	job 105 1 0-1 -- -n3 sh -c "exit \$((FLUX_TASK_RANK+3))" &&
	test_expect_code 5 run_shell 105
'
test_expect_success 'a task killed by signal N gives 128+N' '
	job 106 1 0 -- -n1 sh -c "kill -9 \$\$" &&
	test_expect_code 137 run_shell 106
'
test_expect_success 'a command that does not exist gives 127, not executable 126' '
	job 107 1 0 -- -n1 /nonexistent/command &&
	test_expect_code 127 run_shell 107 &&
	printf "#!/bin/sh\n" >"$TMPDIR/noexec.sh" &&
	chmod 644 "$TMPDIR/noexec.sh" &&
	job 108 1 0 -- -n1 $TMPDIR/noexec.sh &&
	test_expect_code 126 run_shell 108
'
test_expect_success 'every task of a shell finds its command on PATH as execvp would' '
	mkdir -p "$TMPDIR/p1" "$TMPDIR/p2" "$TMPDIR/p3" &&
	printf "#!/bin/sh\necho no\n" >"$TMPDIR/p2/pathcmd" &&
	chmod 644 "$TMPDIR/p2/pathcmd" &&
	printf "echo yes\$FLUX_TASK_RANK\n" >"$TMPDIR/p3/pathcmd" &&
	chmod 755 "$TMPDIR/p3/pathcmd" &&
	job 134 1 0-2 -- -n3 \
		--env=PATH=$TMPDIR/nonexistent:$TMPDIR/p1:$TMPDIR/p2:$TMPDIR/p3:/bin \
		pathcmd &&
	run_shell 134 &&
	for i in 0 1 2; do
		test "$(task_output 134 stdout $i)" = "yes$i\\n" || return 1
	done &&
	job 135 1 0-2 -- -n3 --env=PATH=$TMPDIR/p1:$TMPDIR/p2 pathcmd &&
	test_expect_code 126 run_shell 135 &&
	job 136 1 0-1 -- -n2 --env=PATH=$TMPDIR/p1 pathcmd &&
	test_expect_code 127 run_shell 136
'
test_expect_success 'output goes to the guest output eventlog, header first' '
	job 110 1 0-1 -- -n2 sh -c "echo out\$FLUX_TASK_RANK; echo err >&2" &&
	run_shell 110 &&
	getlog 110 output >out.110 &&
	head -1 out.110 | grep "header {\"version\":1,\"encoding\":{\"stdout\":\"UTF-8\",\"stderr\":\"UTF-8\"},\"count\":{\"stdout\":2,\"stderr\":2},\"options\":{}}" &&
	test "$(task_output 110 stdout 0)" = "out0\\n" &&
	test "$(task_output 110 stdout 1)" = "out1\\n" &&
	test "$(task_output 110 stderr 1)" = "err\\n" &&
	test $(eof_pairs 110 | wc -l) -eq 4
'
test_expect_success 'binary output is base64' '
	job 111 1 0 -- -n1 printf "\\377\\376" &&
	run_shell 111 &&
	getlog 111 output | grep "\"data\":\"//4=\",\"encoding\":\"base64\""
'
test_expect_success 'a task writing 100 MB keeps 10 MB of it (the limit counts data, as flux-core)' '
	job 112 1 0 -- -n1 sh -c "yes | head -c 100000000; echo end >&2" &&
	run_shell 112 &&
	size=$(flux kvs get --namespace=job-112 -r output | wc -c) &&
	echo "output is $size bytes" &&
	test $size -le $((2*10*1024*1024 + 65536 + 4096)) &&
	kept=$(flux kvs get --namespace=job-112 -r output | jq -j "select(.name==\"data\" and .context.stream==\"stdout\" and .context.data) | .context.data" | wc -c) &&
	echo "kept $kept bytes of data" &&
	test $kept -le $((10*1024*1024)) &&
	test $kept -ge $((9*1024*1024)) &&
	getlog 112 output >out.112 &&
	grep "log .*stdout will be truncated, 10M limit exceeded" out.112 &&
	grep "log .*stdout: [0-9]* of 100000000 bytes truncated" out.112 &&
	test "$(task_output 112 stderr 0)" = "end\\n" &&
	grep "\"stream\":\"stdout\",\"rank\":\"0\",\"eof\":true" out.112 &&
	getlog 112 exec.eventlog | grep "log .*stdout will be truncated"
'
test_expect_success 'output.limit sets the bound, shared by the shells' '
	job 113 2 0 -- -N2 -n2 -o output.limit=4k sh -c "seq 100000" &&
	run_shell 113 2 &&
	size=$(flux kvs get --namespace=job-113 -r output | wc -c) &&
	test $size -le $((4096 + 4096)) &&
	test $(getlog 113 output | grep -c "will be truncated, 4k limit") -eq 2
'
# the stdout data of task rank $2 of job $1, decoded
task_data () {
	flux kvs get --namespace=job-$1 -r output |
		jq -j "select(.name==\"data\" and .context.stream==\"$3\" and .context.rank==\"$2\" and .context.data) | .context.data"
}
test_expect_success 'four shells: the leader writes every task'"'"'s output, complete and in order' '
	job 160 4 0-1 -- -N4 -n8 sh -c "seq 300; echo e\$FLUX_TASK_RANK >&2" &&
	run_shell 160 4 &&
	getlog 160 output >out.160 &&
	head -1 out.160 | grep "header .*\"count\":{\"stdout\":8,\"stderr\":8}" &&
	seq 300 >seq.300 &&
	for r in 0 1 2 3 4 5 6 7; do
		task_data 160 $r stdout >data.160.$r &&
		test_cmp seq.300 data.160.$r &&
		test "$(task_data 160 $r stderr)" = "e$r" || return 1
	done &&
	eof_pairs 160 >eof.160 &&
	test_line_count = 16 eof.160 &&
	test -z "$(uniq -d eof.160)" &&
	test $(grep -c "\"eof\":true" out.160) -lt 16 &&
	test $(grep -c header out.160) -eq 1
'
test_expect_success 'a non-leader task'"'"'s EOF comes after all its data' '
	flux kvs get --namespace=job-160 -r output | jq -s -e "
		def ranks: .context.rank | split(\",\") | [.[] | if test(\"-\")
			then (split(\"-\") | map(tonumber)) as \$p |
				range(\$p[0]; \$p[1] + 1)
			else tonumber end];
		[.[] | select(.name==\"data\" and .context.stream==\"stdout\")]
			| to_entries as \$d |
		[range(0;8)] | all(. as \$r |
			[\$d[] | select(.value.context.eof and
				(.value | ranks | any(.[]; . == \$r))) | .key] as \$e |
			[\$d[] | select(.value.context.data and
				.value.context.rank == (\$r | tostring)) | .key] as \$k |
			(\$e | length) == 1 and (\$k | length) >= 1 and
			(\$k | max) < \$e[0])"
'
test_expect_success 'a non-leader task closing its output early: its EOFs are recorded' '
	job 161 2 0 -- -N2 -n2 sh -c "if test \$FLUX_TASK_RANK = 1; then exec >&- 2>&-; sleep 1; else echo done; fi" &&
	run_shell 161 2 &&
	getlog 161 output >out.161 &&
	eof_pairs 161 >eof.161 &&
	grep -x "stdout 1" eof.161 && grep -x "stderr 1" eof.161 &&
	test "$(task_output 161 stdout 0)" = "done\\n" &&
	test -z "$(task_output 161 stdout 1)"
'
test_expect_success 'the limit across four shells: none keeps more than its share' '
	job 162 4 0 -- -N4 -n4 -o output.limit=8k sh -c "seq 100000; echo end\$FLUX_TASK_RANK >&2" &&
	run_shell 162 4 &&
	getlog 162 output >out.162 &&
	test $(grep -c "will be truncated, 8k limit" out.162) -eq 4 &&
	test $(grep -c "bytes truncated" out.162) -eq 4 &&
	test $(eof_pairs 162 | wc -l) -eq 8 &&
	for r in 0 1 2 3; do
		n=$(task_data 162 $r stdout | wc -c) &&
		test $n -le 2048 &&
		test "$(task_data 162 $r stderr)" = "end$r" || return 1
	done
'
test_expect_success 'malformed output requests to the leader get EPROTO' '
	job 163 2 0 -- -N2 -n2 sh -c "exec sleep 100" &&
	run_shell 163 2 & pid=$! &&
	wait_event 163 exec.eventlog shell.start &&
	svc=$(id -u)-shell-$(flux job id --to=f58plain 163) &&
	test_expect_code 71 $RPC $svc.output "{}" &&
	test_expect_code 71 $RPC $svc.output "{\"shell_rank\":0,\"events\":\"\",\"last\":false}" &&
	test_expect_code 71 $RPC $svc.output "{\"shell_rank\":2,\"events\":\"\",\"last\":false}" &&
	test_expect_code 71 $RPC $svc.output "{\"shell_rank\":1,\"events\":\"junk\\n\",\"last\":false}" &&
	test_expect_code 71 $RPC $svc.output "{\"shell_rank\":1,\"events\":\"{\\\"timestamp\\\":1.0,\\\"name\\\":\\\"header\\\"}\\n\",\"last\":false}" &&
	test_expect_code 71 $RPC $svc.output "{\"shell_rank\":1,\"events\":\"{\\\"timestamp\\\":1.0,\\\"name\\\":\\\"log\\\"}\",\"last\":false}" &&
	eof="{\\\"timestamp\\\":1.0,\\\"name\\\":\\\"data\\\",\\\"context\\\":{\\\"stream\\\":\\\"stdout\\\",\\\"eof\\\":true,\\\"rank\\\":" &&
	test_expect_code 71 $RPC $svc.output "{\"shell_rank\":1,\"events\":\"$eof\\\"0-2\\\"}}\\n\",\"last\":false}" &&
	test_expect_code 71 $RPC $svc.output "{\"shell_rank\":1,\"events\":\"$eof\\\"x\\\"}}\\n\",\"last\":false}" &&
	$RPC $svc.output "{\"shell_rank\":1,\"events\":\"\",\"last\":false}" &&
	flux event pub shell-163.kill "{\"signum\":9}" &&
	test_expect_code 137 wait $pid &&
	test $(eof_pairs 163 | wc -l) -eq 4
'
test_expect_success 'a bad output.limit is a fatal error' '
	job 114 1 0 -- -n1 -o output.limit=lots true &&
	test_expect_code 1 run_shell 114 &&
	getlog 114 exec.eventlog | grep "output.limit"
'
test_expect_success 'output.stdout.path with {{id}}: output in a file' '
	job 115 1 0-1 -- -n2 -o output.stdout.path="$PWD/out.{{id}}" \
		sh -c "echo task\$FLUX_TASK_RANK; echo e\$FLUX_TASK_RANK >&2" &&
	run_shell 115 &&
	f=out.$(flux job id --to=f58 115) &&
	test $(grep -c "^task[01]$" $f) -eq 2 &&
	test $(grep -c "^e[01]$" $f) -eq 2 &&
	getlog 115 output | grep "redirect {\"stream\":\"stdout\",\"rank\":\"\[0-1\]\",\"path\":\"$PWD/$f\"}" &&
	getlog 115 output | grep "redirect {\"stream\":\"stderr\"" &&
	! getlog 115 output | grep "\"data\""
'
test_expect_success 'output.stderr.path alone redirects only stderr' '
	job 116 1 0 -- -n1 -o output.stderr.path="$PWD/err.116" \
		sh -c "echo o; echo e >&2" &&
	run_shell 116 &&
	test "$(cat err.116)" = "e" &&
	test "$(task_output 116 stdout 0)" = "o\\n"
'
test_expect_success 'input.stdin.path: every task reads the file' '
	echo "from the file" >in.txt &&
	job 117 1 0-1 -- -n2 -o input.stdin.type=file \
		-o input.stdin.path="$PWD/in.txt" cat &&
	run_shell 117 &&
	test "$(task_output 117 stdout 0)" = "from the file\\n" &&
	test "$(task_output 117 stdout 1)" = "from the file\\n"
'
test_expect_success 'stdin through the leader service reaches the named tasks' '
	job 118 1 0-1 -- -n2 sh -c "cat; echo done\$FLUX_TASK_RANK" &&
	run_shell 118 & pid=$! &&
	wait_event 118 exec.eventlog shell.start &&
	svc=$(id -u)-shell-$(flux job id --to=f58plain 118) &&
	$RPC $svc.stdin "{\"stream\":\"stdin\",\"rank\":\"1\",\"data\":\"one\\n\"}" &&
	$RPC $svc.stdin "{\"stream\":\"stdin\",\"rank\":\"all\",\"data\":\"both\\n\",\"eof\":true}" &&
	wait $pid &&
	getlog 118 input >in.118 &&
	head -1 in.118 | grep "header {\"version\":1,\"encoding\":{\"stdin\":\"UTF-8\"},\"count\":{\"stdin\":1},\"options\":{}}" &&
	grep "\"rank\":\"1\",\"data\":\"one" in.118 &&
	task_output 118 stdout 0 | tr -d "\n" >t0.out &&
	task_output 118 stdout 1 | tr -d "\n" >t1.out &&
	test "$(cat t0.out)" = "both\\ndone0\\n" &&
	test "$(cat t1.out)" = "one\\nboth\\ndone1\\n"
'
test_expect_success 'malformed stdin requests get EPROTO, writes after EOF EPIPE' '
	job 119 1 0 -- -n1 sh -c "cat; exec sleep 100" &&
	run_shell 119 & pid=$! &&
	wait_event 119 exec.eventlog shell.start &&
	svc=$(id -u)-shell-$(flux job id --to=f58plain 119) &&
	test_expect_code 71 $RPC $svc.stdin "{\"stream\":\"stdout\",\"rank\":\"all\"}" &&
	test_expect_code 71 $RPC $svc.stdin "{\"stream\":\"stdin\",\"rank\":\"x-y\"}" &&
	test_expect_code 71 $RPC $svc.stdin "{\"stream\":\"stdin\"}" &&
	$RPC $svc.stdin "{\"stream\":\"stdin\",\"rank\":\"all\",\"eof\":true}" &&
	test_expect_code 32 $RPC $svc.stdin "{\"stream\":\"stdin\",\"rank\":\"all\",\"data\":\"x\"}" &&
	flux event pub shell-119.kill "{\"signum\":9}" &&
	test_expect_code 137 wait $pid
'
test_expect_success 'the kill event signals every task' '
	job 120 1 0-1 -- -n2 sleep 100 &&
	run_shell 120 & pid=$! &&
	wait_event 120 exec.eventlog shell.start &&
	flux event pub shell-120.kill "{\"signum\":10}" &&
	test_expect_code 138 wait $pid
'
test_expect_success 'SIGTERM to the shell is forwarded to the tasks' '
	job 121 1 0 -- -n1 sleep 100 &&
	FLUX_KVS_NAMESPACE=job-121 $SHELL_BIN 121 2>shell.121.err & pid=$! &&
	wait_event 121 exec.eventlog shell.start &&
	kill -TERM $pid &&
	test_expect_code 143 wait $pid
'
test_expect_success 'a task leads a process group of its own, apart from the shell' '
	job 122 1 0 -- -n1 sh -c "echo \$\$; ps -o pgid= \$\$; ps -o pgid= \$PPID" &&
	run_shell 122 &&
	task_output 122 stdout 0 | tr -d " " | sed "s/\\\\n/ /g" >pg.122 &&
	set -- $(cat pg.122) &&
	test "$1" = "$2" &&
	test "$2" != "$3"
'
test_expect_success 'a barrier failing with EIO ends the shell quietly' '
	job 123 2 0 -- -N2 -n2 true &&
	FLUX_KVS_NAMESPACE=job-123 $SHELL_BIN 123 2>shell.123.err & pid=$! &&
	# the fake agent knows the job once the shell asked for shell-info
	# (ENOENT before); the EIO holds for entries pending and to come
	n=0 &&
	until $RPC exec-agent.fake-eio "{\"id\":123}" 2>/dev/null; do
		n=$((n + 1)) &&
		test $n -lt 600 &&
		sleep 0.1 || break
	done &&
	test $n -lt 600 &&
	test_expect_code 1 wait $pid &&
	! getlog 123 exec.eventlog | grep shell.init &&
	# the output header, gathered for the start-up commit, is still
	# committed when the shell ends before shell.init
	getlog 123 output | grep header
'
test_expect_success 'taskmap cyclic and manual' '
	job 124 2 0-1 -- -N2 -n4 -o taskmap="{\"scheme\":\"cyclic\"}" \
		sh -c "echo \$FLUX_TASK_RANK:\$FLUX_TASK_LOCAL_ID" &&
	run_shell 124 2 &&
	getlog 124 exec.eventlog | grep "\"map\":\[\[0,2,1,2\]\]" &&
	test "$(task_output 124 stdout 2)" = "2:1\\n" &&
	job 125 2 0-1 -- -N2 -n4 \
		-o taskmap="{\"scheme\":\"manual\",\"value\":\"[[1,1,2,1],[0,1,2,1]]\"}" \
		true &&
	run_shell 125 2 &&
	getlog 125 exec.eventlog | grep "\"map\":\[\[1,1,2,1\],\[0,1,2,1\]\]" &&
	job 126 1 0-1 -- -n2 -o taskmap="{\"scheme\":\"manual\",\"value\":\"[[0,1,1,1]]\"}" true &&
	test_expect_code 1 run_shell 126 &&
	getlog 126 exec.eventlog | grep "does not match"
'
test_expect_success 'rlimit option sets the tasks soft limits' '
	job 127 1 0 -- -n1 -o rlimit="{\"nofile\":123}" sh -c "ulimit -n" &&
	run_shell 127 &&
	test "$(task_output 127 stdout 0)" = "123\\n" &&
	job 128 1 0 -- -n1 -o rlimit="{\"bogus\":1}" true &&
	test_expect_code 1 run_shell 128
'
test_expect_success 'GPUs of R become CUDA_VISIBLE_DEVICES' '
	job 129 1 0-1 0-1 -- -n2 -o gpu-affinity=per-task \
		sh -c "echo \$CUDA_VISIBLE_DEVICES" &&
	run_shell 129 &&
	test "$(task_output 129 stdout 0)" = "0\\n" &&
	test "$(task_output 129 stdout 1)" = "1\\n" &&
	job 130 1 0 0,3 -- -n1 sh -c "echo \$CUDA_VISIBLE_DEVICES" &&
	run_shell 130 &&
	test "$(task_output 130 stdout 0)" = "0,3\\n"
'
test "$(nproc)" -ge 2 && test_set_prereq TWOCORES
test_expect_success TWOCORES 'tasks are bound to the cores of R' '
	job 131 1 1 -- -n1 sh -c "grep Cpus_allowed_list /proc/self/status" &&
	run_shell 131 &&
	task_output 131 stdout 0 | grep "Cpus_allowed_list:.t1.n" &&
	job 132 1 0-1 -- -n2 -o cpu-affinity=per-task \
		sh -c "grep Cpus_allowed_list /proc/self/status" &&
	run_shell 132 &&
	task_output 132 stdout 0 | grep "Cpus_allowed_list:.t0.n" &&
	task_output 132 stdout 1 | grep "Cpus_allowed_list:.t1.n" &&
	job 133 1 1 -- -n1 -o cpu-affinity=off \
		sh -c "grep Cpus_allowed_list /proc/self/status" &&
	run_shell 133 &&
	mine=$(grep Cpus_allowed_list /proc/self/status | cut -f2) &&
	task_output 133 stdout 0 | grep "Cpus_allowed_list:.t$mine.n"
'
test_expect_success 'PMI: put, fence, get across two shells, three rounds' '
	job 140 2 0-1 -- -N2 -n4 $PMI_CLIENT -n 3 &&
	run_shell 140 2 &&
	for r in 0 1 2 3; do
		test "$(task_output 140 stdout $r)" = "$r: ok 4 (vector,(0,2,2)) 1\\n" ||
		return 1
	done
'
test_expect_success 'PMI: cyclic map in PMI_process_mapping' '
	job 141 2 0-1 -- -N2 -n4 -o taskmap="{\"scheme\":\"cyclic\"}" $PMI_CLIENT &&
	run_shell 141 2 &&
	test "$(task_output 141 stdout 3)" = "3: ok 4 (vector,(0,2,1),(0,2,1)) 1\\n"
'
test_expect_success 'PMI: an abort is fatal with the exit code given' '
	job 142 1 0-1 -- -n2 $PMI_CLIENT -a 7 &&
	test_expect_code 7 run_shell 142 &&
	getlog 142 exec.eventlog | grep "PMI abort"
'
test_expect_success 'PMI can be turned off' '
	job 143 1 0 -- -n1 -o pmi=off sh -c "echo \${PMI_FD:-none}" &&
	run_shell 143 &&
	test "$(task_output 143 stdout 0)" = "none\\n"
'
test_expect_success 'stop the instance' '
	stop_instance broker
'

test_done
