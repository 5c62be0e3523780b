#!/bin/sh
# Waits until a file named go appears in its run folder (at most a minute), then exits 0:
# a test decides when it ends instead of a clock.
i=0
while [ ! -e "$JRUN_RUN_FOLDER/go" ] && [ $i -lt 1200 ]; do
  sleep 0.05
  i=$((i + 1))
done
echo "went"
