#!/usr/bin/env python3
"""The peer of `bench/run textproto`: the CodingAgent text protocol done the plain way in
Python, as a script-sized reference agent would (a line scanner, os.path.realpath for the
sandbox, open().write() for files; `git ls-files` and os.lstat for the listing). It measures
itself in-process, like the cocode side, and prints two lines: `execute <ms>` and
`outbox <ms>`.

    textproto_peer.py execute <worktree> <inbox>   parse + execute the inbox
    textproto_peer.py outbox <worktree>            list the worktree, render the outbox
"""
import os
import re
import subprocess
import sys
import time

NAMES = ("CREATE_FILE", "EDIT_FILE", "DELETE_FILE", "READ_FILE", "RUN_COMMAND", "MESSAGE", "DONE")
BODY = {"CREATE_FILE", "EDIT_FILE", "RUN_COMMAND", "MESSAGE", "DONE"}
ATTR = re.compile(r'(\w+)="([^"]*)"')


def parse(text):
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        t = lines[i].strip()
        i += 1
        m = re.match(r"\[(\w+)", t)
        if not m or m.group(1) not in NAMES:
            continue
        name = m.group(1)
        attrs = dict(ATTR.findall(t))
        body = []
        if name in BODY:
            close = "[/" + name + "]"
            while i < len(lines) and lines[i].strip() != close:
                body.append(lines[i])
                i += 1
            i += 1
        out.append((name, attrs, "".join(l + "\n" for l in body)))
    return out


def resolve(root, rel):
    path = os.path.realpath(os.path.join(root, rel))
    if not (path + os.sep).startswith(root + os.sep) or "/.git/" in path + "/":
        raise ValueError("REJECTED: Path is outside workspace")
    return path


def execute(root, commands):
    results = []
    for name, attrs, body in commands:
        try:
            if name in ("CREATE_FILE", "EDIT_FILE", "DELETE_FILE", "READ_FILE"):
                path = resolve(root, attrs["path"])
            if name == "CREATE_FILE":
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path + ".tmp", "w") as f:
                    f.write(body)
                os.replace(path + ".tmp", path)
            elif name == "EDIT_FILE":
                with open(path) as f:
                    lines = f.readlines()
                s, e = int(attrs["start_line"]), int(attrs["end_line"])
                lines[s - 1:e] = [body]
                with open(path + ".tmp", "w") as f:
                    f.write("".join(lines))
                os.replace(path + ".tmp", path)
            elif name == "DELETE_FILE":
                os.remove(path)
            elif name == "READ_FILE":
                os.stat(path)
            results.append("[OK] " + name)
        except (OSError, ValueError, KeyError) as e:
            results.append("[FAILED] " + name + ": " + str(e))
    return results


def outbox(root):
    names = subprocess.run(["git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard"],
                           capture_output=True, check=True).stdout.decode().split("\0")
    listing = ["## Workspace Files"]
    for n in sorted(set(n for n in names if n)):
        listing.append("  %s (%d bytes)" % (n, os.lstat(os.path.join(root, n)).st_size))
    return "\n".join(["=== HEADER ===", "Session: 00000000", "Sequence: 1", "Task: t",
                      "=== PROTOCOL ===", "…", "=== CONTEXT ==="] + listing +
                     ["=== PROMPT ===", "t", ""])


def main():
    mode, root = sys.argv[1], os.path.realpath(sys.argv[2])
    start = time.perf_counter()
    if mode == "execute":
        with open(sys.argv[3]) as f:
            results = execute(root, parse(f.read()))
        assert all(r.startswith("[OK]") for r in results), [r for r in results if "FAILED" in r][:3]
    else:
        text = outbox(root)
        assert len(text) > 0
    print("%s %.3f" % (mode, (time.perf_counter() - start) * 1000))


if __name__ == "__main__":
    main()
