#!/usr/bin/env bash
# Build a self-contained bundle for a GPU machine that has no Rust toolchain and no network.
#
#   scripts/gpu-bundle.sh [--with-scenes DIR]
#
# Builds, in release and with device code (the pinned nvcc of scripts/install-cuda-toolkit.sh,
# GPROX_CUDA_STRICT=1: no nvcc or a register spill fails the build):
#   - the kernel test binaries          cargo test -p gprox-cuda --release --no-run
#   - the facade test binaries          cargo test -p gprox --release --all-features --no-run
#                                         --test facade --test device_ops --test device_ops_images
#                                         --test queries --test volume_queries
#   - the benchmark harness             cargo build --release -p gprox-bench --bin gprox-bench
#   - three bench binaries (extras/)    --bin geometry_images --bin penetration-field --bin image-depths
#   - the CLI                           cargo build --release --bin gprox
# strips them and packs them into target/gpu-bundle/payload.tar.gz (gzip: the stripped binaries
# are ~33 MB raw, ~14 MB packed, which leaves room for scenes), next to run.sh and BUILD-INFO.
# The bundle must stay under 56 MB (checked; the size is printed): a device call carries at most
# 64 MiB, the working tree included. Test binaries built from
# sources git does not track (scratch files) are left out, with a note.
# --with-scenes DIR also packs the scene folder DIR as scenes/ (and DIR/../results, the harness's
# reference answers, as results/ when it exists). All of ../shared/peers/scenes is ~11 MB packed.
#
# On the GPU machine (copy target/gpu-bundle/ there):   gpu-bundle/run.sh [SCENES_DIR]
#   unpacks into a temporary folder, prints nvidia-smi, runs every test binary with
#   GPROX_TEST_DEVICE=cuda, the harness (`gprox-bench --threads 1,$(nproc) --out $OUT/bench`;
#   scenes: SCENES_DIR, else the packed scenes/, else the built-in scene only), the CLI
#   (`gprox bench builtin`, and `gprox collide --backend cuda` against `--backend cpu` on a small
#   torus), and writes summary.txt: PASS/FAIL per step. Logs and reports go to $OUT when set,
#   else ./out. Knobs: GPROX_STEPS (default "tests bench cli"), GPROX_TESTS (only the test
#   binaries whose name contains one of these words), GPROX_STEP_TIMEOUT (seconds per
#   step, default 300), GPROX_BENCH_ARGS (extra harness options, e.g. "--frames 20"). Exit status:
#   0 when every step passed, 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

scenes=""
while [ $# -gt 0 ]; do
  case "$1" in
    --with-scenes)
      [ $# -ge 2 ] || { echo "--with-scenes needs a folder" >&2; exit 2; }
      scenes="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$scenes" ] && [ ! -d "$scenes" ]; then
  echo "--with-scenes: $scenes is not a folder" >&2; exit 2
fi

max_bytes=56000000
bundle="$root/target/gpu-bundle"
stage="$root/target/gpu-bundle.stage"
export CARGO_TERM_COLOR=never
NVCC="$(scripts/install-cuda-toolkit.sh)"
export NVCC
export GPROX_CUDA_STRICT=1
echo "nvcc: $NVCC" >&2
"$NVCC" --version | awk 'END { print }' >&2

msgs="$(mktemp)"
clean_stage() {
  if [ -d "$stage" ]; then chmod -R u+w "$stage" && rm -rf "$stage"; fi
}
trap 'rm -f "$msgs"; clean_stage' EXIT
# Compiler messages go to $msgs (one JSON object a line); build progress stays on stderr.
build() { echo "+ cargo $*" >&2; cargo "$@" --message-format=json-render-diagnostics >>"$msgs"; }
build test -p gprox-cuda --release --no-run
build test -p gprox --release --all-features --no-run --test facade --test device_ops --test device_ops_images --test queries --test volume_queries
build build --release -p gprox-bench --bin gprox-bench --bin geometry_images --bin penetration-field --bin image-depths
build build --release -p gprox-cli --bin gprox

clean_stage
rm -rf "$bundle"
mkdir -p "$bundle" "$stage/tests" "$stage/extras"
# name<TAB>path of every test executable (profile.test) and of the two binaries.
python3 - "$msgs" "$root" >"$stage/.artifacts" <<'PY'
import json, os, subprocess, sys
msgs, root = sys.argv[1], sys.argv[2]
try:
    out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                         capture_output=True).stdout.decode()
    tracked = {os.path.realpath(os.path.join(root, p)) for p in out.split("\0") if p}
