#!/usr/bin/env bash
# bench/run dispatch: cocode-dispatch against the git CLI and against itself.
#   1. 20 worktrees of a generated 20,000-file repository: `cocode-dispatch run 1..20` with a
#      trivial agent (worktrees made in parallel, plus the 20 runs) vs `git worktree add` x20.
#   2. Trivial agents started per second: 100 runs of `true` on a small repository, the
#      supervisor's rate from the first RUN_START to the last (worktrees are made before),
#      in the sandbox (the default: cocode-sandbox), with `--sandbox none` and with `--sandbox
#      bwrap` (the same sandbox made by bubblewrap); the same 100 runs end to end against `git
#      worktree add` x100 alone and against themselves without the sandbox; and a sandbox
#      alone, 20 at once, given an agent's own command line: cocode-sandbox beside bubblewrap,
#      with its network namespace made for it and without one (a batch's agents are given
#      namespaces made ahead: proc/network_pool.h), with the busy CPU a start costs.
#   2b. A verify command's cost in the sandbox: 20 commands `true`, judged by cocode-check,
#      beside the same check with `sandbox: none`.
#      (BIG=0 leaves it out: it takes minutes on a slow disk.)
#   3. The supervisor's own CPU (`run --json`) while 20 agents write 50 MB each, and bytes lost.
# Runs are started with --no-check: this measures the dispatcher, not the project's tests.
# Usage: bench/dispatch.sh BUILD_DIR RUNS
set -euo pipefail
build=$1
runs=${2:-5}
bin=$build/bin
work=$(mktemp -d "${TMPDIR:-/tmp}/cocode-bench-dispatch-XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@cocode.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@cocode.invalid

make_repo() {  # DIR FILES ISSUES
  git init -q -b main "$1"
  (cd "$1"
   python3 - "$2" <<'PY'
import os, sys
n = int(sys.argv[1])
for i in range(n):
    d = f"src/d{i // 200:03d}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/f{i:05d}.txt", "w") as f:
        f.write(f"file {i}\n" * 8)
PY
   mkdir -p .cocode/issues
   for i in $(seq 1 "$3"); do
     printf '{"number": %d, "title": "t%d", "body": "b", "state": "open"}\n' "$i" "$i" > ".cocode/issues/$i.json"
   done
   printf '{"concurrency": 20, "agents": {"noop": {"command": "true"}}}\n' > .cocode/config.json
   git add -A && git commit -q -m base)
}

