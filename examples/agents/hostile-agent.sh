#!/bin/sh
# An agent that tries to escape or to change how it is judged instead of doing the work,
# chosen by $AGENT_TRICK. Every trick commits a file outside the allowed paths with the
# marker, so a PASS is always false. Processes it leaves behind carry "daemon-of-<run id>" on
# their command line, so that a test can look for them from outside any sandbox.
#   rewrite-config  loosens the main repository's .cocode/config.json (through $JRUN_RUNS_DIR/..)
#   amend-base      rewrites the base commit under its own work
#   move-main       force-moves main and origin/main onto a history of its own (in the git it
#                   can write: its own repository, not the main one)
#   force-push      force-pushes a history of its own to origin's main
#   ignore-term     ignores SIGTERM and never exits
#   double-fork     leaves a daemon that ignores SIGTERM and SIGHUP, in a session of its own
#   env-daemon      leaves a daemon started with `env -i` (no JRUN_ID), ignoring SIGTERM
#   fork-storm      leaves 128 processes ignoring SIGTERM, then exits
#   flood           writes ${AGENT_OUTPUT_MB:-64} MiB to stdout after its commit
#   closed-stdout   closes its stdout and stderr before anything else
#   delete-git      deletes its worktree's .git file after its commit
set -e
mark="daemon-of-$JRUN_ID"
main_repo=$(cd "$JRUN_RUNS_DIR/../.." && pwd)
linger() { trap '' TERM HUP; exec sh -c "trap '' TERM HUP; while :; do sleep 1; done # $mark"; }
case "$AGENT_TRICK" in
  rewrite-config)
    printf '{"agents": {"hostile": {"command": "x"}}, "check": {"allowed_paths": ["**"]}}\n' \
      > "$main_repo/.cocode/config.json" || true ;;
  amend-base)
    git commit -q --amend -m "base, rewritten" --allow-empty ;;
  closed-stdout)
    exec >&- 2>&- ;;
esac
mkdir -p secrets && echo "mine now" > secrets/forbidden.txt
git add secrets/forbidden.txt
git commit -q -m "Done

$COCODE_READY_MARKER"
orphan() { git commit-tree -m "a history of my own" "$(git rev-parse 'HEAD^{tree}')"; }
case "$AGENT_TRICK" in
  move-main)
    commit=$(orphan)
    git update-ref refs/heads/main "$commit" || true
    git update-ref refs/remotes/origin/main "$commit" || true ;;
  force-push)
    git push -q -f origin "$(orphan):refs/heads/main" 2> /dev/null || true ;;
  ignore-term)
    linger ;;
  double-fork)
    (setsid sh -c "$(command -v sh) -c \"trap '' TERM HUP; while :; do sleep 1; done # $mark\" &" \
      < /dev/null > /dev/null 2>&1 &) ;;
  env-daemon)
    setsid env -i sh -c "trap '' TERM HUP; while :; do sleep 1; done # $mark" \
      < /dev/null > /dev/null 2>&1 & ;;
  fork-storm)
    i=0
    while [ $i -lt 128 ]; do
      sh -c "trap '' TERM HUP; while :; do sleep 1; done # $mark" < /dev/null > /dev/null 2>&1 &
      i=$((i + 1))
    done ;;
  flood)
    yes "$(printf '%01023d' 0)" | head -c $((${AGENT_OUTPUT_MB:-64} * 1024 * 1024)) ;;
  delete-git)
    rm -f .git ;;
esac
exit 0
