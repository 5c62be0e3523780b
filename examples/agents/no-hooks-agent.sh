#!/bin/sh
# Commits the marker with git's hooks turned off, the way some agents run git, then lingers:
#   AGENT_HOOKS_OFF=cli        git -c core.hooksPath=/dev/null commit
#   AGENT_HOOKS_OFF=env        GIT_CONFIG_* setting core.hooksPath empty (gemini's shell tool)
#   AGENT_HOOKS_OFF=no-verify  git commit --no-verify (skips pre-commit hooks, not post-commit)
# Writes when its commit was done (ns since the epoch) to committed in its run folder.
echo "work" > "no-hooks-$COCODE_ISSUE_NUMBER.txt"
git add .
message="Done with #$COCODE_ISSUE_NUMBER

$COCODE_READY_MARKER"
case "${AGENT_HOOKS_OFF:-cli}" in
  cli) git -c core.hooksPath=/dev/null commit -q -m "$message" ;;
  env) GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0= \
         git commit -q -m "$message" ;;
  no-verify) git commit -q --no-verify -m "$message" ;;
esac
date +%s%N > "$JRUN_RUN_FOLDER/committed"
sleep 300
