#!/bin/sh
# Commits with the marker, then lingers without output (as a chat CLI waiting may do).
echo "work" > "lingered-$COCODE_ISSUE_NUMBER.txt"
git add . && git commit -q -m "Done with #$COCODE_ISSUE_NUMBER

$COCODE_READY_MARKER"
date +%s.%N > "$JRUN_RUN_FOLDER/committed"
sleep 300
