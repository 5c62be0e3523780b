#!/usr/bin/env python3
# An agent that fetches one page through its proxy, says what it got, and commits.
import os, subprocess, urllib.request

proxy = os.environ.get("HTTP_PROXY", "")
url = "http://127.0.0.1:%s/visit" % os.environ["VISIT_PORT"]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
print("visited:", opener.open(url, timeout=10).read().decode(), flush=True)
subprocess.run(["git", "commit", "-q", "--allow-empty", "-m",
                "visited\n\n" + os.environ["COCODE_READY_MARKER"]], check=True)
