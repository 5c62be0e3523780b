#!/usr/bin/env bash
# Run as PID 1 of a PID namespace of its own (unshare -pf --mount-proc), in a repository whose
# agent "sleeper" sleeps: ROUNDS times, start a run, kill -9 its dispatcher and its agent, hand
# their pids to strangers through ns_last_pid (the agent's pid is also the strangers' process
# group, as a recycled pid would be), then run `status`, which finds the run's dispatcher gone.
# Prints one line per round: "round N recycled R signalled S running K", K the runs `status`
# still shows running.
#   recycle-pids.sh <cocode-dispatch> <rounds>
set -u
dispatch=$1
rounds=$2
strangers=()

# Gives `target` to a new stranger (its own session and group); prints its pid, or nothing.
recycle() {
  local target=$1 try
  for try in 1 2 3 4 5; do
    echo $((target - 1)) > /proc/sys/kernel/ns_last_pid
    setsid sleep 1000 < /dev/null > /dev/null 2>&1 &
    if [ $! -eq "$target" ]; then echo "$!"; return; fi
    kill -9 $! 2> /dev/null
  done
}

gone() { [ ! -e "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2> /dev/null)" = Z ]; }

for round in $(seq 1 "$rounds"); do
  AGENT_SLEEP=600 "$dispatch" run 1 --no-check > /dev/null 2>&1 &
  dispatcher=$!
  info=
  agent=
  for _ in $(seq 1 1000); do
    folder=$(ls -d .cocode/runs/2*/ 2> /dev/null | tail -n 1)
    info=${folder}run-info.yaml
    if [ -n "$folder" ] && grep -q '^status: running' "$info" 2> /dev/null; then
      agent=$(sed -n 's/^pid: //p' "$info")
      [ -n "$agent" ] && [ "$agent" != 0 ] && break
    fi
    sleep 0.01
  done
  if [ -z "$agent" ]; then echo "round $round: the run never started" >&2; exit 1; fi
  kill -9 "$dispatcher"
  kill -9 -- "-$agent" 2> /dev/null
  wait "$dispatcher" 2> /dev/null
  while ! gone "$dispatcher" || ! gone "$agent"; do sleep 0.01; done

  mine=()
  for target in "$agent" "$dispatcher"; do
    pid=$(recycle "$target")
    [ -n "$pid" ] && mine+=("$pid")
  done
  strangers+=("${mine[@]}")
  "$dispatch" status --json > status.json 2> status.err
  running=$(grep -o '"status": *"running"' status.json | wc -l)
  signalled=0
  for pid in "${mine[@]}"; do gone "$pid" && signalled=$((signalled + 1)); done
  echo "round $round recycled ${#mine[@]} signalled $signalled running $running"
  for pid in "${mine[@]}"; do kill -9 "$pid" 2> /dev/null; done
  wait 2> /dev/null
  # The next round starts the same pair again.
  "$dispatch" clean 1 --force > /dev/null 2>&1
done
