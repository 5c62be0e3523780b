#!/bin/sh
# Double-forks a daemon into its own session (setsid), out of the agent's process group,
# records its pid, and exits. The daemon would live for an hour.
setsid sh -c 'sleep 3600 & echo $! > "$JRUN_RUN_FOLDER/daemon.pid"' < /dev/null > /dev/null 2>&1 &
wait
while [ ! -s "$JRUN_RUN_FOLDER/daemon.pid" ]; do sleep 0.05; done
echo "daemon $(cat "$JRUN_RUN_FOLDER/daemon.pid") started"
exit 0