except (OSError, subprocess.CalledProcessError):
    tracked = None  # not a git checkout: take everything
seen = set()
for line in open(msgs):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    t = m["target"]
    # package_id: "path+file:///.../kernels#gprox-cuda@0.1.0", "path+file:///.../gprox#0.1.0"
    # (name = folder name) or, from older cargo, "gprox-cuda 0.1.0 (path+file:///...)".
    pid = m["package_id"]
    if "#" in pid:
        url, frag = pid.split("#", 1)
        named = "@" in frag or not frag[:1].isdigit()
        pkg = frag.split("@")[0] if named else url.rstrip("/").split("/")[-1]
    else:
        pkg = pid.split(" ")[0]
    if m["profile"]["test"]:
        kind = "lib" if "lib" in t["kind"] else t["name"]
        name = "tests/%s.%s" % (pkg, kind)
        if tracked is not None and os.path.realpath(t["src_path"]) not in tracked:
            print("note: leaving out %s: %s is not tracked by git" % (name, t["src_path"]),
                  file=sys.stderr)
            continue
    elif t["name"] in ("gprox", "gprox-bench") and "bin" in t["kind"]:
        name = t["name"]
    elif t["name"] in ("geometry_images", "penetration-field", "image-depths") and "bin" in t["kind"]:
        name = "extras/" + t["name"]
    else:
        continue
    if name not in seen:
        seen.add(name)
        print("%s\t%s" % (name, m["executable"]))
