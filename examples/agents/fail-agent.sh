#!/bin/sh
# Fails the way an agent that hit an error should: a clear line on stderr, exit 1.
echo "[ERROR] cannot make sense of issue #$COCODE_ISSUE_NUMBER" >&2
exit 1
