#!/usr/bin/env bash
# gprox next to the peer libraries (Coal, FCL, parry3d, Warp, ipctk, Open3D) on the same scenes:
#   1. builds gprox-bench, gprox-peer and gprox-compare (release);
#   2. runs the gprox harness single-threaded on every scene of ../shared/peers/scenes
#      (checked against the reference results, parry3d-f64 side by side in the same process);
#   3. runs the peers' Python harness (../shared/peers/run.sh) with gprox as an external peer
#      (`--external gprox=<gprox-peer>`), in a writable copy under target/compare/peers
#      (venv, parry-bench builds and results stay there; ../shared is only read);
#   4. writes one combined table: target/compare/combined.md and combined.json.
#
# Usage: scripts/compare-peers.sh [--quick] [--scenes a,b] [--reuse-peers]
#   --quick        smoke run: the peers' --quick plan (3 frames per query), 11 gprox frames
#   --scenes a,b   only these scenes (both harnesses)
#   --reuse-peers  skip step 3 and use the results of the previous peers' run
# Environment: GPROX_PEERS_DIR (default ../shared/peers next to the checkout), CARGO_TARGET_DIR.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEERS_SRC=${GPROX_PEERS_DIR:-$ROOT/../shared/peers}
OUT=$ROOT/target/compare
WORK=$OUT/peers
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}

QUICK=0
SCENES=""
REUSE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --scenes) SCENES=${2:?--scenes needs a comma-separated list}; shift ;;
    --reuse-peers) REUSE=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "compare-peers: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ ! -f "$PEERS_SRC/run.sh" ] || [ ! -d "$PEERS_SRC/scenes" ]; then
  echo "compare-peers: the peers' harness was not found at $PEERS_SRC" >&2
  echo "  (expected ../shared/peers next to the checkout with run.sh and scenes/;" >&2
  echo "   set GPROX_PEERS_DIR to its location). Without it only the built-in scene runs:" >&2
  echo "   cargo run --release -p gprox-bench" >&2
  exit 2
fi
PEERS_SRC=$(cd "$PEERS_SRC" && pwd)

mkdir -p "$OUT"
echo "[compare] building gprox-bench, gprox-peer, gprox-compare (release)"
(cd "$ROOT" && cargo build --release -q -p gprox-bench --bins)
BIN=$TARGET/release

# 2. the gprox harness, one thread, against the shared reference results
# --timing first: a frame's time is its first call, as the peers' harness times every frame
# once (the median of repeated calls would find the caches warm from the call before).
H_ARGS=(--threads 1 --timing first --no-builtin --lbvh-triangles 0 --scenes "$PEERS_SRC/scenes"
        --results "$PEERS_SRC/results" --out "$OUT/gprox")
[ -n "$SCENES" ] && H_ARGS+=(--only "$SCENES")
[ "$QUICK" = 1 ] && H_ARGS+=(--frames 11 --repeats 1 --parry-frames 3)
echo "[compare] gprox harness: ${H_ARGS[*]}"
HARNESS_STATUS=0
"$BIN/gprox-bench" "${H_ARGS[@]}" > "$OUT/harness.log" || HARNESS_STATUS=$?
if [ "$HARNESS_STATUS" -ge 2 ]; then
  echo "compare-peers: the gprox harness failed (status $HARNESS_STATUS), see $OUT/harness.log" >&2
  exit "$HARNESS_STATUS"
fi

# 3. the peers, with gprox as an external peer, in a writable copy of ../shared/peers
if [ "$REUSE" = 0 ]; then
  mkdir -p "$WORK/parry-bench"
  for f in "$PEERS_SRC"/*.py "$PEERS_SRC"/*.md "$PEERS_SRC"/run.sh "$PEERS_SRC"/requirements.txt; do
    cp -pf "$f" "$WORK/"
  done
  rm -rf "$WORK/scenes"
  cp -pr "$PEERS_SRC/scenes" "$WORK/scenes"
  cp -pf "$PEERS_SRC/parry-bench/Cargo.toml" "$PEERS_SRC/parry-bench/Cargo.lock" "$WORK/parry-bench/"
  rm -rf "$WORK/parry-bench/src"
  cp -pr "$PEERS_SRC/parry-bench/src" "$WORK/parry-bench/src"
  # The copy sits inside this cargo workspace: give parry-bench its own.
  printf '\n# added by scripts/compare-peers.sh (the copy lives inside the gprox workspace)\n[workspace]\n' \
    >> "$WORK/parry-bench/Cargo.toml"
  chmod -R u+w "$WORK"
  P_ARGS=(--external "gprox=$BIN/gprox-peer")
  [ "$QUICK" = 1 ] && P_ARGS+=(--quick)
  [ -n "$SCENES" ] && P_ARGS+=(--scenes ${SCENES//,/ })
  echo "[compare] peers: run.sh ${P_ARGS[*]} (log: $OUT/peers.log)"
  # run.sh builds parry-bench with its own target dirs: do not pass ours on.
  (cd "$WORK" && env -u CARGO_TARGET_DIR ./run.sh "${P_ARGS[@]}") 2>&1 | tee "$OUT/peers.log"
fi

# 4. the combined table
"$BIN/gprox-compare" --report "$OUT/gprox/report.json" --results "$WORK/results" --out "$OUT" \
  --gprox-peer gprox > /dev/null
echo "[compare] wrote $OUT/combined.md and $OUT/combined.json"
cat "$OUT/combined.md"
if [ "$HARNESS_STATUS" != 0 ]; then
  echo "compare-peers: FAILED: gprox disagrees with the reference results (see $OUT/gprox/report.md)" >&2
  exit 1
fi
