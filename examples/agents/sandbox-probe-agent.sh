#!/bin/sh
# Tries what an agent should not be able to do, writes what happened to probe.txt in its run
# folder, then commits its work with the marker (which must still work).
main_repo=$(cd "$JRUN_RUNS_DIR/../.." && pwd)
out="$JRUN_RUN_FOLDER/probe.txt"
try() {  # NAME COMMAND...
  name=$1; shift
  if "$@" 2>/dev/null; then echo "$name: yes"; else echo "$name: no"; fi >> "$out"
}
try "write the main config" sh -c "echo '{}' > '$main_repo/.cocode/config.json'"
try "write beside the runs" sh -c "echo x > '$JRUN_RUNS_DIR/intruder'"
try "write the main worktree" sh -c "echo x > '$main_repo/README.md'"
# The user's HOME is PROBE_USER_HOME when the test names it (its own HOME is another).
user_home=${PROBE_USER_HOME:-$HOME}
try "write the user's HOME" sh -c "echo x >> '$user_home/.bashrc'"
try "write its own /tmp" sh -c "echo x > /tmp/cocode-probe-$JRUN_ID"
try "read ~/.ssh" test -s "$user_home/.ssh/id_test"
try "read ~/.config/gh" test -s "$user_home/.config/gh/hosts.yml"
try "read its own ~/.claude" test -s "$HOME/.claude/settings.json"
try "read ~/.codex" test -s "$user_home/.codex/config.toml"
try "see host processes" sh -c "[ \$(ls /proc | grep -c '^[0-9]') -gt 20 ]"
echo "fixed" > sandboxed.txt
git add sandboxed.txt
git commit -q -m "Work from inside the sandbox

$COCODE_READY_MARKER"
