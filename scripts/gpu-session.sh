#!/usr/bin/env bash
# One device session's checks from a prebuilt bundle (scripts/gpu-bundle.sh --with-scenes ...),
# sized for a lent GPU machine with a short time budget: the bundle's tests and CLI steps first,
# then the harness one scene at a time (each under its own time limit, so a slow scene costs
# only itself and every finished scene's report survives), then everything packed for the trip
# back, after the bundle's bench binaries (extras/: geometry images and the image-space sweep on
# the device):
#   $OUT/summary.txt   run.sh's PASS/FAIL per step, then one line per harness scene and extra
#   $OUT/reports.md    the harness reports (report.md) of every scene, one after another
#   $OUT/out.tgz       every log, report.json and plot
#
#   scripts/gpu-session.sh [SCENE ...]     (default: the built-in scenes and the shared ones;
#                                           `none`: no harness scene)
# Knobs: GPROX_TEST_BUDGET (seconds for tests + cli, default 300), GPROX_SCENE_LIMIT (seconds per
# scene, default 45), GPROX_EXTRA_LIMIT (seconds per extra, default 90), GPROX_BENCH_ARGS (extra
# harness options), GPROX_TESTS (only the test binaries whose names contain one of these words),
# GPROX_EXTRAS (only the extras whose names contain one of these words).
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$here/target/gpu-bundle"
out="${OUT:-$PWD/out}"
work="$(mktemp -d)"
o="$work/out"
mkdir -p "$o/bench" "$work/p" "$out"
# summary.txt and reports.md are written to $OUT as the steps finish, so a session cut short
# still brings back what it did.
: >"$out/summary.txt"
: >"$out/reports.md"
note() { echo "$*"; echo "$*" >>"$o/summary.txt"; echo "$*" >>"$out/summary.txt"; }
report() { cat >>"$out/reports.md"; }
scenes=("$@")
[ ${#scenes[@]} -gt 0 ] || scenes=(builtin-two-tori builtin-deforming-tori builtin-flag-balls
  two-tori-interlock nbody-spheres cloth-on-sphere bunny-pair-distance bumpy-pair-distance)
[ "${scenes[*]}" != none ] || scenes=()

OUT="$o" GPROX_STEP_TIMEOUT=90 GPROX_STEPS="tests cli" \
  timeout -k 10 "${GPROX_TEST_BUDGET:-300}" "$bundle/run.sh" >"$o/run.log" 2>&1
rc=$?
cat "$o/summary.txt" >>"$out/summary.txt"
note "run.sh (tests, cli): rc $rc"

tar -xzf "$bundle/payload.tar.gz" -C "$work/p"
p="$work/p"
for s in "${scenes[@]}"; do
  t0=$(date +%s)
  # shellcheck disable=SC2086 # GPROX_BENCH_ARGS is a list of options
  timeout -k 5 "${GPROX_SCENE_LIMIT:-45}" "$p/gprox-bench" --scenes "$p/scenes" \
    --results "$p/results" --only "$s" --threads "1,$(nproc)" --parry-frames 0 \
    --lbvh-triangles 0 --out "$o/bench/$s" ${GPROX_BENCH_ARGS:-} >"$o/bench/$s.log" 2>&1
  rc=$?
  note "bench $s: rc $rc, $(( $(date +%s) - t0 )) s"
  if [ -f "$o/bench/$s/report.md" ]; then
    { echo; echo "# $s"; cat "$o/bench/$s/report.md"; } | report
  fi
done
# The bench binaries of the bundle's extras/ on the device: geometry images (#18) and the
# image-space tolerance sweep (#16), each under GPROX_EXTRA_LIMIT seconds.
extra() { # NAME ARGS...
  local name="$1" t0 w wanted=${GPROX_EXTRAS:+no}
  shift
  for w in ${GPROX_EXTRAS:-}; do [[ "$name" == *"$w"* ]] && wanted=yes; done
  [ "${wanted:-yes}" = yes ] || return 0
  [ -x "$p/extras/$name" ] || { note "extra $name: not in the bundle"; return; }
  t0=$(date +%s)
  (cd "$o" && timeout -k 5 "${GPROX_EXTRA_LIMIT:-90}" "$p/extras/$name" "$@") \
    >"$o/extra-$name.log" 2>&1
  note "extra $name $*: rc $?, $(( $(date +%s) - t0 )) s"
  { echo; echo "# $name $*"; echo '```'; cat "$o/extra-$name.log"; echo '```'; } | report
}
extra geometry_images 40 --cuda
extra penetration-field --backend cuda --repeats 3 --profile --out "$o/penetration-field"
# #16's device frame taken apart: classification alone on the device, and the host's share of a
# frame (localisation, tiles, reading the codes, contacts) on this host's CPU.
extra penetration-field --backend cuda --repeats 5 --scales 1 --no-depths --profile --out "$o/pf-classify"
extra image-depths --repeats 10 --scales 1

tar -czf "$out/out.tgz" -C "$o" .
