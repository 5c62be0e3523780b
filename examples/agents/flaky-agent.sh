#!/bin/sh
# Fails on its first ${AGENT_FAILURES:-2} attempts (counted in the run folder), then
# succeeds; records the prompt it was given each time.
n=$(cat "$JRUN_RUN_FOLDER/attempts" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$JRUN_RUN_FOLDER/attempts"
head -n 1 "$JRUN_RUN_FOLDER/prompt.md" > "$JRUN_RUN_FOLDER/prompt-head-$n"
date +%s.%N > "$JRUN_RUN_FOLDER/attempt-$n"
[ "$n" -gt "${AGENT_FAILURES:-2}" ] || { echo "attempt $n fails" >&2; exit 1; }
echo "attempt $n succeeds"
