#!/usr/bin/env python3
"""bench/run replay: `cocode-dispatch replay mine` over a real repository's history, beside the
harness one writes by hand for the same job.

The repository is express at a pinned commit, with its own mocha tests (`npm test`), its
dependencies from the npm registry. These machines do not reach GitHub, so the history comes
from a clone you give: EXPRESS=<a git repository of express holding the pinned commit>.

  cocode   `replay mine --limit COMMITS --json` in a fresh clone, with a fresh environment
           store: environment.setup `npm install` keyed by package.json, check.verify
           `npm test`; its progress lines timed as they come, so the time its first
           PEER_COMMITS commits took is read off the same run.
  by hand  for each of the first PEER_COMMITS commits that touch code and tests (the same rules):
           a worktree of the change and one of its parent with the change's test files,
           `npm install` in each, `npm test` three times in each.

Reported: commits walked, changes tried, tasks found, verify runs, installs, wall time and
time per commit; the skip reasons. The clone keeps its git folder outside the work tree
(--separate-git-dir): express's tests of res.download and res.sendFile refuse any path with a
dot-folder in it, and clean trees and worktrees live under the git folder and `.cocode/`.

Usage: replay_bench.py BIN_DIR SCRATCH EXPRESS COMMITS PEER_COMMITS
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import time

BIN, SCRATCH, EXPRESS = sys.argv[1], sys.argv[2], sys.argv[3]
COMMITS, PEER_COMMITS = int(sys.argv[4]), int(sys.argv[5])
DISPATCH = os.path.join(BIN, "cocode-dispatch")
PIN = "a3714473feb3d2908add734d340e7755fd85e0a3"  # express 5, 2026-07-27
CONFIG = {
    "agents": {"none": {"command": "true"}},
    "environment": {
        "setup": ["npm install --no-audit --no-fund --ignore-scripts --loglevel=error"],
        "key": ["package.json"],
        "key_commands": ["node --version"],
    },
    "check": {"verify": [{"name": "test", "run": "npm test --silent", "timeout": "30s"}]},
}
# express's suite takes 3 to 5 s here. One whose mocha never exits (an old suite failing under
# --bail leaves its server listening) ends at 30 s, a failure, for both sides alike.
TEST_TIMEOUT = 30
# The reasons of changes that were tried for real (their tests ran, or their environment failed).
TRIED = ("its tests do not fail at its base", "does not pass its own tests",
         "its environment does not set up at the base",
         "its environment does not set up at the change")


def sh(args, cwd, check=True, timeout=None, env=None):
    r = subprocess.run(args, cwd=cwd, text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout, env=env)
    if check and r.returncode != 0:
        sys.exit(f"bench: {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return r


def fresh_clone(name):
    work = os.path.join(SCRATCH, name)
    gitdir = os.path.join(SCRATCH, name + "-gitdir")
    for p in (work, gitdir):
        shutil.rmtree(p, ignore_errors=True)
    sh(["git", "clone", "-q", "--no-checkout", "--separate-git-dir=" + gitdir, EXPRESS, work],
       SCRATCH)
    sh(["git", "checkout", "-q", "-B", "main", PIN], work)
    sh(["git", "update-ref", "refs/remotes/origin/main", PIN], work)
    sh(["git", "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"], work)
    for key, value in (("user.name", "bench"), ("user.email", "bench@cocode.invalid")):
        sh(["git", "config", key, value], work)
    return work


# The same rules as cocode's (src/replay/task.cpp, src/check/scorecard.cpp), for the peer.
def is_test(path):
    p = "/" + path.lower()
    name = p.rsplit("/", 1)[1]
    stem = name.split(".", 1)[0]
    return (any(f in p for f in ("/test/", "/tests/", "/spec/", "/specs/", "/__tests__/",
                                 "/testdata/"))
            or name.startswith("test_") or stem.endswith(("_test", "_spec", "test"))
            or ".test." in name or ".spec." in name)


def is_doc(path):
    p = path.lower()
    name = p.rsplit("/", 1)[-1]
    return (p.startswith(("docs/", "doc/")) or "/docs/" in p or "/doc/" in p
            or name.endswith((".md", ".rst", ".adoc", ".txt"))
            or name.startswith(("readme", "changelog", "license")))


def candidates(work, limit):
    log = sh(["git", "log", "--first-parent", "-n", str(limit), "--format=%H %P"], work).stdout
    out = []
    for line in log.splitlines():
        commit, *parents = line.split()
        if not parents or len(parents) > 1:
            continue
        rows = sh(["git", "diff", "--numstat", "--no-renames", parents[0], commit], work).stdout
        files = [r.split("\t") for r in rows.splitlines()]
        if not files or len(files) > 50 or all(f[0] == "-" for f in files):
            continue
        if sum(int(f[0]) + int(f[1]) for f in files if f[0] != "-") > 1000:
            continue
        tests = [f[2] for f in files if is_test(f[2])]
        code = [f[2] for f in files if not is_test(f[2]) and not is_doc(f[2])]
        if tests and code:
            out.append((commit, parents[0], tests))
    return out


def npm_test(tree):
    try:
        r = subprocess.run(["npm", "test", "--silent"], cwd=tree, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=TEST_TIMEOUT)
        return r.returncode == 0
    except subprocess.TimeoutExpired:
        return False


def by_hand():
    work = fresh_clone("peer")
    trees = os.path.join(SCRATCH, "peer-trees")
    began = time.monotonic()
    tried = tasks = runs = installs = 0
    for commit, parent, tests in candidates(work, PEER_COMMITS):
        tried += 1
        results = {}
        for side, rev in (("change", commit), ("base", parent)):
            tree = os.path.join(trees, side)
            shutil.rmtree(tree, ignore_errors=True)
            sh(["git", "worktree", "prune"], work)
            sh(["git", "worktree", "add", "-q", "--detach", tree, rev], work)
            if side == "base":
                for t in tests:
                    if sh(["git", "cat-file", "-e", f"{commit}:{t}"], work, check=False).returncode:
                        if os.path.exists(os.path.join(tree, t)):
                            os.remove(os.path.join(tree, t))
                    else:
                        sh(["git", "checkout", "-q", commit, "--", t], tree)
            installs += 1
            if sh(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts",
                   "--loglevel=error"], tree, check=False).returncode != 0:
                results[side] = None
                continue
            results[side] = [npm_test(tree) for _ in range(3)]
            runs += 3
        if results.get("change") == [True] * 3 and results.get("base") == [False] * 3:
            tasks += 1
        print(f"  by hand: {commit[:12]} {results}", file=sys.stderr, flush=True)
    shutil.rmtree(trees, ignore_errors=True)
    seconds = time.monotonic() - began
    # Said as soon as it is known: a long run cut short still has it.
    print(f"bench: by hand, first {PEER_COMMITS} commits: {seconds:.1f} s, {tried} tried, "
          f"{tasks} tasks", file=sys.stderr, flush=True)
    return {"commits": PEER_COMMITS, "tried": tried, "tasks": tasks, "runs": runs,
            "installs": installs, "seconds": seconds}


def with_cocode():
    work = fresh_clone("cocode")
    os.makedirs(os.path.join(work, ".cocode"), exist_ok=True)
    with open(os.path.join(work, ".cocode", "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    store = os.path.join(SCRATCH, "cocode-store")
    shutil.rmtree(store, ignore_errors=True)
    env = dict(os.environ, COCODE_ENV_STORE=store)
    began = time.monotonic()
    proc = subprocess.Popen([DISPATCH, "replay", "mine", "--limit", str(COMMITS), "--json"],
                            cwd=work, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    walked, at_peer, first = 0, None, collections.Counter()
    for line in proc.stderr:
        print("  cocode: " + line.rstrip(), file=sys.stderr, flush=True)
        if " skipped: " in line or " task: " in line:
            walked += 1
            if walked <= PEER_COMMITS:
                first["tasks"] += " task: " in line
                first["tried"] += " task: " in line or any(
                    " skipped: " + why in line for why in TRIED)
            if walked == PEER_COMMITS:
                at_peer = time.monotonic() - began
                print(f"bench: cocode, first {PEER_COMMITS} commits: {at_peer:.1f} s, "
                      f"{first['tried']} tried, {first['tasks']} tasks", file=sys.stderr,
                      flush=True)
            if walked % 100 == 0:
                print(f"bench: cocode, {walked} commits walked in "
                      f"{time.monotonic() - began:.1f} s", file=sys.stderr, flush=True)
    out = proc.stdout.read()
    if proc.wait() != 0:
        sys.exit(f"bench: replay mine exited {proc.returncode}")
    seconds = time.monotonic() - began
    mined = json.loads(out)
    reasons = collections.Counter(s["why"].split(":")[0] for s in mined["skipped"])
    tried = len(mined["tasks"]) + sum(n for why, n in reasons.items() if why in TRIED)
    keys = [d for d in os.listdir(store) if "." not in d and os.path.isdir(os.path.join(store, d))] \
        if os.path.isdir(store) else []
    return {"commits": COMMITS, "tried": tried, "tasks": len(mined["tasks"]),
            "runs": mined["verify_runs"], "installs": len(keys), "seconds": seconds,
            "at_peer": at_peer, "first": first, "reasons": reasons}


def main():
    os.makedirs(SCRATCH, exist_ok=True)
    if sh(["git", "cat-file", "-e", PIN + "^{commit}"], EXPRESS, check=False).returncode != 0:
        sys.exit(f"bench: {EXPRESS} does not hold express at {PIN[:12]}")
    peer = by_hand()
    ours = with_cocode()
    print(f"\nreplay mine on express at {PIN[:12]} (npm test; environments keyed by package.json)")
    print(f"\n{'first ' + str(PEER_COMMITS) + ' commits':<26}{'cocode':>12}{'by hand':>12}"
          f"{'ratio':>8}")
    cocode_first = ours["at_peer"]
    print(f"{'wall time (s)':<26}{cocode_first or float('nan'):>12.1f}{peer['seconds']:>12.1f}"
          f"{peer['seconds'] / cocode_first if cocode_first else float('nan'):>7.1f}x")
    print(f"{'changes tried':<26}{ours['first']['tried']:>12}{peer['tried']:>12}")
    print(f"{'tasks found':<26}{ours['first']['tasks']:>12}{peer['tasks']:>12}")
    print(f"\n{str(COMMITS) + ' commits':<26}{'cocode':>12}")
    for label, value in (("changes tried", ours["tried"]), ("tasks found", ours["tasks"]),
                         ("verify runs", ours["runs"]), ("environments built", ours["installs"]),
                         ("wall time (s)", round(ours["seconds"], 1)),
                         ("per commit walked (s)", round(ours["seconds"] / COMMITS, 2))):
        print(f"{label:<26}{value:>12}")
    print("\nskipped, by reason:")
    for why, n in ours["reasons"].most_common():
        print(f"  {n:>5}  {why}")


main()
