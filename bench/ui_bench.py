#!/usr/bin/env python3
"""bench/run ui: the dashboard with 1,000 runs in the folder, beside the terminal's live view.

The repository of bench/report_bench.py (a few real runs, copied under fresh run ids until
there are RUNS of them). Measured, each REPEAT times (median, min, max):

- the first page: in Debian's chromium (bench/ui_browser.mjs, playwright-core), from the
  navigation to the first races drawn with their rows (1,000 runs on 250 issues, four agents each); beside
  it `status` printing the same runs;
- a change on screen: a run's run-info.yaml rewritten (atomically, as cocode writes it) to
  the moment the page shows the new state; beside it `status --watch` printing the change;
- CPU while nobody looks: the server's CPU time over IDLE seconds with no page open, with a
  page open and nothing changing, and `status --watch`'s over the same time.

    bench/ui_bench.py BIN_DIR SCRATCH PEERS CHROMIUM [RUNS] [REPEAT] [IDLE]
"""
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_bench import copy_runs, make_repo  # noqa: E402  (the same repository)

TOKEN = "bench-token-0123456789abcdef"


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(path, limit=60):
    end = time.time() + limit
    while not os.path.exists(path):
        if time.time() > end:
            raise SystemExit(f"bench/ui: {path} never appeared")
        time.sleep(0.02)


def rewrite_status(folder, status):
    """run-info.yaml with a new status, written as cocode writes it: a new file renamed over."""
    info = os.path.join(folder, "run-info.yaml")
    with open(info) as f:
        lines = f.read().splitlines()
    out = [f"status: {status}" if line.startswith("status:") else line for line in lines]
    with open(info + ".bench", "w") as f:
        f.write("\n".join(out) + "\n")
    os.rename(info + ".bench", info)


def start_waiter(bin_dir, repo):
    """A real run that lasts until told: `status --watch` watches until every run has ended."""
    path = os.path.join(repo, ".cocode", "config.json")
    with open(path) as f:
        config = json.load(f)
    config["agents"]["waiter"] = {"command": "sh", "args": [
        "-c", 'while [ ! -e "$JRUN_RUN_FOLDER/end" ]; do sleep 0.2; done']}
    with open(path, "w") as f:
        json.dump(config, f)
    subprocess.run([os.path.join(bin_dir, "cocode-dispatch"), "run", "1", "--agent", "waiter",
                    "--detach", "--issues", ".cocode/issues"], cwd=repo, check=True,
                   capture_output=True)
    runs_dir = os.path.join(repo, ".cocode", "runs")
    for d in os.listdir(runs_dir):
        info = os.path.join(runs_dir, d, "run-info.yaml")
        if os.path.exists(info) and "agent: waiter" in open(info).read():
            return os.path.join(runs_dir, d)
    raise SystemExit("bench/ui: the waiting run did not start")


def watch_figures(bin_dir, repo, folder, repeat, idle):
    """`status --watch`: from each rewrite to its line for the run; its CPU while idle. Its
    output is read as it comes, by a thread: a pipe left unread would stop it."""
    rewrite_status(folder, "completed")  # each change below is one from what it first saw
    proc = subprocess.Popen([os.path.join(bin_dir, "cocode-dispatch"), "status", "--watch"],
                            cwd=repo, stdout=subprocess.PIPE, text=True)
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put((time.time(), line)) for line in proc.stdout],
                     daemon=True).start()
    run_id = os.path.basename(folder)

    def seen(state):
        while True:
            at, line = lines.get(timeout=30)
            if run_id in line and state in line:
                return at

    seen("completed")  # its first look: every run once
    time.sleep(1)
    before = cpu_seconds(proc.pid)
    time.sleep(idle)
    cpu = cpu_seconds(proc.pid) - before
    times = []
    for i in range(repeat):
        state = "failed" if i % 2 == 0 else "completed"
        t0 = time.time()
        rewrite_status(folder, state)
        times.append(seen(state) - t0)
    return times, cpu, proc


def timed(args, cwd, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.time()
        subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.time() - t0)
    return times


def row(name, ours, peer_name, peer, unit="ms"):
    scale = 1000 if unit == "ms" else 1

    def cell(xs):
        if isinstance(xs, (int, float)):
            return f"{xs * scale:10.1f}"
        return f"{statistics.median(xs) * scale:10.1f} ({min(xs) * scale:.0f}-{max(xs) * scale:.0f})"

    ours_m = ours if isinstance(ours, (int, float)) else statistics.median(ours)
    peer_m = peer if isinstance(peer, (int, float)) else statistics.median(peer)
    ratio = f"{peer_m / ours_m:8.1f}x" if ours_m > 0 else "   (0 ours)"
    print(f"{name:<34} {cell(ours):>22} {unit:<3} | {peer_name:<26} {cell(peer):>22} {unit:<3} {ratio}")


