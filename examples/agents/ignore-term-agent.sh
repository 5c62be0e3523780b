#!/bin/sh
# Ignores SIGTERM and never finishes: only SIGKILL ends it.
trap '' TERM
echo "ignoring SIGTERM from now on"
while :; do sleep 1; done
