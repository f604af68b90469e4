# job-cpu.sh - sourced by bench scripts inside an instance.
# The reaped children of the broker PID, plus the shell launcher and its
# reaped children: the shells it forks are its children, not the
# broker's (doc/guide/exec.md, The shell launcher).

# job_stat_sum PID "BROKER_FIELDS" "LAUNCHER_FIELDS": the sum of those
# fields of /proc/PID/stat and of the launcher's (0-based after the pid,
# as `read -a` splits the line: 9 minflt, 10 cminflt, 13 utime, 14 stime,
# 15 cutime, 16 cstime); the broker's alone without a launcher.
job_stat_sum () {
    local l b c f sum=0
    read -r -a b < /proc/$1/stat
    for f in $2; do sum=$((sum + b[f])); done
    l=$(flux module stats exec-agent | jq ".shells.launcher.pid // 0")
    if [ "$l" -gt 0 ] && read -r -a c < /proc/$l/stat 2>/dev/null; then
        for f in $3; do sum=$((sum + c[f])); done
    fi
    echo $sum
}

# job_cpu_ticks PID: their CPU ticks (utime + stime, CLK_TCK).
job_cpu_ticks () {
    job_stat_sum "$1" "15 16" "13 14 15 16"
}

# job_minflt PID: their minor page faults.
job_minflt () {
    job_stat_sum "$1" "10" "9 10"
}
