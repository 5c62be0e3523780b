#!/usr/bin/env python3
"""The peer for bench/run github: how the Python tools cocode replaces list issues, with the
standard library (urllib, json): follow Link rel="next", drop pull requests. No ETag cache.
    github_peer.py API_URL CA_BUNDLE OWNER/NAME TOKEN_ENV"""
import json
import os
import re
import ssl
import sys
import urllib.request

api, ca, repo, token_env = sys.argv[1:5]
context = ssl.create_default_context(cafile=ca)
url = f"{api}/repos/{repo}/issues?state=all&per_page=100"
headers = {"Accept": "application/vnd.github.v3+json",
           "Authorization": "token " + os.environ[token_env], "User-Agent": "peer"}
issues = []
while url:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), context=context) as r:
        issues += [i for i in json.load(r) if "pull_request" not in i]
        match = re.search(r'<([^>]+)>;\s*rel="next"', r.headers.get("Link", ""))
        url = match.group(1) if match else None
print(len(issues))
