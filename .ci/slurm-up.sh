#!/usr/bin/env bash
# Bring up a real single-node Slurm cluster on localhost for the sandbox/slurm
# tests: Debian's slurmctld, slurmd, slurm-client and munge, started as root
# without systemd (the daemons double-fork; they are tracked by pid file).
# Idempotent: daemons already alive are left alone. Prints the cluster on
# success; exits non-zero with the logs' tail when it does not come up.
#   .ci/slurm-up.sh        bring up (cgroup limits when a memory cgroup exists)
#   .ci/slurm-up.sh stop   stop the daemons by pid file
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

alive() { # pid file names a live, non-zombie process
  local p; p=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$p" ] && [ -r "/proc/$p/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$p/status"
}

if [ "${1:-}" = stop ]; then
  for f in /run/slurmd.pid /run/slurmctld.pid /run/munge/munged.pid; do
    p=$(cat "$f" 2>/dev/null) || continue
    kill "$p" 2>/dev/null && for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    rm -f "$f" # a stale slurmctld.pid makes Debian's prerm run scancel on purge
  done
  exit 0
fi

[ "$(id -u)" = 0 ] || { echo "slurm-up: must run as root" >&2; exit 1; }
t0=$SECONDS
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
   ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm-up: installing slurmctld slurmd slurm-client munge"
  apt-get update -qq
  apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends \
    slurmctld slurmd slurm-client munge >/dev/null
fi

# munge: the postinst usually generated the key already.
if [ ! -s /etc/munge/munge.key ]; then
  /usr/sbin/mungekey --create 2>/dev/null || dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 2>/dev/null
  chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
fi
install -d -o munge -g munge -m 755 /run/munge
alive /run/munge/munged.pid || runuser -u munge -- /usr/sbin/munged
for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done

# Limits: cgroup enforcement when a memory controller exists (then --mem
# exceeded ends as OUT_OF_MEMORY), else polling RSS (ends as FAILED 0:9).
cg=""
if [ -d /sys/fs/cgroup/memory ]; then cg=cgroup/v1
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then cg=cgroup/v2
fi
if [ -n "$cg" ]; then
  PT=proctrack/cgroup; TP=task/cgroup; JA=jobacct_gather/cgroup; JP=""
  printf 'CgroupPlugin=%s\nConstrainCores=yes\nConstrainRAMSpace=yes\nConstrainSwapSpace=no\n' "$cg" >/etc/slurm/cgroup.conf
else
  PT=proctrack/linuxproc; TP=task/none; JA=jobacct_gather/linux; JP="JobAcctGatherParams=OverMemoryKill"
  rm -f /etc/slurm/cgroup.conf
fi
CPUS=$(nproc)
MEM=$(free -m | awk '/^Mem:/{print $2}')
install -d /etc/slurm
cat >/etc/slurm/slurm.conf.new <<CONF
# Single-node cluster for runbox CI (.ci/slurm-up.sh).
ClusterName=runbox
SlurmctldHost=localhost
SlurmUser=slurm
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=$PT
TaskPlugin=$TP
JobAcctGatherType=$JA
JobAcctGatherFrequency=task=1
$JP
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
# default batch_sched_delay=3 delays back-to-back submissions by ~3 s
SchedulerParameters=batch_sched_delay=0
# without DefMemPerCPU each job reserves the whole node and jobs run one at a time
DefMemPerCPU=256
MailProg=/bin/true
MpiDefault=none
ReturnToService=2
MinJobAge=600
KillWait=5
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
changed=0
cmp -s /etc/slurm/slurm.conf.new /etc/slurm/slurm.conf 2>/dev/null || changed=1
mv /etc/slurm/slurm.conf.new /etc/slurm/slurm.conf
install -d -o slurm -g slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm
touch /var/log/slurm/jobcomp.log && chown slurm:slurm /var/log/slurm/jobcomp.log

# -N localhost: the node's name differs from the machine's hostname.
if [ "$changed" = 1 ] && alive /run/slurmctld.pid; then scontrol reconfigure || true; fi
alive /run/slurmctld.pid || slurmctld
alive /run/slurmd.pid || slurmd -N localhost
end=$((SECONDS + 30))
until timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; do
  # a node left DOWN by an earlier unclean stop comes back on request
  timeout 5 scontrol update nodename=localhost state=resume >/dev/null 2>&1 || true
  if [ $SECONDS -ge $end ]; then
    echo "slurm-up: cluster did not come up" >&2
    tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
    exit 1
  fi
  sleep 0.2
done
sinfo
echo "slurm-up: ready in $((SECONDS - t0)) s (limits: ${cg:-linuxproc})"
