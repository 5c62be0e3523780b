#!/usr/bin/env python3
"""The cocode agent protocol's example agent: reads its context from the COCODE_* variables,
logs JSON lines, commits its work, then commits again with the ready marker."""
import json
import os
import subprocess
import sys
from datetime import datetime, timezone


def log(level, message):
    print(json.dumps({"timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                      "level": level, "message": message}), flush=True)


def git(*args):
    subprocess.run(["git", *args], check=True, stdout=subprocess.DEVNULL)


def main():
    issue = os.environ["COCODE_ISSUE_NUMBER"]
    marker = os.environ["COCODE_READY_MARKER"]
    with open(os.environ["COCODE_ISSUE_BODY_FILE"]) as f:
        body = f.read()
    log("info", f"Starting work on issue #{issue}")
    with open(f"notes-{issue}.md", "w") as f:
        f.write(f"# Notes for issue #{issue}\n\n{body}\n")
    git("add", ".")
    # --allow-empty: resumed after its work was committed, it still says where it is.
    git("commit", "-q", "--allow-empty", "-m", f"Working on issue #{issue}")
    with open(f"notes-{issue}.md", "a") as f:
        f.write("\nDone.\n")
    git("add", ".")
    git("commit", "-q", "--allow-empty", "-m", f"Fix issue #{issue}\n\n{marker}")
    log("info", "Work complete")
    return 0


if __name__ == "__main__":
    sys.exit(main())
