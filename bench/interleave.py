#!/usr/bin/env python3
"""Times commands interleaved: each round runs every command once, in a fresh random order.

    interleave.py RUNS OUT.json [--prepare PREP] NAME COMMAND [[--prepare PREP] NAME COMMAND ...]

hyperfine runs all of one command's runs, then all of the next's: on a shared machine the
drift between those blocks (and whatever the previous command left the file system doing: an
fsync's journal commit) lands on one command and not the other, and the ratios between close
figures swing by more than what they measure. Here every command sees the same moments and
the same neighbours. Each COMMAND is split like a shell line (shlex) and started directly (no
shell), its output discarded; a command that fails stops the benchmark. `--prepare PREP` runs
PREP, untimed, before each run of the command that follows it. OUT.json holds
{"results": [{"command": NAME, "median": seconds, "times": [...]}]}, as hyperfine's export does.
"""
import json
import os
import random
import shlex
import statistics
import sys
import time

WARMUP = 10


def main():
    runs, out, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    commands, prepare = [], None  # (name, argv, prepare argv or None)
    while args:
        if args[0] == "--prepare" and len(args) > 1:
            prepare, args = shlex.split(args[1]), args[2:]
        elif len(args) > 1:
            commands.append((args[0], shlex.split(args[1]), prepare))
            prepare, args = None, args[2:]
        else:
            break
    if runs < 1 or not commands or args or prepare:
        sys.exit("usage: interleave.py RUNS OUT.json [--prepare PREP] NAME COMMAND ...")
    quiet = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
             (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]

    def once(name, argv):
        start = time.perf_counter_ns()
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=quiet)
        _, status = os.waitpid(pid, 0)
        took = time.perf_counter_ns() - start
        if status != 0:
            sys.exit(f"interleave.py: '{name}' failed ({shlex.join(argv)})")
        return took / 1e9

    def timed(name, argv, prep):
        if prep:
            once(name + " (prepare)", prep)
        return once(name, argv)

    times = {name: [] for name, _, _ in commands}
    for _ in range(WARMUP):
        for command in commands:
            timed(*command)
    order = list(commands)
    for _ in range(runs):
        random.shuffle(order)
        for command in order:
            times[command[0]].append(timed(*command))
    results = [{"command": name, "median": statistics.median(times[name]), "times": times[name]}
               for name, _, _ in commands]
    with open(out, "w") as f:
        json.dump({"results": results}, f)


if __name__ == "__main__":
    main()
