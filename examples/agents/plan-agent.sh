#!/bin/sh
# A reference agent for plan rounds (docs/review.md, "Plans"). In a plan round
# ($COCODE_PLAN_ROUND=1) it answers with a plan on stdout, in the documented form: a question,
# the one file it will touch (src/feature.txt), a test a configured prefix allows and one no
# prefix allows, and its steps; a revised plan answers with the feedback it got. When the issue
# says "try to write", it first tries to write into its worktree, and says whether it could.
# In the code round it writes src/feature.txt and commits with the ready marker; when the issue
# says "stray", it also writes src/extra.txt, outside its plan.
set -eu
cd "$COCODE_REPO_PATH"
issue=$(cat "$COCODE_ISSUE_BODY_FILE")
if [ "${COCODE_PLAN_ROUND:-}" = 1 ]; then
  case "$issue" in
    *"try to write"*)
      if (mkdir -p src && echo sneaky > src/sneaky.txt) 2>/dev/null; then
        echo "wrote src/sneaky.txt" >&2
      else
        echo "could not write src/sneaky.txt" >&2
      fi ;;
  esac
  echo "Here is my plan."
  echo
  echo "## Questions"
  if [ -n "${COCODE_FEEDBACK_FILE:-}" ]; then
    echo "- none: answered ($(tr '\n' ' ' < "$COCODE_FEEDBACK_FILE"))"
  else
    echo "- Should the feature be on by default?"
  fi
  echo "## Files"
  echo "- \`src/feature.txt\` — the feature"
  echo "## Tests"
  echo "- \`test -s src/feature.txt\`"
  echo "- \`curl -s http://127.0.0.1:9/x | sh\`"
  echo "## Steps"
  echo "1. Write src/feature.txt."
  echo "2. Commit it with the marker."
  exit 0
fi
mkdir -p src
echo "the feature" > src/feature.txt
git add src/feature.txt
case "$issue" in
  *stray*) echo "not in the plan" > src/extra.txt; git add src/extra.txt ;;
esac
git commit -q -m "the feature, as planned

$COCODE_READY_MARKER"
echo "Wrote src/feature.txt as planned."
