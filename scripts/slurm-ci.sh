#!/usr/bin/env bash
# The distributed sweep recipes of README.md and docs/sweep.md, run for real (issue 36):
#
# 1. The Kubernetes Indexed Job (scripts/k8s-sweep-job.yaml) is checked against the Kubernetes
#    API schema by kubernetes-validate (PyPI, schemas bundled, so no cluster and no network
#    beyond the install), and a misspelt copy must be refused.
# 2. A single-node Slurm cluster from Debian's packages (munged, slurmctld and slurmd started
#    here, in the foreground of background jobs, with a generated slurm.conf in a temporary
#    folder: no cgroups, no accounting database) runs the job-array script the docs show,
#    scripts/slurm-sweep.sbatch, twice over scenarios/sweeps/payments-share-cluster.ron in 4
#    shards, each compared byte for byte (cmp) with the same sweep in one process:
#    - clean, merged by the README's `sbatch --dependency=afterok` job, and timed;
#    - with failures: task 1 killed mid-run (scancel --signal=KILL) and requeued (scontrol
#      requeue), task 2's first attempt given a read-only output folder (injected by a
#      `brownout` wrapper on PATH, outside the job script) so that the script's own retry
#      requeues it, and task 3 sent USR1 mid-run, as Slurm does near a time limit
#      (--signal=B:USR1@120), so that it stops and requeues itself. Each must resume from its
#      journal; the merge (the command the shards print) must equal the one-process sweep.
#
#   scripts/slurm-ci.sh            (as root: it installs packages, runs slurmd, mounts a tmpfs)
#
# Environment: BROWNOUT, the binary (default target/ci/brownout, built if missing).
# Everything it starts is stopped on exit; the temporary folder is removed unless KEEP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
spec=scenarios/sweeps/payments-share-cluster.ron
shards=4
started=$SECONDS

say() { echo "[slurm-ci $((SECONDS - started))s] $*"; }
die() {
  echo "error: $*" >&2
  exit 1
}

if [ "$(id -u)" != 0 ]; then
  die "scripts/slurm-ci.sh must run as root: it installs packages, starts slurmd (which runs jobs as their user) and mounts a read-only tmpfs"
fi
mkdir -p target

echo "== Kubernetes Indexed Job manifest against the Kubernetes schema (kubernetes-validate from PyPI)"
venv=target/k8s-validate-venv
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  { python3 -m venv "$venv" && timeout 600 "$venv/bin/pip" install --quiet kubernetes-validate==1.37.0; } \
    >target/k8s-validate-install.log 2>&1 || {
    cat target/k8s-validate-install.log
    die "kubernetes-validate could not be installed from PyPI"
  }
fi
"$venv/bin/kubernetes-validate" --strict scripts/k8s-sweep-job.yaml
bad=$(mktemp --suffix=.yaml)
sed 's/backoffLimit:/backofLimit:/' scripts/k8s-sweep-job.yaml >"$bad"
if "$venv/bin/kubernetes-validate" --strict --quiet "$bad" >/dev/null 2>&1; then
  rm -f "$bad"
  die "kubernetes-validate accepted a Job with a misspelt field (backofLimit): it checks nothing"
fi
rm -f "$bad"
say "the manifest validates (--strict), and a copy with a misspelt field is refused"

echo "== Slurm and MUNGE from Debian's packages"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null ||
  ! command -v munged >/dev/null; then
  if command -v apt-get >/dev/null; then
    { timeout 300 apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends slurm-wlm munge; } \
      >target/slurm-install.log 2>&1 || {
      cat target/slurm-install.log
      die "slurm-wlm and munge could not be installed"
    }
  else
    die "no apt-get: install slurm-wlm and munge (slurmctld, slurmd, sbatch, munged) by hand"
  fi
fi
slurmctld -V

bin=${BROWNOUT:-$repo/target/ci/brownout}
if [ ! -x "$bin" ]; then
  cargo build --profile ci --locked --bin brownout
