#!/usr/bin/env python3
"""`hak mcp` over stdio, as an agent's client sees it, interleaved across binaries.

    scripts/bench-mcp-stdio.py MANIFEST target/release/hak [other/hak ...] [--calls 5000] [--rounds 3]

One client (this script: newline-delimited JSON-RPC on the child's pipes, one request at a
time) starts each binary's `hak mcp --config MANIFEST`, initialises, warms up with 200
`tools/call`s of `transfer_hbar_tool` (two recipients and a memo; the manifest should be
return-bytes), then times `--calls` more, per round. The floor: the same client against a
process that answers every line at once with the answer hak gave (`perl`, line-buffered):
what the client and the pipes cost alone. Prints each side's µs per call (median over rounds);
hak's share of a call is its figure minus the floor's. Figures go to docs/BENCHMARKS.md as
same-run differences and ratios.
"""

import argparse
import json
import statistics
import subprocess
import time

ARGUMENTS = {
    "transfers": [{"accountId": "0.0.2001", "amount": 1}, {"accountId": "0.0.2002", "amount": 0.5}],
    "transactionMemo": "bench",
}
ECHO = '$| = 1; my $answer = shift; while (<STDIN>) { print "$answer\\n" }'


def request(i):
    call = {"name": "transfer_hbar_tool", "arguments": ARGUMENTS}
    return (json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call}) + "\n").encode()


def start(argv):
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=1 << 16)


def ask(proc, line):
    proc.stdin.write(line)
    proc.stdin.flush()
    return proc.stdout.readline()


def timed(proc, calls, first_id):
    started = time.perf_counter()
    for i in range(first_id, first_id + calls):
        ask(proc, request(i))
    return (time.perf_counter() - started) / calls * 1e6


def hak_round(binary, manifest, calls):
    """µs per call of one `hak mcp`, and its answer to a call (for the floor)."""
    proc = start([binary, "mcp", "--config", manifest])
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    ask(proc, (json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}) + "\n").encode())
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    answer = b""
    for i in range(1, 201):
        answer = ask(proc, request(i))
    if b'"SUCCESS"' not in answer:
        raise SystemExit(f"{binary}: the warm-up call did not succeed: {answer[:300]!r}")
    took = timed(proc, calls, 1000)
    proc.stdin.close()
    proc.wait(timeout=10)
    return took, answer.decode().rstrip("\n")


def floor_round(answer, calls):
    proc = start(["perl", "-e", ECHO, answer])
    timed(proc, 200, 1)
    took = timed(proc, calls, 1000)
    proc.stdin.close()
    proc.wait(timeout=10)
    return took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    results = {b: [] for b in a.binaries}
    floor = []
    for _ in range(a.rounds):
        answer = None
        for binary in a.binaries:
            took, answer = hak_round(binary, a.manifest, a.calls)
            results[binary].append(took)
        floor.append(floor_round(answer, a.calls))
    base = statistics.median(floor)
    print(f"floor (client and pipes, perl answering): {base:.1f} µs per call {[round(x, 1) for x in floor]}")
    for binary, runs in results.items():
        m = statistics.median(runs)
        print(f"{binary}: {m:.1f} µs per call ({m - base:+.1f} over the floor) {[round(x, 1) for x in runs]}")


if __name__ == "__main__":
    main()
