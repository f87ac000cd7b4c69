#!/usr/bin/env python3
"""What the first job's calibration costs (docs/tuning.md): times a 2-rank
hello job with no cache (it measures, in MPI_Finalize) and right after it
(it reads the cache), N pairs, in a private LOOM_TUNE_CACHE.

    bench/tune_cost.py [N]        (Loom from build/bin or $LOOM_PREFIX/bin)
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
bindir = os.path.join(os.environ["LOOM_PREFIX"], "bin") if os.environ.get("LOOM_PREFIX") \
    else os.path.join(root, "build", "bin")
tmp = tempfile.mkdtemp(prefix="loom-tune-cost-")
try:
    hello = os.path.join(tmp, "hello")
    subprocess.run([os.path.join(bindir, "loomcc"), "-O2", "-I", os.path.join(root, "bench", "src"),
                    os.path.join(root, "bench", "src", "hello.c"), "-o", hello], check=True)
    cache = os.path.join(tmp, "cache")
    env = dict(os.environ, LOOM_TUNE_CACHE=cache, LOOM_TUNE="auto")
    first, later, cost = [], [], []
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 21):
        shutil.rmtree(cache, ignore_errors=True)
        for times in (first, later):
            t = time.perf_counter()
            subprocess.run([os.path.join(bindir, "loomrun"), "-n", "2", hello],
                           stdout=subprocess.DEVNULL, env=env, check=True)
            times.append((time.perf_counter() - t) * 1e3)
        for name in os.listdir(cache):
            for line in open(os.path.join(cache, name)):
                if line.startswith("cost_us"):
                    cost.append(float(line.split("=")[1]))
    f, l = statistics.median(first), statistics.median(later)
    print("first run %.2f ms (%.2f-%.2f), later %.2f ms (%.2f-%.2f): +%.1f%%; calibration "
          "%.0f us (median of cost_us)" % (f, min(first), max(first), l, min(later), max(later),
                                             100 * (f - l) / l, statistics.median(cost) if cost else -1))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