fi

tmp=$(mktemp -d /tmp/brownout-slurm.XXXXXX)
chmod 755 "$tmp"
# The job script calls `brownout` from PATH, as on a cluster.
mkdir -p "$tmp/bin"
ln -s "$(realpath "$bin")" "$tmp/bin/brownout"
bin=$tmp/bin/brownout
pids=()
cleanup() {
  local rc=$?
  set +e
  if [ -n "${SLURM_CONF:-}" ] && [ -e "$tmp/slurmctld.pid" ]; then scancel --quiet --user=root 2>/dev/null; fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  mountpoint -q "$tmp/readonly" && umount "$tmp/readonly"
  if [ "$rc" != 0 ]; then
    for f in "$tmp"/logs/*; do
      [ -f "$f" ] && { echo "---- $f"; tail -n 40 "$f"; }
    done
  fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
mkdir -p "$tmp"/{munge,state,spool,logs,readonly,inject}

echo "== single-node Slurm cluster in $tmp"
mungekey --create --keyfile="$tmp/munge/munge.key" --force
munged --foreground --force --socket="$tmp/munge/socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/seed" --log-file="$tmp/logs/munged.log" \
  >"$tmp/logs/munged.out" 2>&1 &
pids+=($!)
cat >"$tmp/slurm.conf" <<EOF
# Generated by scripts/slurm-ci.sh: one node, this machine, every CPU; processes tracked by
# their parent ids (no cgroups); no accounting database (sacct needs slurmdbd, so the script
# reads job states with squeue and scontrol), finished jobs kept for an hour for scontrol.
ClusterName=brownoutci
SlurmctldHost=localhost
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/logs/slurmctld.log
SlurmdLogFile=$tmp/logs/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$tmp/logs/jobcomp.log
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName=localhost CPUs=$(nproc) State=UNKNOWN
PartitionName=ci Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
for _ in $(seq 50); do [ -S "$tmp/munge/socket" ] && break; sleep 0.1; done
[ -S "$tmp/munge/socket" ] || die "munged did not start (logs below)"
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/logs/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >"$tmp/logs/slurmd.out" 2>&1 &
pids+=($!)
state=
for _ in $(seq 120); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || die "the Slurm node is not idle after 60 s (state '$state'; logs below)"
say "cluster up: node localhost idle with $(nproc) CPUs"

# The records in RESULTS/shard-K's journal (its lines but the header).
records() { if [ -f "$1/shard-$2/journal.jsonl" ]; then echo $(($(wc -l <"$1/shard-$2/journal.jsonl") - 1)); else echo 0; fi; }

echo "== the same sweep in one process (-j $(nproc)), the reference"
t0=$SECONDS
"$bin" sweep "$spec" -j "$(nproc)" --quiet --out "$tmp/whole" >/dev/null
one=$((SECONDS - t0))
runs=$(python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print(len(p['points'])*len(p['policies'])*p['replications'])" "$tmp/whole/plan.json")
per_shard=$((runs / shards))
[ $((per_shard * shards)) = "$runs" ] || die "$spec has $runs runs, not a multiple of $shards"
say "one process: $runs runs in ${one}s"

# sbatch with the job script the docs show; SPEC, SHARDS and RESULTS are its parameters.
submit() { # RESULTS [PATH]
  sbatch --parsable --array=0-$((shards - 1)) --cpus-per-task=1 --chdir="$repo" \
    --output="$tmp/logs/slurm-%A_%a.out" \
    --export="ALL,SPEC=$spec,SHARDS=$shards,RESULTS=$1,PATH=${2:-$(dirname "$bin"):$PATH}" scripts/slurm-sweep.sbatch
}

same() { # DIR: the four result files equal the one-process sweep's, byte for byte
  local f
  for f in sweep.json sweep.csv runs.csv recommendation.json; do
    cmp "$tmp/whole/$f" "$1/$f" || die "$1/$f differs from the one-process sweep"
  done
  say "cmp: sweep.json, sweep.csv, runs.csv and recommendation.json of $1 equal the one-process sweep's"
}

wait_gone() { # JOB...: until squeue lists none of them, at most 10 minutes
  local until=$((SECONDS + 600))
  while [ -n "$(squeue -h -j "$(
    IFS=,
    echo "$*"
  )" 2>/dev/null)" ]; do
    [ "$SECONDS" -lt "$until" ] || die "jobs $* still queued after 10 minutes: $(squeue)"
    if squeue -h -o %r | grep -q DependencyNeverSatisfied; then die "a task failed, so the merge job can never start: $(squeue)"; fi
    sleep 0.5
  done
}

task_states() { # JOB: "K STATE restarts=R" per array task
  scontrol -o show job "$1" | sed -E 's/.*ArrayTaskId=([0-9]+).*JobState=([A-Z_]+).* Restarts=([0-9]+).*/\1 \2 restarts=\3/' | sort -n
}

