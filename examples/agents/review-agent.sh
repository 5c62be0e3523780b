#!/bin/sh
# A reference agent for rounds on the pull request (docs/review.md). Round 1 writes its work
# and, with it, a flaw (src/flaw.txt). A later round reads the feedback from
# $COCODE_FEEDBACK_FILE and does what its lines say, quoted or not: "remove PATH" removes a
# file (when it is still there), "add PATH" adds one. Every round ends with a commit carrying
# the ready marker. What it was told is kept as feedback-seen.md in its run folder.
set -eu
cd "$COCODE_REPO_PATH"
round=${COCODE_ROUND:-1}
if [ "$round" = 1 ]; then
  mkdir -p src
  echo "the work" > src/work.txt
  echo "a flaw" > src/flaw.txt
  git add src
  git commit -q -m "round 1: the work

$COCODE_READY_MARKER"
  echo "Round 1: wrote src/work.txt, and src/flaw.txt with it." > "$JRUN_RUN_FOLDER/output.md"
  exit 0
fi
cp "$COCODE_FEEDBACK_FILE" "$JRUN_RUN_FOLDER/feedback-seen.md"
# "give up": the round fails before it commits anything.
if grep -q "give up" "$COCODE_FEEDBACK_FILE"; then exit 1; fi
# Quoted words ("> remove PATH", as a review's are) count as well.
sed 's/^> //' "$COCODE_FEEDBACK_FILE" | while read -r verb path; do
  case "$verb" in
    remove) git rm -q --ignore-unmatch -- "$path" ;;
    add) mkdir -p "$(dirname "$path")"
         echo "added in round $round" > "$path"
         git add -- "$path" ;;
  esac
done
# "forget the marker": the round's commit does not carry it.
marker=$COCODE_READY_MARKER
grep -q "forget the marker" "$COCODE_FEEDBACK_FILE" && marker=""
git commit -q --allow-empty -m "round $round: as the feedback asked

$marker"
echo "Round $round: did what the feedback asked." > "$JRUN_RUN_FOLDER/output.md"
