#!/usr/bin/env bash
# Runs libFuzzer targets built in a TROUPE_FUZZ build directory (what `make fuzz` calls).
#   run_fuzzers.sh run   <build-dir> <seconds> <parallel> <decoder>...
#   run_fuzzers.sh merge <build-dir> <decoder>...
# run: each target fuzzes for <seconds> starting from tests/fuzz/corpus/<decoder> and
#   tests/fuzz/regressions/<decoder>; new inputs go to <build-dir>/fuzz-corpus/<decoder>, crashes
#   to <build-dir>/fuzz-artifacts/<decoder>/, the log to <build-dir>/fuzz-logs/<decoder>.log.
#   <parallel> targets run at once, at nice 19 (FUZZ_NICE overrides); FUZZ_FLAGS adds libFuzzer
#   flags (e.g. "-fork=1 -ignore_crashes=1" to keep going after a crash). Exits 1 when any
#   target found something, naming it.
# merge: minimises tests/fuzz/corpus/<decoder> together with what the runs found (-merge=1),
#   replacing the committed corpus with the smaller set that keeps all coverage.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mode=$1 build=$2
shift 2

run_one() {  # <build> <seconds> <decoder>
  local build=$1 seconds=$2 d=$3
  local work="$build/fuzz-corpus/$d" artifacts="$build/fuzz-artifacts/$d" log="$build/fuzz-logs/$d.log"
  mkdir -p "$work" "$artifacts" "$build/fuzz-logs" "$here/regressions/$d"
  local rc=0
  touch "$log.start"
  nice -n "${FUZZ_NICE:-19}" "$build/bin/fuzz_$d" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" ${FUZZ_FLAGS:-} \
    "$work" "$here/corpus/$d" "$here/regressions/$d" >"$log" 2>&1 || rc=$?
  local execs cov
  # Executions: the final stats, or (fork mode, FUZZ_FLAGS=-fork=N) the last status line's count.
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' ||
    grep -Eo '^#[0-9]+' "$log" | tail -1 | tr -d '#' || echo "?")
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+(/[0-9]+[a-zA-Z]*)?' "$log" | tail -1 || true)
  # Fork mode with -ignore_crashes/-ignore_ooms exits 0 after findings: count the artifacts.
  local found
  found=$(find "$artifacts" -type f -newer "$log.start" | wc -l)
  if [ $rc -eq 0 ] && [ "$found" -eq 0 ]; then
    echo "fuzz_$d: ${seconds}s, $execs executions, $cov, no findings"
  else
    echo "fuzz_$d: FINDINGS (exit $rc, $found new artifacts) after $execs executions; see $log and $artifacts/"
    return 1
  fi
}
export -f run_one
export here

case "$mode" in
  run)
    seconds=$1 parallel=$2
    shift 2
    printf '%s\n' "$@" | xargs -P "$parallel" -I{} bash -c 'run_one "$0" "$1" "$2"' "$build" "$seconds" {}
    ;;
  merge)
    for d in "$@"; do
      next="$build/fuzz-merged/$d"
      rm -rf "$next" && mkdir -p "$next" "$build/fuzz-corpus/$d"
      nice -n "${FUZZ_NICE:-19}" "$build/bin/fuzz_$d" -merge=1 -timeout=10 -rss_limit_mb=2048 "$next" "$here/corpus/$d" \
        "$build/fuzz-corpus/$d" >"$build/fuzz-logs/$d.merge.log" 2>&1
      rm -rf "$here/corpus/$d" && cp -r "$next" "$here/corpus/$d"
      echo "fuzz_$d: corpus $(ls "$here/corpus/$d" | wc -l) files, $(du -s --apparent-size -B1 "$here/corpus/$d" | cut -f1) bytes"
    done
    ;;
  *)
    echo "usage: $0 run <build> <seconds> <parallel> <decoder>... | merge <build> <decoder>..." >&2
    exit 2
    ;;
esac
