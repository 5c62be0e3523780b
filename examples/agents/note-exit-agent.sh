#!/bin/sh
# Commits a note with the ready marker and records, outside the repository, the exit code it
# ends with ($AGENT_EXIT_FILE): what a run's recorded end must agree with, whatever failed.
trap 'echo $? > "$AGENT_EXIT_FILE"' EXIT
echo "notes on issue $COCODE_ISSUE_NUMBER" > notes.md &&
  git add notes.md &&
  git commit -q -m "Notes

$COCODE_READY_MARKER"
