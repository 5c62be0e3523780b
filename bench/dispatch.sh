#!/usr/bin/env bash
# bench/run dispatch: cocode-dispatch against the git CLI and against itself.
#   1. 20 worktrees of a generated 20,000-file repository: `cocode-dispatch run 1..20` with a
#      trivial agent (worktrees made in parallel, plus the 20 runs) vs `git worktree add` x20.
#   2. Trivial agents started per second: 100 runs of `true` on a small repository.
#   3. Dispatcher CPU while 20 agents write 50 MB each, and bytes lost.
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
   rm -rf .cocode/runs .cocode/worktrees wt
   git worktree prune
   git for-each-ref --format='%(refname:short)' refs/heads/cocode refs/heads/wt | xargs -r git branch -q -D)
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
now() { date +%s.%N; }

echo "generating a 20,000-file repository ..."
make_repo "$work/big" 20000 20
issues=$(seq -s ' ' 1 20)

cocode_times=() git_times=()
for _ in $(seq 1 "$runs"); do
  reset_repo "$work/big"; sync
  t0=$(now); (cd "$work/big" && "$bin/cocode-dispatch" run $issues >/dev/null 2>&1); t1=$(now)
  cocode_times+=("$(echo "$t1 - $t0" | bc)")
  reset_repo "$work/big"; sync
  t0=$(now); (cd "$work/big" && for i in $issues; do git worktree add -q -b "wt/$i" "wt/$i"; done); t1=$(now)
  git_times+=("$(echo "$t1 - $t0" | bc)")
done
c=$(printf '%s\n' "${cocode_times[@]}" | median)
g=$(printf '%s\n' "${git_times[@]}" | median)

echo "100 trivial runs on a small repository ..."
make_repo "$work/small" 10 100
rates=()
for _ in $(seq 1 "$runs"); do
  reset_repo "$work/small"
  t0=$(now); (cd "$work/small" && "$bin/cocode-dispatch" run $(seq -s ' ' 1 100) --concurrency 20 >/dev/null 2>&1); t1=$(now)
  rates+=("$(echo "100 / ($t1 - $t0)" | bc -l)")
done
rate=$(printf '%s\n' "${rates[@]}" | median)

echo "20 agents writing 50 MB each ..."
reset_repo "$work/small"
(cd "$work/small"
 printf '{"concurrency": 20, "agents": {"big": {"command": "%s", "env": ["AGENT_OUTPUT_MB"]}}}\n' \
   "$(cd "$(dirname "$0")" && pwd)/../examples/agents/big-output-agent.sh" > .cocode/config.json
 AGENT_OUTPUT_MB=50 /usr/bin/time -f '%e %U %S' -o "$work/time.txt" \
   "$bin/cocode-dispatch" run $(seq -s ' ' 1 20) >/dev/null 2>&1)
read -r wall user sys < "$work/time.txt"
lost=0
for f in "$work"/small/.cocode/runs/*/agent-stdout.txt; do
  size=$(stat -c %s "$f"); lost=$((lost + 52428800 - size))
done

printf '\n%-52s %12s %12s %8s\n' "benchmark (median of $runs)" "cocode" "peer" "ratio"
printf '%-52s %11.2fs %11.2fs %7.2fx\n' "20 worktrees, 20k files (peer: git worktree add x20)" "$c" "$g" "$(echo "$c / $g" | bc -l)"
printf '%-52s %10.0f/s %12s\n' "trivial agents started and finished per second" "$rate" "-"
printf '%-52s %11.2fs %12s\n' "dispatcher CPU, 20 agents x 50 MB (user+sys)" "$(echo "$user + $sys" | bc)" "wall ${wall}s"
printf '%-52s %12d\n' "bytes lost of 20 x 50 MB" "$lost"