def main():
    bin_dir, scratch, peers, chromium = (os.path.abspath(a) for a in sys.argv[1:5])
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 1000
    repeat = int(sys.argv[6]) if len(sys.argv) > 6 else 7
    idle = int(sys.argv[7]) if len(sys.argv) > 7 else 10
    repo = os.path.join(scratch, "ui-repo")
    print(f"== a repository with {runs} runs (bench/report_bench.py's)", file=sys.stderr)
    make_repo(bin_dir, repo)
    copy_runs(repo, runs)
    runs_dir = os.path.join(repo, ".cocode", "runs")
    folders = sorted(d for d in os.listdir(runs_dir) if os.path.isdir(os.path.join(runs_dir, d)))
    # Races as a team has them: four agents an issue (the copies all say issues 1 to 3).
    for n, d in enumerate(folders):
        info = os.path.join(runs_dir, d, "run-info.yaml")
        with open(info) as f:
            text = f.read()
        with open(info, "w") as f:
            f.write("\n".join(f"issue: {n // 4 + 1}" if line.startswith("issue:") else line
                              for line in text.splitlines()) + "\n")
    changed = os.path.join(runs_dir, folders[len(folders) // 2])
    rewrite_status(changed, "completed")
    waiter = start_waiter(bin_dir, repo)
    try:
        measure(bin_dir, repo, peers, chromium, scratch, runs, repeat, idle, changed, waiter)
    finally:
        # The waiting run ends however the bench did.
        open(os.path.join(waiter, "end"), "w").close()


def measure(bin_dir, repo, peers, chromium, scratch, runs, repeat, idle, changed, waiter):

    listening = os.path.join(repo, ".cocode", "ui", "listening")
    if os.path.exists(listening):
        os.remove(listening)
    env = dict(os.environ, COCODE_UI_TOKEN=TOKEN)
    t0 = time.time()
    server = subprocess.Popen([os.path.join(bin_dir, "cocode-dispatch"), "ui", "--port", "0"],
                              cwd=repo, env=env, stdout=subprocess.DEVNULL)
    try:
        wait_for(listening)
        started = time.time() - t0
        with open(listening) as f:
            where = f.read().strip()
        time.sleep(1)
        before = cpu_seconds(server.pid)
        time.sleep(idle)
        idle_nobody = cpu_seconds(server.pid) - before

        scenario = {"peers": peers, "chromium": chromium, "url": f"http://{where}/#token={TOKEN}",
                    "repeat": repeat, "idle": idle, "changed": changed,
                    "changedId": os.path.basename(changed), "serverPid": server.pid}
        with open(os.path.join(scratch, "ui-scenario.json"), "w") as f:
            json.dump(scenario, f)
        # The peers' Node.js first: playwright-core needs a newer one than Debian 12's.
        node_env = dict(os.environ, PATH=os.path.join(peers, "node_modules", ".bin") + os.pathsep +
                        os.environ.get("PATH", ""))
        done = subprocess.run(["node", os.path.join(os.path.dirname(__file__), "ui_browser.mjs"),
                               os.path.join(scratch, "ui-scenario.json")],
                              check=True, capture_output=True, text=True, env=node_env)
        measured = json.loads(done.stdout)
    finally:
        server.terminate()
        server.wait()
    status = timed([os.path.join(bin_dir, "cocode-dispatch"), "status"], repo, repeat)
    watch, watch_cpu, watcher = watch_figures(bin_dir, repo, changed, repeat, idle)
    open(os.path.join(waiter, "end"), "w").close()
    watcher.wait(timeout=60)

    print(f"\nthe dashboard with {runs} runs ({repeat} times each; median (min-max)); "
          f"the server listened {started * 1000:.0f} ms after its start\n")
    print(f"{'':<34} {'cocode-dispatch ui':>26} | {'the terminal':<26} {'':>26} ratio")
    row("first page (races drawn)", [x / 1000 for x in measured["firstPage"]],
        "status (printed)", status)
    row("  of which GET /api/runs", [x / 1000 for x in measured["apiRuns"]], "", status)
    row("a state change on screen", [x / 1000 for x in measured["change"]],
        "status --watch (printed)", watch)
    row(f"CPU over {idle} s, nobody watching", idle_nobody, f"status --watch, {idle} s",
        watch_cpu)
    row(f"CPU over {idle} s, a page open, idle", measured["idleCpu"], f"status --watch, {idle} s",
        watch_cpu)


if __name__ == "__main__":
    main()
