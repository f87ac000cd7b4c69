#!/usr/bin/env python3
"""Collectives on GPU buffers: Loom's device-native algorithms against the
same calls staged through host memory (LOOM_COLL_DEVICE_NATIVE=0: every
device buffer copied to a host twin, the host algorithm, copied back).

    bench/coll_device.py                       allreduce, 2 ranks, 64K..64M
    bench/coll_device.py --op reduce_scatter_block --ranks 4 --sizes 1M:256M
    bench/coll_device.py --force ring          LOOM_COLL_<OP>=ring for both

Runs bench/src/coll.c (built with Loom's loomcc) with --mem device, the two
modes interleaved, --repeats times, and prints the median latency of each
and their ratio per size. Needs a CUDA device (one per rank of the node);
without one it says "skipped: no device" and exits 0. LOOM_DEVICE_MOCK=1 in
the environment runs it on Loom's mock device instead: a check that the
script and both paths work, whose timings mean nothing.
See docs/benchmarks.md ("Device buffers").
"""
import argparse, os, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--op", default="allreduce")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--sizes", default="64K:64M", help="MIN:MAX bytes, K/M/G suffixes")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--force", default=None, help="algorithm for LOOM_COLL_<OP> in both modes")
    ap.add_argument("--prefix", default=os.environ.get("LOOM_PREFIX", os.path.join(ROOT, "build")))
    args = ap.parse_args()
    lo, hi = args.sizes.split(":")
    bindir = os.path.join(args.prefix, "bin")
    exe = os.path.join(tempfile.mkdtemp(prefix="loom-coll-device-"), "coll")
    subprocess.run([os.path.join(bindir, "loomcc"), "-O2", "-std=c99", "-I",
                    os.path.join(HERE, "src"), os.path.join(HERE, "src", "coll.c"), "-o", exe,
                    "-lm"], check=True)
    env_all = []
    if args.force:
        env_all += ["-x", "LOOM_COLL_%s=%s" % (args.op.upper(), args.force)]
    if os.environ.get("LOOM_DEVICE_MOCK") == "1":
        env_all += ["-x", "LOOM_DEVICE_MOCK=1"]
    modes = {"native": [], "staged": ["-x", "LOOM_COLL_DEVICE_NATIVE=0"]}
    times = {m: {} for m in modes}
    for rep in range(args.repeats):
        for mode, env in modes.items():
            cmd = ([os.path.join(bindir, "loomrun"), "-n", str(args.ranks)] + env_all + env +
                   [exe, "--op", args.op, "--mem", "device", "--csv", "--min-size", lo,
                    "--max-size", hi] + (["--check"] if rep == 0 else []))
            r = subprocess.run(cmd, capture_output=True, text=True)
            if "skipped: no device" in r.stdout:
                print("coll_device: skipped: no device (a CUDA device per rank is needed)")
                return 0
            if r.returncode != 0:
                sys.exit("coll_device: %s failed:\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
            for line in r.stdout.splitlines():
                f = line.split(",")
                if len(f) == 6 and f[5] == "us":
                    times[mode].setdefault(int(f[3]), []).append(float(f[4]))
    print("# %s on device buffers, %d ranks, medians of %d (us); staged = "
          "LOOM_COLL_DEVICE_NATIVE=0%s" % (args.op, args.ranks, args.repeats,
                                           ", LOOM_COLL_%s=%s" % (args.op.upper(), args.force)
                                           if args.force else ""))
    print("| size (B) | native | staged | staged/native |")
    print("|---|---|---|---|")
    for size in sorted(times["native"]):
        n = statistics.median(times["native"][size])
        s = statistics.median(times["staged"].get(size, [float("nan")]))
        print("| %d | %.1f | %.1f | %.2f |" % (size, n, s, s / n if n else float("nan")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