reset_repo() {  # DIR: drop every worktree, branch and run
  (cd "$1"
   rm -rf .cocode/runs .cocode/worktrees .cocode/sandboxes wt
   git worktree prune
   git for-each-ref --format='%(refname:short)' refs/heads/cocode refs/heads/wt | xargs -r git branch -q -D)
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
now() { date +%s.%N; }

c=0 g=1
if [ "${BIG:-1}" = 1 ]; then  # BIG=0 leaves the 20k-file part out
  echo "generating a 20,000-file repository ..."
  make_repo "$work/big" 20000 20
  issues=$(seq -s ' ' 1 20)
  cocode_times=() git_times=()
  for _ in $(seq 1 "$runs"); do
    reset_repo "$work/big"; sync
    t0=$(now); (cd "$work/big" && "$bin/cocode-dispatch" run $issues --no-check >/dev/null 2>&1); t1=$(now)
    cocode_times+=("$(echo "$t1 - $t0" | bc)")
    reset_repo "$work/big"; sync
    t0=$(now); (cd "$work/big" && for i in $issues; do git worktree add -q -b "wt/$i" "wt/$i"; done); t1=$(now)
    git_times+=("$(echo "$t1 - $t0" | bc)")
  done
  c=$(printf '%s\n' "${cocode_times[@]}" | median)
  g=$(printf '%s\n' "${git_times[@]}" | median)
fi

# Seconds from the first RUN_START to the last, and their count, from the bus.
start_span() {
  python3 - "$1" <<'PY'
import datetime, json, sys
starts = []
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["type"] == "RUN_START":
        starts.append(datetime.datetime.fromisoformat(e["time"].replace("Z", "+00:00")).timestamp())
print(len(starts), max(starts) - min(starts))
PY
}

echo "100 trivial runs on a small repository, in the sandbox and without ..."
make_repo "$work/small" 10 100
rates=() e2e=() peer=() rates_none=() e2e_none=() rates_bwrap=()
trivial() {  # SANDBOX: the runs' start rate and their wall time, appended to the named arrays
  reset_repo "$work/small"; sync
  t0=$(now); (cd "$work/small" && "$bin/cocode-dispatch" run $(seq -s ' ' 1 100) --concurrency 20 --no-check --sandbox "$1" >/dev/null 2>&1); t1=$(now)
  read -r started span < <(start_span "$work/small/.cocode/runs/events.jsonl")
  [ "$started" = 100 ] || { echo "bench: $started of 100 runs started" >&2; exit 1; }
  echo "$(echo "99 / $span" | bc -l) $(echo "$t1 - $t0" | bc)"
}
for _ in $(seq 1 "$runs"); do
  read -r r w < <(trivial auto); rates+=("$r"); e2e+=("$w")
  read -r r w < <(trivial none); rates_none+=("$r"); e2e_none+=("$w")
  read -r r _ < <(trivial bwrap); rates_bwrap+=("$r")
  reset_repo "$work/small"; sync
  t0=$(now); (cd "$work/small" && for i in $(seq 1 100); do git worktree add -q -b "wt/$i" "wt/$i"; done); t1=$(now)
  peer+=("$(echo "$t1 - $t0" | bc)")
done
rate=$(printf '%s\n' "${rates[@]}" | median)
rate_none=$(printf '%s\n' "${rates_none[@]}" | median)
rate_bwrap=$(printf '%s\n' "${rates_bwrap[@]}" | median)
e=$(printf '%s\n' "${e2e[@]}" | median)
e_none=$(printf '%s\n' "${e2e_none[@]}" | median)
p=$(printf '%s\n' "${peer[@]}" | median)

# A sandbox alone, 20 at once, 400 starts of `true`, given the command line the last run of the
# batch above had (from its run-info), with its network namespace made at each start and
# without one: cocode-sandbox beside bubblewrap. Medians over RUNS of starts a second and the
# machine's busy CPU a start.
reset_repo "$work/small"
(cd "$work/small" && "$bin/cocode-dispatch" run 1 --no-check >/dev/null 2>&1)
agent_words=$(python3 - "$work/small/.cocode/runs" <<'PY'
import glob, shlex, sys
for info in glob.glob(sys.argv[1] + "/*/run-info.yaml"):
    for line in open(info):
        if line.startswith("commandline: "):
            words = shlex.split(line[len("commandline: "):])
            print(shlex.join(words[1:words.index("--") + 1] + ["/usr/bin/true"]))
PY
)
binds=$(echo "$agent_words" | grep -o -- ' --\(ro-\)\?bind \| --tmpfs ' | wc -l)
medians() {  # lines "A B" on stdin: "median-of-A median-of-B"
  local lines; lines=$(cat)
  echo "$(echo "$lines" | cut -d' ' -f1 | median) $(echo "$lines" | cut -d' ' -f2 | median)"
}
alone() {  # PROGRAM NETWORK(yes|no): "starts/s busy-ms", medians
  local words=$agent_words
  [ "$2" = yes ] || words=${words/--unshare-net /}
  for _ in $(seq 1 "$runs"); do eval "\"$bin/cocode-bench-starts\" 20 400 -- \"$1\" $words"; done | medians
}
read -r cs_net cs_net_ms < <(alone "$bin/cocode-sandbox" yes)
read -r cs_pool cs_pool_ms < <(alone "$bin/cocode-sandbox" no)
read -r bw_net bw_net_ms < <(alone "$(command -v bwrap)" yes)
read -r bw_pool bw_pool_ms < <(alone "$(command -v bwrap)" no)
read -r bare bare_ms < <(for _ in $(seq 1 "$runs"); do "$bin/cocode-bench-starts" 20 400 -- /usr/bin/true; done | medians)

echo "a verify command in the sandbox and without ..."
reset_repo "$work/small"
(cd "$work/small"
 python3 - <<'PY'
import json
json.dump({"agents": {"committer": {"command": "sh", "args": ["-c", "git commit -q --allow-empty -m done -m \"$COCODE_READY_MARKER\""]}},
           "check": {"verify": [{"name": "true %d" % i, "run": "true"} for i in range(20)]}},
          open(".cocode/config.json", "w"))
PY
 git commit -qam verify && "$bin/cocode-dispatch" run 1 --no-check >/dev/null 2>&1)
verify_seconds() {  # SANDBOX: the median seconds of a verify command
  # The check's commands run as the configuration says now (the run's rules are its seal's).
  python3 - "$work/small/.cocode/config.json" "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["sandbox"] = sys.argv[2]; json.dump(c, open(sys.argv[1], "w"))
PY
  for _ in $(seq 1 "$runs"); do
    (cd "$work/small" && "$bin/cocode-check" --issue 1 --agent committer --json 2>/dev/null) |
      python3 -c 'import json,sys; print("\n".join(str(c["seconds"]) for c in json.load(sys.stdin)["checks"] if c["id"] == "verify"))'
  done | median
}
v_in=$(verify_seconds auto)
v_out=$(verify_seconds none)

echo "20 agents writing 50 MB each ..."
reset_repo "$work/small"
(cd "$work/small"
 printf '{"concurrency": 20, "agents": {"big": {"command": "%s", "env": ["AGENT_OUTPUT_MB"]}}}\n' \
   "$(cd "$(dirname "$0")" && pwd)/../examples/agents/big-output-agent.sh" > .cocode/config.json
 AGENT_OUTPUT_MB=50 "$bin/cocode-dispatch" run $(seq -s ' ' 1 20) --no-check --json > "$work/big.json" 2>/dev/null)
read -r cpu_ms wall_ms < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["supervisor"]; print(s["cpu_ms"], s["wall_ms"])' "$work/big.json")
# The agents' own wall time, summed over the 20 (start_time to end_time in run-info).
agents_ms=$(python3 - "$work"/small/.cocode/runs/*/run-info.yaml <<'PY'
import datetime, sys
total = 0.0
for path in sys.argv[1:]:
    fields = dict(line.split(": ", 1) for line in open(path).read().splitlines() if ": " in line)
    t = lambda k: datetime.datetime.fromisoformat(fields[k].strip().strip('"').replace("Z", "+00:00"))
    total += (t("end_time") - t("start_time")).total_seconds() * 1000
print(total)
PY
)
lost=0
for f in "$work"/small/.cocode/runs/*/agent-stdout.txt; do
  size=$(stat -c %s "$f"); lost=$((lost + 52428800 - size))
done

printf '\n%-58s %12s %12s %8s\n' "benchmark (median of $runs)" "cocode" "peer" "ratio"
printf '%-58s %11.2fs %11.2fs %7.2fx\n' "20 worktrees, 20k files (peer: git worktree add x20)" "$c" "$g" "$(echo "$c / $g" | bc -l)"
printf '%-58s %10.0f/s %10.0f/s %7.2fx\n' "trivial agents started per second (peer: sandbox none)" "$rate" "$rate_none" "$(echo "$rate / $rate_none" | bc -l)"
printf '%-58s %10.0f/s %10.0f/s %7.2fx\n' "trivial agents started per second (peer: sandbox bwrap)" "$rate" "$rate_bwrap" "$(echo "$rate / $rate_bwrap" | bc -l)"
printf '%-58s %10.0f/s %10.0f/s %7.2fx\n' "a sandbox alone, $binds binds, network made (peer: bwrap)" "$cs_net" "$bw_net" "$(echo "$cs_net / $bw_net" | bc -l)"
printf '%-58s %9.2fms %9.2fms %7.2fx\n' "  its busy CPU a start (peer: bwrap)" "$cs_net_ms" "$bw_net_ms" "$(echo "$cs_net_ms / $bw_net_ms" | bc -l)"
printf '%-58s %10.0f/s %10.0f/s %7.2fx\n' "a sandbox alone, $binds binds, no network made (peer: bwrap)" "$cs_pool" "$bw_pool" "$(echo "$cs_pool / $bw_pool" | bc -l)"
printf '%-58s %9.2fms %9.2fms %7.2fx\n' "  its busy CPU a start (peer: bwrap)" "$cs_pool_ms" "$bw_pool_ms" "$(echo "$cs_pool_ms / $bw_pool_ms" | bc -l)"
printf '%-58s %10.0f/s %9.2fms\n' "true alone, 20 at once: starts, busy CPU a start" "$bare" "$bare_ms"
printf '%-58s %11.2fs %11.2fs %7.2fx\n' "100 trivial runs end to end (peer: git worktree add x100)" "$e" "$p" "$(echo "$e / $p" | bc -l)"
printf '%-58s %11.2fs %11.2fs %7.2fx\n' "100 trivial runs end to end (peer: sandbox none)" "$e" "$e_none" "$(echo "$e / $e_none" | bc -l)"
printf '%-58s %10.1fms %10.1fms %+7.1fms\n' "a verify command, p50 (peer: sandbox none)" "$(echo "1000 * $v_in" | bc -l)" "$(echo "1000 * $v_out" | bc -l)" "$(echo "1000 * ($v_in - $v_out)" | bc -l)"
printf '%-58s %10.1fms %10.0fms %7.3f%%\n' "supervisor CPU vs batch wall, 20 agents x 50 MB" "$cpu_ms" "$wall_ms" "$(echo "100 * $cpu_ms / $wall_ms" | bc -l)"
printf '%-58s %10.1fms %10.0fms %7.3f%%\n' "supervisor CPU vs the agents' summed wall time" "$cpu_ms" "$agents_ms" "$(echo "100 * $cpu_ms / $agents_ms" | bc -l)"
printf '%-58s %12d\n' "bytes lost of 20 x 50 MB" "$lost"
