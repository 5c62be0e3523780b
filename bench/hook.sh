#!/usr/bin/env bash
# bench/run hook: the cost of `git commit --allow-empty` under each hook setup.
set -euo pipefail
build=$1 runs=$2
bin=$build/bin peers=$build/peers/node_modules/.bin
work=$(mktemp -d "${TMPDIR:-/tmp}/cocode-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@cocode.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@cocode.invalid
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export PRE_COMMIT_HOME=$work/pre-commit-home LEFTHOOK_BIN=$peers/lefthook
unset JRUN_RUN_FOLDER COCODE_READY_MARKER

repo() {  # a repository with one commit and no automatic gc (thousands of commits follow)
  git init -q -b main "$work/$1"
  git -C "$work/$1" config gc.auto 0
  git -C "$work/$1" commit -q --allow-empty -m base
  echo "$work/$1"
}

none=$(repo none)
cocode=$(repo cocode)
"$bin/cocode-hook" install --repo "$cocode" >/dev/null
git -C "$cocode" worktree add -q -b cocode/1-bench "$cocode/.cocode/worktrees/1-bench"
run=$cocode/.cocode/runs/20260101-000000000-1-1
mkdir -p "$run"
printf 'run_id: "20260101-000000000-1-1"\nstatus: running\nbase_commit: "%s"\n' "$(git -C "$cocode" rev-parse HEAD)" > "$run/run-info.yaml"
echo "$run" > "$(git -C "$cocode/.cocode/worktrees/1-bench" rev-parse --absolute-git-dir)/cocode-run"

shell=$(repo shell)
printf '#!/bin/sh\n' > "$shell/.git/hooks/post-commit" && chmod +x "$shell/.git/hooks/post-commit"

lefthook=$(repo lefthook)
printf 'post-commit:\n  commands:\n    noop:\n      run: "true"\n' > "$lefthook/lefthook.yml"
(cd "$lefthook" && "$peers/lefthook" install >/dev/null)

husky=$(repo husky)
(cd "$husky" && "$peers/husky" >/dev/null && printf 'true\n' > .husky/post-commit)

precommit=$(repo precommit)
cat > "$precommit/.pre-commit-config.yaml" <<'YAML'
repos:
- repo: local
  hooks:
  - id: noop
    name: noop
    language: system
    entry: "true"
    always_run: true
    pass_filenames: false
    stages: [post-commit]
YAML
(cd "$precommit" && git add .pre-commit-config.yaml && git commit -q -m cfg && pre-commit install --hook-type post-commit >/dev/null)

# The figures the goals are set on, interleaved (bench/interleave.py): every setup sees the same
# moments of the machine. The run's own worktree with hooks off is the like-for-like floor of a
# commit in a run (a linked worktree, the same repository and its file system's state).
commit="commit -q --allow-empty -m"
wt=$cocode/.cocode/worktrees/1-bench
python3 "$(dirname "$0")/interleave.py" "$runs" "$work/hook.json" \
  "no hook" "git -C $none $commit x" \
  "cocode, outside a run" "git -C $cocode $commit x" \
  "cocode, in a run, marker recorded" "git -C $wt $commit 'done: cocode ready for check'" \
  "the run's worktree, hooks off" "git -c core.hooksPath=/dev/null -C $wt $commit x" \
  "empty #!/bin/sh hook" "git -C $shell $commit x"
ready=$(wc -l < "$run/events.jsonl")

# The peers, tens of times slower, with hyperfine: their node and python processes would
# disturb the close figures above if they ran in between.
hyperfine -N --warmup 20 --runs "$runs" --export-json "$work/peers.json" \
  -n "no hook" "git -C $none $commit x" \
  -n "lefthook, one command" "git -C $lefthook $commit x" \
  -n "husky, one command" "git -C $husky $commit x" \
  -n "pre-commit, one local hook" "git -C $precommit $commit x" >/dev/null

python3 - "$work/hook.json" "$ready" "$work/peers.json" <<'PY'
import json, sys
def table(title, path):
    results = json.load(open(path))["results"]
    base = results[0]["median"]
    print(f"{title:40} {'median ms':>10} {'x no hook':>10}")
    for r in results:
        print(f"{r['command']:40} {r['median']*1000:10.2f} {r['median']/base:10.2f}")
    return {r["command"]: r["median"] for r in results}
by = table("git commit --allow-empty (interleaved)", sys.argv[1])
in_run, floor = by["cocode, in a run, marker recorded"], by["the run's worktree, hooks off"]
print(f"\nin a run, marker recorded: x {in_run / floor:.2f} the same worktree with hooks off")
print(f"READY lines recorded in the run: {sys.argv[2]} (one per marker commit)\n")
table("git commit --allow-empty (the peers)", sys.argv[3])
PY

# The pre-push gate on a push that is not cocode's work: no hook, an empty shell hook (git's
# own cost of any pre-push hook), and cocode's gate (which reads from git's loose objects
# whether the pushed commits carry the marker, and lets the push go).
pushrepo() {  # a repository with a bare origin and a branch `plain` of one ordinary commit
  local dir; dir=$(repo "$1")
  git init -q --bare "$work/$1-origin.git"
  git -C "$dir" remote add origin "$work/$1-origin.git"
  git -C "$dir" push -q origin main
  git -C "$dir" checkout -q -b plain
  git -C "$dir" commit -q --allow-empty -m "ordinary work"
  echo "$dir"
}
push_none=$(pushrepo push-none)
push_shell=$(pushrepo push-shell)
printf '#!/bin/sh\ncat >/dev/null\n' > "$push_shell/.git/hooks/pre-push"
chmod +x "$push_shell/.git/hooks/pre-push"
push_gate=$(pushrepo push-gate)
"$bin/cocode-hook" install --repo "$push_gate" --hook pre-push >/dev/null
python3 "$(dirname "$0")/interleave.py" "$((runs / 5 > 20 ? runs / 5 : 20))" "$work/push.json" \
  --prepare "git -C $work/push-none-origin.git update-ref -d refs/heads/plain" \
  "no hook" "git -C $push_none push -q origin plain" \
  --prepare "git -C $work/push-shell-origin.git update-ref -d refs/heads/plain" \
  "empty #!/bin/sh pre-push hook" "git -C $push_shell push -q origin plain" \
  --prepare "git -C $work/push-gate-origin.git update-ref -d refs/heads/plain" \
  "cocode pre-push gate" "git -C $push_gate push -q origin plain"
python3 - "$work/push.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
base = results[0]["median"]
print(f"\n{'git push of an unrelated branch (interleaved)':46} {'median ms':>10} {'x no hook':>10}")
for r in results:
    print(f"{r['command']:46} {r['median']*1000:10.2f} {r['median']/base:10.2f}")
PY
