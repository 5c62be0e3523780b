#!/usr/bin/env python3
"""bench/run env: the prepared environment against worktree_setup in every worktree, on two
real Node projects installed from the npm registry with the lockfiles committed here:

  express 5.3.0   its published package (npm pack), bench/env/express/package-lock.json:
                  66 MB of node_modules, 6,569 files
  an application  bench/env/app: 640 MB of node_modules, 24,936 files, and a build step
                  (`npm run build`: tsc) in its setup

For each, five agents on one issue, then five agents on each of five issues (25 runs), with
  worktree_setup  `npm ci` (and the build) in every new worktree, as cocode did before
  environment     the same commands once, as `environment.setup` (its build timed apart), then
                  every run takes it: an overlay per agent in the sandbox
Reported: from `cocode-dispatch run` to each agent's start (run-info's start_time), p50, p90
and max; the machine's CPU during the batch (/proc/stat: every process, the sandboxed ones
included; the machine otherwise quiet); the disk the batch added
(its worktrees and overlays). Then ten dispatchers at once with nothing built: how many builds.

Usage: env_bench.py BIN_DIR SOURCE_DIR RUNS [SCRATCH]
"""
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BIN, SOURCE, RUNS = sys.argv[1], sys.argv[2], int(sys.argv[3])
SCRATCH = sys.argv[4] if len(sys.argv) > 4 else None
DISPATCH = os.path.join(BIN, "cocode-dispatch")
AGENTS = [f"a{i}" for i in range(1, 6)]


