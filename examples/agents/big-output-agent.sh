#!/bin/sh
# Writes ${AGENT_OUTPUT_MB:-200} MB to stdout as 1024-byte lines (1023 characters and a
# newline), then exits 0: the size of agent-stdout.txt says whether a byte was lost.
mb=${AGENT_OUTPUT_MB:-200}
yes "$(printf '%01023d' 0)" | head -c $((mb * 1024 * 1024))
