#!/bin/sh
# Starts a daemon in a session of its own, out of the agent's process group, and exits; the
# daemon would live forever. With AGENT_DAEMON_ENV=clear it starts it under `env -i`, without
# the run's JRUN_ID in its environment. Its command line carries "daemon-of-<run id>", so that
# a test can look for it from outside any sandbox. With AGENT_THEN_WAIT=1 it then waits, as
# wait-agent.sh does, for a file named go in its run folder.
mark="daemon-of-$JRUN_ID"
if [ "${AGENT_DAEMON_ENV:-}" = clear ]; then
  setsid env -i sh -c "while :; do sleep 1; done # $mark" < /dev/null > /dev/null 2>&1 &
else
  setsid sh -c "while :; do sleep 1; done # $mark" < /dev/null > /dev/null 2>&1 &
fi
echo "daemon started"
if [ "${AGENT_THEN_WAIT:-}" = 1 ]; then
  while [ ! -e "$JRUN_RUN_FOLDER/go" ]; do sleep 0.05; done
fi
exit 0
