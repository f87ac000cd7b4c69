#!/usr/bin/env python3
"""What the first job's calibration costs (docs/tuning.md), in a private
LOOM_TUNE_CACHE, N pairs each (first run with no cache, then a run that reads
the cache):

  - a 2-rank hello: shorter than LOOM_TUNE_MIN_JOB_MS (200 ms), it measures
    nothing, so its first run should cost what later runs cost;
  - a 2-rank job that sleeps 250 ms between MPI_Init and MPI_Finalize: the
    first such job on a host measures, in its MPI_Finalize.

    bench/tune_cost.py [N]        (Loom from build/bin or $LOOM_PREFIX/bin)
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
bindir = os.path.join(os.environ["LOOM_PREFIX"], "bin") if os.environ.get("LOOM_PREFIX") \
    else os.path.join(root, "build", "bin")
tmp = tempfile.mkdtemp(prefix="loom-tune-cost-")
SLEEPER = r"""
#include <mpi.h>
#include <unistd.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  usleep(250000);
  MPI_Finalize();
  return 0;
}
"""
try:
    hello = os.path.join(tmp, "hello")
    subprocess.run([os.path.join(bindir, "loomcc"), "-O2", "-I", os.path.join(root, "bench", "src"),
                    os.path.join(root, "bench", "src", "hello.c"), "-o", hello], check=True)
    src = os.path.join(tmp, "sleeper.c")
    with open(src, "w") as f:
        f.write(SLEEPER)
    sleeper = os.path.join(tmp, "sleeper")
    subprocess.run([os.path.join(bindir, "loomcc"), "-O2", src, "-o", sleeper], check=True)
    cache = os.path.join(tmp, "cache")
    env = dict(os.environ, LOOM_TUNE_CACHE=cache, LOOM_TUNE="auto")
    env.pop("LOOM_TUNE_MIN_JOB_MS", None)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    for name, prog in (("hello", hello), ("250 ms job", sleeper)):
        first, later, cost = [], [], []
        for _ in range(n):
            shutil.rmtree(cache, ignore_errors=True)
            for times in (first, later):
                t = time.perf_counter()
                subprocess.run([os.path.join(bindir, "loomrun"), "-n", "2", prog],
                               stdout=subprocess.DEVNULL, env=env, check=True)
                times.append((time.perf_counter() - t) * 1e3)
            if os.path.isdir(cache):
                for fn in os.listdir(cache):
                    for line in open(os.path.join(cache, fn)):
                        if line.startswith("cost_us"):
                            cost.append(float(line.split("=")[1]))
        f, l = statistics.median(first), statistics.median(later)
        print("%s: first run %.2f ms (%.2f-%.2f), later %.2f ms (%.2f-%.2f): %+.1f%%; %s" %
              (name, f, min(first), max(first), l, min(later), max(later), 100 * (f - l) / l,
               "calibrated in %.0f us (median of cost_us, %d of %d first runs)" %
               (statistics.median(cost), len(cost), n) if cost else "no calibration"))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
