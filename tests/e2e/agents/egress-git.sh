#!/bin/sh
# An agent that reads a repository over HTTP (git reads http_proxy), says what it saw, commits.
set -e
git ls-remote "$GIT_URL" | sed 's/^/remote: /'
git commit -q --allow-empty -m "read the remote" -m "$COCODE_READY_MARKER"
