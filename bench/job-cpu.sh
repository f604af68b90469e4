# job-cpu.sh - sourced by bench scripts inside an instance.
# job_cpu_ticks PID: the CPU ticks (utime + stime, CLK_TCK) of the
# reaped children of the broker PID, plus those of the shell launcher
# and its reaped children: the shells it forks are its children, not
# the broker's (doc/guide/exec.md, The shell launcher).
job_cpu_ticks () {
    local l b c
    read -r -a b < /proc/$1/stat
    l=$(flux module stats exec-agent | jq ".shells.launcher.pid // 0")
    if [ "$l" -gt 0 ] && read -r -a c < /proc/$l/stat 2>/dev/null; then
        echo $((b[15] + b[16] + c[13] + c[14] + c[15] + c[16]))
    else
        echo $((b[15] + b[16]))
    fi
}

# job_minflt PID: the minor page faults of the same processes (the
# broker's reaped children, the launcher and its reaped children).
job_minflt () {
    local l b c
    read -r -a b < /proc/$1/stat
    l=$(flux module stats exec-agent | jq ".shells.launcher.pid // 0")
    if [ "$l" -gt 0 ] && read -r -a c < /proc/$l/stat 2>/dev/null; then
        echo $((b[10] + c[9] + c[10]))
    else
        echo $((b[10]))
    fi
}
