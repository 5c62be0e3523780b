#!/usr/bin/env python3
"""bench/run report: `cocode-dispatch report` over many run folders.

A repository gets a few real runs (two script agents, one passing, one failing, each
reporting its usage), which are then copied under fresh run ids until there are RUNS of them
(default 100,000). Timed, each REPEAT times (median, min, max): `report` reading every folder
(`--no-cache`), `report` from its cache of ended runs' summaries, and a peer — a Python script
that reads each run's run-info.yaml, check.json and run-end.json and sums the same rows
(runs, PASS, cost by agent): what a team would write by hand.

    bench/report_bench.py BIN_DIR SCRATCH [RUNS] [REPEAT]
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time


def sh(args, cwd, env=None):
    return subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True, text=True)


def make_repo(bin_dir, repo):
    if os.path.exists(repo):
        shutil.rmtree(repo)
    os.makedirs(os.path.join(repo, ".cocode", "issues"))
    sh(["git", "init", "-q", "-b", "main", "."], repo)
    sh(["git", "config", "user.name", "bench"], repo)
    sh(["git", "config", "user.email", "bench@cocode.invalid"], repo)
    for n in range(1, 4):
        with open(os.path.join(repo, ".cocode", "issues", f"{n}.json"), "w") as f:
            json.dump({"number": n, "title": f"Issue {n}", "body": "b", "state": "open",
                       "labels": [{"name": "bug"}]}, f)
    usage = ('echo \'{"type":"cocode.usage","model":"m-1","input_tokens":1000,'
             '"output_tokens":10,"cost_usd":COST}\'; ')
    config = {"agents": {
        "good": {"command": "sh", "args": ["-c", usage.replace("COST", "1.5") +
                 'echo x > f.txt && git add -A && git commit -qm f -m "$COCODE_READY_MARKER"']},
        "bad": {"command": "sh", "args": ["-c", usage.replace("COST", "0.4") + "true"]}}}
    with open(os.path.join(repo, ".cocode", "config.json"), "w") as f:
        json.dump(config, f)
    with open(os.path.join(repo, "README.md"), "w") as f:
        f.write("bench\n")
    sh(["git", "add", "-A"], repo)
    sh(["git", "commit", "-qm", "base"], repo)
    for n in range(1, 4):
        sh([os.path.join(bin_dir, "cocode-dispatch"), "run", str(n), "--issues", ".cocode/issues"],
           repo)


def copy_runs(repo, total):
    runs = os.path.join(repo, ".cocode", "runs")
    seals = os.path.join(repo, ".cocode", "seals")
    real = sorted(d for d in os.listdir(runs) if os.path.isdir(os.path.join(runs, d)))
    made = len(real)
    n = 0
    while made < total:
        src = real[n % len(real)]
        n += 1
        new = "20261126-%02d%02d%02d%03d-%d-1" % ((n // 3600000) % 24, (n // 60000) % 60,
                                                (n // 1000) % 60, n % 1000, 100000 + n)
        dst = os.path.join(runs, new)
        os.mkdir(dst)
        for name in ("run-info.yaml", "check.json", "run-end.json", "events.jsonl"):
            path = os.path.join(runs, src, name)
            if not os.path.exists(path):
                continue
            with open(path) as f:
                text = f.read().replace(src, new)
            with open(os.path.join(dst, name), "w") as f:
                f.write(text)
        seal = os.path.join(seals, src + ".json")
        if os.path.exists(seal):
            with open(seal) as f:
                text = f.read().replace(src, new)
            with open(os.path.join(seals, new + ".json"), "w") as f:
                f.write(text)
        made += 1


def peer(repo):
    """Runs, PASS and cost by agent, read the obvious way."""
    runs = os.path.join(repo, ".cocode", "runs")
    rows = {}
    for d in os.listdir(runs):
        folder = os.path.join(runs, d)
        try:
            with open(os.path.join(folder, "run-info.yaml")) as f:
                agent = next(line.split(":", 1)[1].strip().strip('"') for line in f
                             if line.startswith("agent:"))
        except (OSError, StopIteration):
            continue
        row = rows.setdefault(agent, [0, 0, 0.0])
        row[0] += 1
        try:
            with open(os.path.join(folder, "check.json")) as f:
                row[1] += json.load(f).get("verdict") == "PASS"
        except OSError:
            pass
        try:
            with open(os.path.join(folder, "run-end.json")) as f:
                row[2] += (json.load(f).get("usage") or {}).get("cost_usd") or 0
        except OSError:
            pass
    return rows


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def main():
    bin_dir, scratch = sys.argv[1], sys.argv[2]
    total = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
    repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    repo = os.path.join(scratch, "report-repo")
    os.makedirs(scratch, exist_ok=True)
    make_repo(bin_dir, repo)
    started = time.perf_counter()
    copy_runs(repo, total)
    print(f"{total} run folders made in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    dispatch = os.path.join(bin_dir, "cocode-dispatch")
    report = [dispatch, "report", "--issues", ".cocode/issues", "--since", "2020-01-01",
              "--by", "agent,kind", "--json"]
    # The figures agree: cocode's rows beside the peer's.
    cocode = {r["key"].split()[0]: r for r in json.loads(sh(report, repo).stdout)["rows"]}
    theirs = peer(repo)
    for agent, (runs, passed, _) in theirs.items():
        assert cocode[agent]["runs"] == runs and cocode[agent]["passed"] == passed, agent
    cache = os.path.join(repo, ".cocode", "cache", "scorecard.tsv")
    cold = timed(lambda: sh(report + ["--no-cache"], repo), repeat)

    def warm():
        sh(report, repo)
    sh(report, repo)  # fills the cache
    assert os.path.exists(cache)
    hot = timed(warm, repeat)
    theirs_t = timed(lambda: peer(repo), repeat)
    print(f"\nreport over {total} runs, {os.cpu_count()} cores (median, min-max of {repeat})\n")
    print(f"{'':40} {'median':>9} {'min':>9} {'max':>9} {'vs peer':>8}")
    for name, (med, lo, hi) in [("report, every folder read", cold),
                                ("report, ended runs from its cache", hot),
                                ("peer: python reads 3 files a run", theirs_t)]:
        print(f"{name:40} {med:8.2f}s {lo:8.2f}s {hi:8.2f}s {med / theirs_t[0]:7.2f}x")
    print(f"\ntarget: 100,000 runs in <= 1 s: {'met' if hot[0] <= 1.0 and total >= 100000 else 'not met'}"
          f" ({hot[0]:.2f} s for {total})")


if __name__ == "__main__":
    main()
