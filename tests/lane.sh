#!/usr/bin/env bash
# One lane of the suite (tests/conftest.py says what each holds), as `make test` (gate) and
# `make test-slow` (slow) run it after the venv:
#   the tests without a browser, on two workers, while the site builds and Chromium and axe-core
#   install; then lint (the gate) and the browser tests on two workers.
# At the end: each phase's time (phases overlap: the lane's time is the wall clock), the lane's
# ten slowest tests, the tests each directory collected, and one closing line. Exits non-zero
# when any part failed.
set -uo pipefail
lane=${1:?usage: tests/lane.sh gate|slow}
PY=${PY:-.venv/bin/python}
MAKE=${MAKE:-make}
out=.cache/lane-$lane
rm -rf "$out" && mkdir -p "$out"
export LAB_DURATIONS=$out/durations
: > "$LAB_DURATIONS"
pytest=("$PY" -m pytest -q -p no:cacheprovider --lane "$lane" -n 2)
now() { date +%s%N; }
# CPU (ms) the whole machine was busy (/proc/stat: user, nice, system, irq, softirq, steal), so a
# phase shows what it used of the cores beside its wall time (near 2 cores: bound by CPU; well
# under: by waiting). The machine's, not the phase's: Chromium's processes are not the shell's
# children to count, and phases overlap (build and unit), so it is honest only with nothing else
# running. Read without a subshell.
TICKS=$(getconf CLK_TCK)
cpu() { local name u n s idle io irq soft steal rest; read -r name u n s idle io irq soft steal rest < /proc/stat
  CPU=$(( (u + n + s + irq + soft + steal) * 1000 / TICKS )); }
phase() { echo "$1 $(( ($(now) - $2) / 1000000 )) ${3:-}" >> "$out/times"; }

start=$(now)
echo "$lane lane: tests/sim tests/ui tests/site_build tests/js run while the site builds; their output follows the browser tests'"
( t=$(now); cpu; c=$CPU; "${pytest[@]}" --dist worksteal tests/sim tests/ui tests/site_build tests/js > "$out/unit.log" 2>&1
  rc=$?; cpu; phase unit "$t" $(( CPU - c )); exit $rc ) & unit=$!

t=$(now); cpu; c=$CPU
$MAKE --no-print-directory -j2 --output-sync=target build browser axe; rc=$?
cpu; phase "build+browser" "$t" $(( CPU - c ))
# The browser tests wait for the unit tests: on two cores they would share them (and the unit
# tests' one long page build per page would hold the second e2e worker's core).
wait $unit; urc=$?
if [ $rc = 0 ] && [ "$lane" = gate ]; then
  t=$(now); "$PY" -m ruff check .; rc=$?; phase lint "$t"
fi
if [ $rc = 0 ]; then
  t=$(now); cpu; c=$CPU
  "${pytest[@]}" --dist worksteal tests/e2e 2>&1 | tee "$out/e2e.log"; rc=${PIPESTATUS[0]}
  cpu; phase e2e "$t" $(( CPU - c ))
fi
phase total "$start"

echo "----- $lane lane: tests without a browser -----"; cat "$out/unit.log"
echo "----- $lane lane -----"
echo "phase times (s; the machine's busy CPU-s and cores meanwhile):"
awk '{ printf "  %-14s %6.1f", $1, $2 / 1000; if ($3 != "") printf "   CPU %6.1f  cores %.2f", $3 / 1000, $3 / ($2 > 0 ? $2 : 1); print "" }' "$out/times"
echo "ten slowest tests (s, setup + call + teardown):"
sort -rn "$LAB_DURATIONS" | head -10 | awk '{ printf "  %6.1f  %s\n", $1, $2 }'
grep -h "^tests collected per directory" "$out/unit.log" "$out/e2e.log" 2>/dev/null
cat "$out/unit.log" "$out/e2e.log" 2>/dev/null | awk '
  /^[0-9]+ (passed|failed)|^=+ .*(passed|failed)/ { for (i = 1; i < NF; i++) {
    if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^error/) e += $i } }
  END { printf "tests: %d passed, %d failed\n", p, f + e }'
[ $rc = 0 ] && [ $urc = 0 ]