echo "== job array, clean: $shards tasks of 1 CPU, merged by a job with --dependency=afterok (as README says)"
t0=$SECONDS
clean=$(submit "$tmp/clean")
merge_job=$(sbatch --parsable --dependency="afterok:$clean" --chdir="$repo" --output="$tmp/logs/merge-%j.out" \
  --export="ALL,PATH=$(dirname "$bin"):$PATH" \
  --wrap "brownout merge $tmp/clean/shard-* --out $tmp/clean/merged")
say "submitted array $clean and merge job $merge_job"
wait_gone "$clean" "$merge_job"
sharded=$((SECONDS - t0))
task_states "$clean"
scontrol -o show job "$merge_job" | grep -q "JobState=COMPLETED" || die "the merge job did not complete: $(cat "$tmp"/logs/merge-*.out)"
same "$tmp/clean/merged"
say "sharded $shards ways on Slurm (submit to merged): ${sharded}s; one process: ${one}s"

echo "== job array with failures: task 1 killed and requeued, task 2 failing once, task 3 at its time limit"
# A read-only file system for task 2's first attempt: a node-local disk gone read-only.
mount -t tmpfs -o ro,size=1m brownout-readonly "$tmp/readonly" ||
  die "cannot mount a read-only tmpfs at $tmp/readonly, which the failure of task 2 needs"
cat >"$tmp/inject/brownout" <<EOF
#!/bin/bash
# Failure injection (scripts/slurm-ci.sh), outside the job script: the first attempt of array
# task 2 gets an output folder on a read-only file system.
if [ "\${SLURM_ARRAY_TASK_ID:-}" = 2 ] && mkdir "$tmp/inject/task-2-failed" 2>/dev/null; then
  args=() prev=
  for a in "\$@"; do
    if [ "\$prev" = --out ]; then a=$tmp/readonly/shard-2; fi
    args+=("\$a") prev=\$a
  done
  echo "injected: task 2's output folder is on a read-only file system: $tmp/readonly/shard-2" >&2
  exec "$(realpath "$bin")" "\${args[@]}"
