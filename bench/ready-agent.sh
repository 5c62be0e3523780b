#!/bin/sh
# The agent of bench/run ready: for each line on $BENCH_FIFO, one marker commit made with
# git's hooks off (only the supervisor's watch can see it); "q" ends it.
i=0
while read -r line; do
  [ "$line" = q ] && exit 0
  i=$((i + 1))
  git -c core.hooksPath=/dev/null commit -q --allow-empty -m "step $i: $COCODE_READY_MARKER"
done < "$BENCH_FIFO"
