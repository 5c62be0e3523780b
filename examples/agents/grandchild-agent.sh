#!/bin/sh
# Leaves a grandchild holding its stdout open, then exits 0 at once.
sh -c 'sleep 300' &
echo "left a grandchild behind: $!"
exit 0