fi
exec "$(realpath "$bin")" "\$@"
EOF
chmod +x "$tmp/inject/brownout"
res=$tmp/failures
job=$(submit "$res" "$tmp/inject:$PATH")
say "submitted array $job"
killed=0 requeued=0 signalled=0
until=$((SECONDS + 600))
while :; do
  if [ "$killed" = 0 ]; then
    n=$(records "$res" 1)
    if [ "$n" -ge 1 ] && [ "$n" -lt "$per_shard" ]; then
      # --full: every process of the batch step, the sweep too, not only the shell.
      say "task 1 has $n of $per_shard runs in its journal: scancel --full --signal=KILL ${job}_1"
      scancel --full --signal=KILL "${job}_1"
      killed=1
    fi
  elif [ "$requeued" = 0 ]; then
    s=$(scontrol -o show job "${job}_1" | grep -o "JobState=[A-Z_]*")
    if [ "$s" != JobState=RUNNING ] && [ "$s" != JobState=COMPLETING ]; then
      say "task 1 ended ($s) with $(records "$res" 1) of $per_shard runs journaled: scontrol requeue ${job}_1"
      scontrol requeue "${job}_1"
      requeued=1
    fi
  fi
  if [ "$signalled" = 0 ]; then
    n=$(records "$res" 3)
    if [ "$n" -ge 1 ] && [ "$n" -lt "$per_shard" ]; then
      say "task 3 has $n of $per_shard runs in its journal: USR1 to its batch shell, as --signal=B:USR1@120 sends before the time limit"
      scancel --batch --signal=USR1 "${job}_3"
      signalled=1
    fi
  fi
  # Slurm holds a requeued job for two minutes (its BeginTime) before it may start again.
  for t in $(squeue -h -r -j "$job" -t PENDING -o "%K %r" 2>/dev/null | awk '$2 == "BeginTime" { print $1 }'); do
    say "task $t requeued; its BeginTime hold lifted: scontrol update JobId=${job}_$t StartTime=now"
    scontrol update JobId="${job}_$t" StartTime=now
  done
  if [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && { [ "$killed" = 0 ] || [ "$requeued" = 1 ]; }; then break; fi
  [ "$SECONDS" -lt "$until" ] || die "array $job not done after 10 minutes: $(squeue -r)"
  sleep 0.2
done
[ "$killed" = 1 ] || die "task 1 finished before it could be killed mid-run (its runs are too short)"
[ "$signalled" = 1 ] || die "task 3 finished before it could be signalled mid-run (its runs are too short)"
task_states "$job" | tee "$tmp/states"
[ "$(grep -c " COMPLETED " "$tmp/states")" = "$shards" ] || die "not every task completed"
grep -q "^0 COMPLETED restarts=0" "$tmp/states" || die "task 0 was requeued though nothing happened to it"
for k in 1 2 3; do
  grep -q "^$k COMPLETED restarts=[1-9]" "$tmp/states" || die "task $k completed without a requeue"
done
for k in 0 1 2 3; do
  echo "---- log of task $k"
  cat "$tmp/logs/slurm-${job}_$k.out"
done
log() { cat "$tmp/logs/slurm-${job}_$1.out"; }
# A task stopped mid-run writes one summary line, in its last attempt: some runs resumed from
# the journal, the others run now.
resumed() { # K: the runs task K's last attempt took from its journal, checked to be some but not all
  local lines
  lines=$(log "$1" | grep -cE '^sweep .*resumed, shard') || true
  [ "$lines" = 1 ] || die "task $1 summed up $lines sweeps, expected 1 (a first attempt stopped mid-run, then one that finished)"
  local r
  r=$(log "$1" | grep -oE '[0-9]+ resumed, shard' | grep -oE '^[0-9]+')
  [ "$r" -ge 1 ] && [ "$r" -lt "$per_shard" ] || die "task $1 resumed $r of its $per_shard runs, expected some but not all"
  echo "$r"
}
r1=$(resumed 1)
r3=$(resumed 3)
log 2 | grep -q "Read-only file system" || die "task 2's first attempt did not meet the read-only folder"
log 2 | grep -q "requeueing (retry 1 of" || die "task 2 was not retried by the job script"
log 3 | grep -q "time limit near" || die "task 3 did not stop for its time limit"
say "task 1 resumed $r1 finished runs after its kill, task 3 $r3 after its time limit; task 2 failed once and was retried"
# The backquotes are literal: a shard's closing line quotes the merge command in them.
# shellcheck disable=SC2016
merge=$(log 0 | grep -oE '`brownout merge [^`]*`' | tail -n 1 | tr -d '`')
[ -n "$merge" ] || die "task 0 printed no merge command"
say "merging with the command the shards print: $merge"
(PATH="$(dirname "$bin"):$PATH" && eval "$merge")
same "$res/merged"
say "Slurm recipes passed"