PY
ntests=0
while IFS="$(printf '\t')" read -r name path; do
  cp "$path" "$stage/$name"
  strip "$stage/$name"
  case "$name" in tests/*) ntests=$((ntests + 1)) ;; esac
done <"$stage/.artifacts"
rm -f "$stage/.artifacts"
[ -x "$stage/gprox-bench" ] || { echo "gprox-bench was not built" >&2; exit 1; }
[ -x "$stage/gprox" ] || { echo "the gprox CLI was not built" >&2; exit 1; }
[ "$ntests" -ge 3 ] || { echo "only $ntests test binaries found in cargo's output" >&2; exit 1; }

# A small torus (R 1, r 0.3, 24 x 12 quads) for the CLI's CPU-vs-CUDA check.
python3 - >"$stage/torus.obj" <<'PY'
import math
n, m, R, r = 24, 12, 1.0, 0.3
for i in range(n):
    u = 2 * math.pi * i / n
    for j in range(m):
        v = 2 * math.pi * j / m
        print("v %.6f %.6f %.6f" % ((R + r * math.cos(v)) * math.cos(u),
                                    (R + r * math.cos(v)) * math.sin(u), r * math.sin(v)))
at = lambda i, j: (i % n) * m + (j % m) + 1
for i in range(n):
    for j in range(m):
        print("f %d %d %d" % (at(i, j), at(i + 1, j), at(i + 1, j + 1)))
        print("f %d %d %d" % (at(i, j), at(i + 1, j + 1), at(i, j + 1)))
PY

if [ -n "$scenes" ]; then
  cp -RL "$scenes" "$stage/scenes"
  if [ -d "$scenes/../results" ]; then cp -RL "$scenes/../results" "$stage/results"; fi
fi
chmod -R u+w "$stage"
raw="$(du -sb "$stage" | awk '{ print $1 }')"
(cd "$stage" && find . -type f | LC_ALL=C sort | xargs ls -l) >"$bundle/CONTENTS"
tar -czf "$bundle/payload.tar.gz" -C "$stage" .

{
  echo "gprox GPU bundle"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "nvcc: $("$NVCC" --version | awk 'END { print }')"
  echo "archs: ${GPROX_CUDA_ARCHS:-sm_80,sm_90,compute_75 (default)}"
  echo "test binaries: $ntests"
  echo "scenes: ${scenes:-none (built-in scene only, unless run.sh is given a folder)}"
} >"$bundle/BUILD-INFO"

cat >"$bundle/run.sh" <<'RUN'
#!/usr/bin/env bash
# Run the gprox GPU checks from this bundle (no Rust toolchain, no network needed).
#
#   run.sh [SCENES_DIR]
#
# Unpacks payload.tar.gz into a temporary folder, then runs these steps, each under a time limit
# ($GPROX_STEP_TIMEOUT seconds, default 300), all of them even when one fails:
#   nvidia-smi (when present);
#   tests   every test binary with GPROX_TEST_DEVICE=cuda (log OUT/tests-<name>.log);
#   bench   gprox-bench --threads 1,$(nproc) --out OUT/bench (scenes: SCENES_DIR, else the packed
#           scenes/, else the built-in scene only; extra options in $GPROX_BENCH_ARGS, e.g.
#           "--frames 20"); fails when its report has no cuda:0 runs;
#   cli     gprox bench builtin, and gprox collide --backend cuda, which must equal --backend cpu.
# GPROX_STEPS picks steps (default "tests bench cli"), GPROX_TESTS test binaries (words, any
# of which a binary's name must contain; default all). OUT is $OUT when set, else ./out;
# OUT/summary.txt says PASS/FAIL per step (written as the steps finish).
# Exit status 0 when every step passed, 1 otherwise.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-$PWD/out}"
steps=" ${GPROX_STEPS:-tests bench cli} "
limit="${GPROX_STEP_TIMEOUT:-300}"
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
failed=0
record() { # STATUS STEP DETAIL (STATUS: PASS, FAIL, or INFO, which fails nothing)
  printf '%-4s  %-32s %s\n' "$1" "$2" "$3" | tee -a "$summary"
  case "$1" in PASS|INFO) ;; *) failed=1 ;; esac
}
banner() { printf '\n=== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }
# Runs "$@" under the step time limit, output to the file $log; sets rc and secs.
timed() {
  local t0
  t0=$(date +%s)
  if command -v timeout >/dev/null 2>&1; then
    timeout -k 10 "$limit" "$@" >"$log" 2>&1
  else
    "$@" >"$log" 2>&1
  fi
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  late=""
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    late="timed out after ${limit} s"
    echo "run.sh: $late" >>"$log"
  fi
}
finish() {
  banner "summary ($summary)"
  cat "$summary"
  if [ "$failed" -ne 0 ]; then
    echo "run.sh: SOME STEPS FAILED" >&2
    exit 1
  fi
  echo "run.sh: all steps passed"
  exit 0
}

banner "bundle"
cat "$here/BUILD-INFO" 2>/dev/null || true
work="$(mktemp -d "${TMPDIR:-/tmp}/gprox-bundle.XXXXXX")" || { record FAIL "unpack" "mktemp"; finish; }
trap 'rm -rf "$work"' EXIT
if tar -xzf "$here/payload.tar.gz" -C "$work"; then
  record INFO "unpack" "$work"
else
  record FAIL "unpack" "tar -xzf $here/payload.tar.gz failed"
  finish
fi

banner "nvidia-smi"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi 2>&1 | tee "$out/nvidia-smi.log"
  gpu="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | awk 'NR == 1')"
  record INFO "nvidia-smi" "${gpu:-no GPU listed}"
else
  echo "nvidia-smi not found (no NVIDIA driver tools on PATH)"
  record INFO "nvidia-smi" "not found"
fi

case "$steps" in *" tests "*)
  for bin in "$work"/tests/*; do
    name="$(basename "$bin")"
    if [ -n "${GPROX_TESTS:-}" ]; then
      wanted=0
      for w in $GPROX_TESTS; do case "$name" in *"$w"*) wanted=1 ;; esac; done
      [ "$wanted" -eq 1 ] || continue
    fi
    log="$out/tests-$name.log"
    banner "tests $name (GPROX_TEST_DEVICE=cuda)"
    GPROX_TEST_DEVICE=cuda timed "$bin"
    result="$(awk '/^test result:/ { r = $0 } END { print r }' "$log")"
    echo "${result:-no test result line} (rc $rc, ${secs} s, log $log)"
    if [ "$rc" -eq 0 ]; then
      record PASS "tests $name" "${secs} s: ${result}"
    else
      # The failed tests, and each thread's first panic with its message.
      awk '/^test .*FAILED$|timed out/ { print; next }
           /panicked at/ && !seen[$2]++ { print; if ((getline line) > 0) print line }' "$log" |
        awk 'NR <= 40'
      record FAIL "tests $name" "rc $rc, ${secs} s: ${late:-${result:-no test result line}} (see $log)"
    fi
  done
  ;;
esac

case "$steps" in *" bench "*)
  banner "gprox-bench"
  if [ $# -ge 1 ]; then
    scene_dir="$1"
  elif [ -d "$work/scenes" ]; then
    scene_dir="$work/scenes"
  else
    # No folder: name one that does not exist, so the harness runs the built-in scene only
    # (rather than a path compiled in on the build machine).
    scene_dir="$work/no-scenes"
  fi
  # shellcheck disable=SC2086  # GPROX_BENCH_ARGS is a list of options
  set -- "$work/gprox-bench" --threads "1,$(nproc)" --out "$out/bench" --scenes "$scene_dir" \
    ${GPROX_BENCH_ARGS:-}
  echo "+ $*"
  log="$out/bench.log"
  timed "$@"
  awk '!/\[[=> ]*\]/' "$log" | tail -n 40
  if [ "$rc" -ne 0 ]; then
    record FAIL "gprox-bench" "rc $rc, ${secs} s${late:+, $late} (see $log)"
  elif ! grep -s '"cuda:0"' "$out/bench/report.json" >/dev/null; then
    record FAIL "gprox-bench" "${secs} s, but no cuda:0 runs in $out/bench/report.json"
  else
    record PASS "gprox-bench" "${secs} s, report in $out/bench/"
  fi
  ;;
esac

case "$steps" in *" cli "*)
  banner "gprox bench builtin (CLI, CPU)"
  log="$out/cli-bench.log"
  timed "$work/gprox" bench builtin
  awk 'NR <= 12' "$log"
  if [ "$rc" -eq 0 ]; then
    record PASS "gprox bench builtin" "${secs} s (see $log)"
  else
    record FAIL "gprox bench builtin" "rc $rc (see $log)"
  fi

  banner "gprox collide --backend cuda vs cpu (CLI)"
  pairs() { sed -n 's/.*"pairs":\(\[[][0-9,]*\]\).*/\1/p' "$1"; }
  torus="$work/torus.obj"
  pose="0.35,0.05,0,90,0,0"
  log="$out/cli-collide-cpu.json"
  timed "$work/gprox" collide "$torus" "$torus" --pose-b "$pose" --backend cpu --json
  rc_cpu=$rc
  log="$out/cli-collide-cuda.json"
  timed "$work/gprox" collide "$torus" "$torus" --pose-b "$pose" --backend cuda --json
  rc_cuda=$rc
  awk '!/^\{/' "$out/cli-collide-cpu.json" "$out/cli-collide-cuda.json"
  count="$(sed -n 's/.*"count":\([0-9]*\).*/\1/p' "$out/cli-collide-cpu.json")"
  if [ "$rc_cpu" -ne 0 ] || [ "$rc_cuda" -ne 0 ]; then
    record FAIL "gprox collide cuda vs cpu" "rc cpu $rc_cpu, cuda $rc_cuda (see $out/cli-collide-*.json)"
  elif [ -z "$count" ] || [ "$count" -eq 0 ]; then
    record FAIL "gprox collide cuda vs cpu" "no pairs on the CPU: the check checks nothing"
  elif [ "$(pairs "$out/cli-collide-cpu.json")" != "$(pairs "$out/cli-collide-cuda.json")" ]; then
    record FAIL "gprox collide cuda vs cpu" "pair lists differ (see $out/cli-collide-*.json)"
  else
    record PASS "gprox collide cuda vs cpu" "$count pairs, equal"
  fi
  ;;
esac

finish
RUN
chmod +x "$bundle/run.sh"
bash -n "$bundle/run.sh"

size="$(du -sb "$bundle" | awk '{ print $1 }')"
echo "bundle: $bundle ($ntests test binaries; $((raw / 1000000)) MB unpacked)"
ls -l "$bundle"
cat "$bundle/CONTENTS"
echo "bundle size: $size bytes ($((size / 1000000)) MB; limit $((max_bytes / 1000000)) MB)"
if [ "$size" -gt "$max_bytes" ]; then
  echo "bundle larger than $((max_bytes / 1000000)) MB: leave scenes out or pass fewer" >&2
  exit 1
fi
