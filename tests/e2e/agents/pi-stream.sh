#!/bin/sh
# A coding CLI of a team's own, declared in .cocode/presets/: it takes its prompt as its last
# argument, prints pi's JSON events (--mode json) as it works, and commits with the marker.
set -e
for prompt; do :; done
printf '{"type":"session","version":3,"id":"0a1b2c3d-0000-4000-8000-00000000cafe","cwd":"%s"}\n' "$PWD"
printf '{"type":"agent_start"}\n'
usage='"usage":{"input":900,"output":40,"cacheRead":100,"cacheWrite":0}'
printf '{"type":"message_end","message":{"role":"assistant","model":"mine-1","content":[{"type":"toolCall","name":"bash","arguments":{"command":"echo fixed > fix.txt"}}],%s}}\n' "$usage"
printf '{"type":"tool_execution_start","toolName":"bash","args":{"command":"echo fixed > fix.txt"}}\n'
echo fixed > fix.txt
git add fix.txt
git commit -q -m "Fix it" -m "$COCODE_READY_MARKER"
printf '{"type":"tool_execution_end","toolName":"bash","result":{"content":[{"type":"text","text":"(no output)"}]},"isError":false}\n'
case $prompt in
  *"Issue 1"*) said="the prompt came as my last argument" ;;
  *) said="no prompt in my arguments" ;;
esac
printf '{"type":"message_end","message":{"role":"assistant","model":"mine-1","content":[{"type":"text","text":"Done: %s."}],%s}}\n' "$said" "$usage"
printf '{"type":"agent_end","messages":[]}\n'