def sh(args, cwd, env=None, check=True, capture=True):
    r = subprocess.run(args, cwd=cwd, env=env, text=True,
                       stdout=subprocess.PIPE if capture else None,
                       stderr=subprocess.PIPE if capture else None)
    if check and r.returncode != 0:
        sys.exit(f"bench: {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r


def du_kib(*paths):
    total = 0
    for p in paths:
        if os.path.exists(p):
            total += int(sh(["du", "-sk", p], "/").stdout.split()[0])
    return total


def tree_size(path):
    files, size = 0, 0
    for root, _, names in os.walk(path):
        for n in names:
            st = os.lstat(os.path.join(root, n))
            files += 1
            size += st.st_size
    return files, size


def origin_of(name, work):
    """A git repository of the project, committed, with ten local issues."""
    repo = os.path.join(work, name, "origin")
    os.makedirs(repo)
    if name == "express":
        sh(["npm", "pack", "express@5.3.0", "--silent", "--pack-destination", work], work)
        sh(["tar", "xzf", os.path.join(work, "express-5.3.0.tgz"), "-C", repo,
            "--strip-components=1"], work)
        for f in ("package-lock.json", ".npmrc"):
            shutil.copy(os.path.join(SOURCE, "bench/env/express", f), repo)
    else:
        shutil.copytree(os.path.join(SOURCE, "bench/env/app"), repo, dirs_exist_ok=True)
    with open(os.path.join(repo, ".gitignore"), "w") as f:
        f.write("node_modules/\ndist/\n")
    issues = os.path.join(repo, ".cocode/issues")
    os.makedirs(issues)
    for n in range(1, 11):
        with open(os.path.join(issues, f"{n}.json"), "w") as f:
            json.dump({"number": n, "title": f"issue {n}", "state": "open"}, f)
    sh(["git", "init", "-q", "-b", "main"], repo)
    sh(["git", "add", "-A"], repo)
    sh(["git", "-c", "user.name=bench", "-c", "user.email=bench@cocode.invalid", "commit", "-q",
        "-m", name], repo)
    return repo


def setup_commands(name):
    ci = "npm ci --no-audit --no-fund --loglevel=error"
    return [ci] if name == "express" else [ci, "npm run build --silent"]


def clone(origin, work, label, config):
    repo = os.path.join(work, label)
    # Every clone keeps `origin`: the environment's key names the repository by it, so the
    # clones share one environment as a team's clones do.
    sh(["git", "clone", "-q", origin, repo], work)
    with open(os.path.join(repo, ".cocode/config.json"), "w") as f:
        json.dump(config, f)
    sh(["git", "add", "-A"], repo)
    sh(["git", "-c", "user.name=bench", "-c", "user.email=bench@cocode.invalid", "commit", "-q",
        "-m", "config"], repo)
    return repo


def config_of(name, mode):
    config = {"concurrency": 5, "network": {"allow": ["npm"]},
              "agents": {a: {"command": "true"} for a in AGENTS}}
    if mode == "worktree_setup":
        config["worktree_setup"] = {"commands": setup_commands(name)}
    else:
        config["environment"] = {"setup": setup_commands(name)}
    return config


def start_times(repo):
    runs = os.path.join(repo, ".cocode/runs")
    out = []
    for run in sorted(os.listdir(runs)):
        info = os.path.join(runs, run, "run-info.yaml")
        if not os.path.isfile(info):
            continue
        for line in open(info):
            if line.startswith("start_time:"):
                text = line.split(":", 1)[1].strip().strip('"')
                if text:
                    out.append(datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
                               .replace(tzinfo=datetime.timezone.utc).timestamp())
    return out


def batch(repo, issues, env):
    """One `run`: each agent's start after it, CPU, disk added."""
    before = busy_seconds()
    t0 = time.time()
    r = sh([DISPATCH, "run", *map(str, issues), "--no-check"], repo, env, check=False)
    cpu = busy_seconds() - before
    delays = sorted(t - t0 for t in start_times(repo))
    if len(delays) != len(issues) * len(AGENTS):
        sys.exit(f"bench: {len(delays)} agents started of {len(issues) * len(AGENTS)}: {r.stderr}")
    if ": building (" in r.stderr:
        sys.exit("bench: a batch built the environment instead of taking it: " + r.stderr)
    disk = du_kib(os.path.join(repo, ".cocode/worktrees"), os.path.join(repo, ".git/cocode/views"))
    views = du_kib(os.path.join(repo, ".git/cocode/views"))
    return delays, cpu, disk, views


def busy_seconds():
    """The machine's CPU time so far, every process's (user, nice, system, irq, softirq,
    steal): what a batch cost, sandboxed and detached processes included."""
    fields = open("/proc/stat").readline().split()[1:]
    ticks = sum(int(fields[i]) for i in (0, 1, 2, 5, 6, 7))
    return ticks / os.sysconf("SC_CLK_TCK")


def p(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def row(label, shape, results):
    p50 = statistics.median(p(d, 0.5) for d, _, _, _ in results)
    p90 = statistics.median(p(d, 0.9) for d, _, _, _ in results)
    worst = statistics.median(max(d) for d, _, _, _ in results)
    cpu = statistics.median(c for _, c, _, _ in results)
    disk = statistics.median(k for _, _, k, _ in results) / 1024
    print(f"| {label} | {shape} | {p50:.2f} s | {p90:.2f} s | {worst:.2f} s | {cpu:.1f} s | "
          f"{disk:,.0f} MiB |")
    return p90


def bench_project(name, work):
    origin = origin_of(name, work)
    store = os.path.join(work, name, "store")
    env = dict(os.environ, COCODE_ENV_STORE=store)
    # What the project's setup makes, measured once.
    probe = clone(origin, os.path.join(work, name), "probe", config_of(name, "environment"))
    t0 = time.time()
    before = busy_seconds()
    built = sh([DISPATCH, "env", "build", "--json"], probe, env)
    build_cpu = busy_seconds() - before
    build_s = time.time() - t0
    entry = json.loads(built.stdout)
    files, size = tree_size(os.path.join(entry["dir"], "tree"))
    print(f"\n{name}: the environment is {size / 1e6:,.0f} MB in {files:,} files; built once in "
          f"{build_s:.1f} s ({build_cpu:.1f} s CPU), then taken by every run below\n")
    print("| setup | runs | run → agent start p50 | p90 | max | CPU | disk added |")
    print("|---|---|---:|---:|---:|---:|---:|")
    n = 0
    for shape, issues, reps_setup in (("5 agents × 1 issue", [1], 1),
                                      ("5 agents × 5 issues", [1, 2, 3, 4, 5], 1)):
        per_worktree, prepared, overlays = [], [], []
        for _ in range(max(1, int(os.environ.get("SETUP_RUNS", reps_setup)))):
            n += 1
            repo = clone(origin, os.path.join(work, name), f"w{n}", config_of(name, "worktree_setup"))
            per_worktree.append(batch(repo, issues, env))
            shutil.rmtree(repo, ignore_errors=True)
        for _ in range(RUNS):
            n += 1
            repo = clone(origin, os.path.join(work, name), f"e{n}", config_of(name, "environment"))
            result = batch(repo, issues, env)
            prepared.append(result)
            overlays.append(result[3] / len(result[0]))
            shutil.rmtree(repo, ignore_errors=True)
        a = row("worktree_setup in each worktree", shape, per_worktree)
        b = row("the prepared environment", shape, prepared)
        print(f"| ratio (p90) | | {b / a:.3f}× | | | | overlay per agent: "
              f"{statistics.median(overlays):.0f} KiB |")

    # Ten dispatchers at once, nothing built yet: one build.
    shutil.rmtree(store, ignore_errors=True)
    repo = clone(origin, os.path.join(work, name), "ten", config_of(name, "environment"))
    procs = [subprocess.Popen([DISPATCH, "run", str(i), "--agent", "a1", "--no-check"], cwd=repo,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for i in range(1, 11)]
    said = [proc.communicate()[1] for proc in procs]
    builds = sum(s.count(": building (") for s in said)
    keys = [d for d in os.listdir(store) if len(d) == 24]
    print(f"\nten dispatchers at once, nothing built: {builds} build(s), {len(keys)} environment(s) "
          f"in the store, {len(start_times(repo))} agents started")


def main():
    work = SCRATCH or tempfile.mkdtemp(prefix="cocode-bench-env-")
    if SCRATCH:
        shutil.rmtree(SCRATCH, ignore_errors=True)
        os.makedirs(SCRATCH)
    try:
        for name in os.environ.get("PROJECTS", "express app").split():
            bench_project(name, work)
    finally:
        if not os.environ.get("KEEP"):
            shutil.rmtree(work, ignore_errors=True)


main()
