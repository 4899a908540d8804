#!/usr/bin/env python3
"""Start-up and idle memory of `hak emu`, interleaved across binaries.

    scripts/bench-emu.py target/release/hak [other/hak ...] [--rounds 9]

Each round starts `hak emu` (in-memory, free ports) for every binary in turn, times spawn to its
first stdout line (the addresses: both servers are up), waits 1 s, reads VmRSS from /proc and
stops it. Prints the median and min start-up (ms) and the median RSS (MiB) per binary; the
figures go to docs/BENCHMARKS.md as same-run ratios.
"""

import argparse
import statistics
import subprocess
import time


def once(binary):
    started = time.perf_counter()
    proc = subprocess.Popen([binary, "emu"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdout.readline()
    ready_ms = (time.perf_counter() - started) * 1000
    time.sleep(1)
    rss_kib = 0
    with open(f"/proc/{proc.pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss_kib = int(line.split()[1])
    proc.terminate()
    proc.wait(timeout=10)
    return ready_ms, rss_kib / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    results = {b: [] for b in args.binaries}
    for b in args.binaries:
        once(b)  # warm the page cache
    for _ in range(args.rounds):
        for b in args.binaries:
            results[b].append(once(b))
    for b, runs in results.items():
        ready = [r for r, _ in runs]
        rss = [m for _, m in runs]
        print(f"{b}: start-up median {statistics.median(ready):.1f} ms (min {min(ready):.1f}), "
              f"idle RSS median {statistics.median(rss):.1f} MiB")


if __name__ == "__main__":
    main()
