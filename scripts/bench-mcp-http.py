#!/usr/bin/env python3
"""`hak mcp --listen` (streamable HTTP) as an agent's client sees it, interleaved across binaries.

    scripts/bench-mcp-http.py MANIFEST target/release/hak [other/hak ...] [--calls 300] [--rounds 3]

One client (this script: Python's http.client on one kept-alive connection, one request at a
time) starts each binary's `hak mcp --listen 127.0.0.1:0 --config MANIFEST`, initialises an
MCP session, warms up with 20 `tools/call`s of `transfer_hbar_tool` (two recipients and a memo;
the manifest should be return-bytes and have no `[[agents]]`), then times `--calls` more, per
round. Prints each binary's p50 / p90 / p99 in µs (medians over rounds). The answers come as
event streams (the event, then the chunked body's end): this is where a server that waits for
the client's ACK before its last piece shows (Nagle's algorithm, ~40 ms a call). Figures go to
docs/BENCHMARKS.md as same-run comparisons.
"""

import argparse
import http.client
import json
import statistics
import subprocess
import time

ARGUMENTS = {
    "transfers": [{"accountId": "0.0.2001", "amount": 1}, {"accountId": "0.0.2002", "amount": 0.5}],
    "transactionMemo": "bench",
}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
VERSION = "2025-06-18"


class Session:
    """One MCP session over one HTTP connection to a `hak mcp --listen` started here."""

    def __init__(self, binary, manifest):
        self.proc = subprocess.Popen([binary, "mcp", "--listen", "127.0.0.1:0", "--config", manifest],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        url = json.loads(self.proc.stdout.readline())["listen"]
        self.conn = http.client.HTTPConnection(url.split("//", 1)[1].split("/", 1)[0])
        self.headers = dict(HEADERS)
        hello = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
        response, _ = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        self.headers["mcp-session-id"] = response.getheader("mcp-session-id")
        self.headers["mcp-protocol-version"] = VERSION
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message):
        self.conn.request("POST", "/mcp", json.dumps(message), self.headers)
        response = self.conn.getresponse()
        return response, response.read()

    def call(self, i):
        message = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": "transfer_hbar_tool", "arguments": ARGUMENTS}}
        return self.post(message)[1]

    def close(self):
        self.conn.close()
        self.proc.terminate()
        self.proc.wait(timeout=10)


def one_round(binary, manifest, calls):
    """p50, p90 and p99 in µs of `calls` sequential tools/calls."""
    session = Session(binary, manifest)
    try:
        for i in range(1, 21):
            answer = session.call(i)
        if b'"SUCCESS"' not in answer:
            raise SystemExit(f"{binary}: the warm-up call did not succeed: {answer[:300]!r}")
        took = []
        for i in range(1000, 1000 + calls):
            started = time.perf_counter()
            session.call(i)
            took.append((time.perf_counter() - started) * 1e6)
    finally:
        session.close()
    took.sort()
    return statistics.median(took), took[int(calls * 0.9)], took[int(calls * 0.99)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    results = {b: [] for b in a.binaries}
    for _ in range(a.rounds):
        for binary in a.binaries:
            results[binary].append(one_round(binary, a.manifest, a.calls))
    for binary, runs in results.items():
        p50, p90, p99 = (statistics.median(r[k] for r in runs) for k in range(3))
        print(f"{binary}: p50 {p50:.0f} µs, p90 {p90:.0f} µs, p99 {p99:.0f} µs a tools/call "
              f"(p50 of each round: {[round(r[0]) for r in runs]})")


if __name__ == "__main__":
    main()
