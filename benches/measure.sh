# Sourced by the benchmarks: `measure CMD...` prints the wall seconds and the peak RSS
# (KiB, of the command and its children) of one run of CMD, output discarded; a failed
# command stops the benchmark.
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
dt = time.monotonic() - t
if r.returncode != 0:
    sys.exit(f"failed: {' '.join(sys.argv[1:])}")
print(f"{dt:.3f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
PY
}
