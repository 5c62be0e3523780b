#!/usr/bin/env python3
"""The peer for bench/run watch: how the tools cocode replaces take labelled issues — list them
every INTERVAL seconds (urllib, no ETags, following Link) and start the agent for each issue not
seen before, with no claim, worktree or run folder. Each start is appended to STARTED as
{"issue": N, "time": seconds since the epoch}.
    watch_peer.py API_URL CA_BUNDLE OWNER/NAME TOKEN_ENV INTERVAL STARTED"""
import json
import os
import re
import ssl
import subprocess
import sys
import time
import urllib.request

api, ca, repo, token_env, interval, started = sys.argv[1:7]
context = ssl.create_default_context(cafile=ca)
headers = {"Accept": "application/vnd.github.v3+json",
           "Authorization": "token " + os.environ[token_env], "User-Agent": "peer"}
seen = set()
while True:
    url = f"{api}/repos/{repo}/issues?labels=cocode&state=open&per_page=100"
    while url:
        request = urllib.request.Request(url, headers=headers)
        with urllib.request.urlopen(request, context=context) as r:
            for issue in json.load(r):
                if issue["number"] in seen or "pull_request" in issue:
                    continue
                seen.add(issue["number"])
                subprocess.Popen(["true"])
                with open(started, "a") as out:
                    out.write(json.dumps({"issue": issue["number"], "time": time.time()}) + "\n")
            match = re.search(r'<([^>]+)>;\s*rel="next"', r.headers.get("Link", ""))
            url = match.group(1) if match else None
    time.sleep(float(interval))
