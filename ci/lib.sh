# shellcheck shell=bash
# What ci/test, ci/compat and ci/package share (sourced, not run): where the cache
# kept outside the checkout lies, each stage's time against its budget (ci/budgets), and work
# put in the background at a low priority, where it takes only what the foreground leaves.

# The cache outside the checkout (docs/development.md, "CI's time"): the compilers' caches,
# keyed by what they compile (ccache hashes the preprocessed text, the flags and the compiler
# itself, never a time), and the fresh Debian roots. A clean clone reuses it; deleting it costs
# only time.
ci_cache=${COCODE_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cocode-ci}
# Where the stages' times of one script's run are gathered (ci_times_begin).
: "${COCODE_CI_TIMES:=}"

# ci_times_begin: this script gathers its stages' times for ci_verdict (a script it starts
# appends to the same file).
ci_times_begin() {
  mkdir -p build/ci
  COCODE_CI_TIMES=$PWD/build/ci/times-${0##*/}
  export COCODE_CI_TIMES
  : > "$COCODE_CI_TIMES"
}

# ci_ccache NAME: the builds that follow go through ccache, in the cache's folder NAME.
# Paths are rewritten relative to the checkout (CCACHE_BASEDIR) and the build folder is not
# hashed, so a clone in another folder hits too; the precompiled headers need the two
# sloppinesses ccache names for them, and the compiler is known by its contents.
ci_ccache() {
  command -v ccache >/dev/null || return 0
  export CCACHE_DIR=$ci_cache/ccache-$1 CCACHE_MAXSIZE=${COCODE_CCACHE_SIZE:-5G}
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK=content
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  mkdir -p "$CCACHE_DIR"
  ci_launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
}
# shellcheck disable=SC2034 # the flags cmake is configured with, for the scripts that source this
ci_launcher=()

# ci_budget NAME: the stage's share in seconds, from ci/budgets (empty when it has none).
ci_budget() {
  awk -v stage="$1" '$1 == stage { print $2 }' "$(dirname "${BASH_SOURCE[0]}")/budgets"
}
ci_margin() {
  awk '$1 == "margin" { sub("%", "", $2); print $2 }' "$(dirname "${BASH_SOURCE[0]}")/budgets"
}

# ci_stage_end NAME START: says how long the stage NAME took since START (a $SECONDS), against
# its budget, and records it for ci_verdict (one line appended under a lock).
ci_stage_end() {
  local name=$1 took=$((SECONDS - $2)) budget margin over=""
  budget=$(ci_budget "$name")
  margin=$(ci_margin)
  if [ -n "$budget" ] && [ "$took" -gt $((budget * (100 + margin) / 100)) ]; then
    over=" OVER BUDGET"
  fi
  echo "== ${name}: ${took} s (budget ${budget:-none} s + ${margin}%)${over}"
  if [ -n "$COCODE_CI_TIMES" ]; then
    flock "$COCODE_CI_TIMES" -c "printf '%s %s %s\n' '$name' '$took' '${budget:-0}' >> '$COCODE_CI_TIMES'"
  fi
}

# ci_verdict FILE: fails, naming each, when a stage recorded in FILE passed its budget by more
# than the margin, so that the change that made CI slower is seen the day it lands.
ci_verdict() {
  local margin
  margin=$(ci_margin)
  awk -v margin="$margin" '
    { printf "%-16s %6d s  budget %5d s\n", $1, $2, $3
      if ($3 > 0 && $2 * 100 > $3 * (100 + margin)) { over = over "  " $1 " took " $2 " s, over " $3 " s + " margin "%\n" } }
    END { if (over != "") { printf "ci: stages over their budget (ci/budgets):\n%s", over; exit 1 } }' "$1"
}

# ci_background VAR LEVEL LOG COMMAND...: starts COMMAND in a session of its own at nice LEVEL
# (and its session's scheduling group too: with the kernel's autogroups, a session's processes
# share one weight, so nice alone would rank it only among its own), writing to LOG, and sets
# VAR to its pid (its session's, which ci_stop ends; a child of this shell, which ci_wait
# waits for). What runs in the foreground at nice 0 — a build, the tests — takes the cores
# first; this takes what they leave idle.
ci_background() {
  local var=$1 level=$2 log=$3
  shift 3
  # shellcheck disable=SC2016 # expanded by the inner shell
  setsid -w bash -c 'echo "$0" > /proc/self/autogroup 2>/dev/null || true
    exec nice -n "$0" "$@"' "$level" "$@" > "$log" 2>&1 < /dev/null &
  printf -v "$var" '%s' "$!"
}

# ci_wait PID LOG NAME: waits for a background job, shows what it wrote, and fails as it failed.
ci_wait() {
  local rc=0
  wait "$1" || rc=$?
  echo "== ${3} (in the background):"
  cat "$2"
  [ "$rc" -eq 0 ] || { echo "ci: ${3} failed (exit ${rc})" >&2; return "$rc"; }
}

# ci_stop PID...: ends the sessions ci_background started (only those: by their pids).
ci_stop() {
  local pid
  for pid in "$@"; do
    if [ -n "$pid" ]; then kill -TERM -- "-$pid" 2>/dev/null || true; fi
  done
}
