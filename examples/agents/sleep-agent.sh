#!/bin/sh
# Records when it started and ended in the run folder, sleeping ${AGENT_SLEEP:-1}s.
date +%s.%N > "$JRUN_RUN_FOLDER/started"
sleep "${AGENT_SLEEP:-1}"
date +%s.%N > "$JRUN_RUN_FOLDER/ended"
