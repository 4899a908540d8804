#!/usr/bin/env python3
"""Start-to-first-call of `hak serve` with N different components, from a warm cache.

    scripts/bench-startup.py target/release/hak [other/hak ...] [--components 20] [--rounds 7]

Makes N distinct components (the built Rust max-recipients / reject-tool and, when built, the
JS max-recipients, each with a unique custom section appended, so every one has its own
sha256 and its own precompiled artifact), writes a manifest naming them, warms the cache with
one start per binary, then runs interleaved rounds: start `hak serve` on a free port, wait for
its first stdout line, POST one transfer, stop it. Prints the median and min per binary, in ms.
Measures hak; the numbers go to docs/BENCHMARKS.md as same-run ratios.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def leb128(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def with_custom_section(wasm, name, data):
    payload = leb128(len(name)) + name + data
    return wasm + b"\x00" + leb128(len(payload)) + payload


def components(directory, count):
    sources = [
        ("rust/max-recipients", "{ maxRecipients = 5 }"),
        ("rust/reject-tool", '{ relevantTools = ["create_topic_tool"] }'),
    ]
    js = os.path.join(ROOT, "target/plugins/js/max-recipients.wasm")
    entries = []
    for i in range(count):
        rel, config = sources[i % len(sources)]
        if os.path.exists(js) and i % 7 == 3:
            rel, config = "js/max-recipients", "{ maxRecipients = 5 }"
        with open(os.path.join(ROOT, "target/plugins", rel + ".wasm"), "rb") as f:
            wasm = f.read()
        path = os.path.join(directory, f"p{i}.wasm")
        with open(path, "wb") as f:
            f.write(with_custom_section(wasm, b"hak-bench", str(i).encode()))
        entries.append(f'[[plugins]]\nname = "p{i}"\npath = "{path}"\nconfig = {config}\n')
    manifest = os.path.join(directory, "hak.toml")
    with open(manifest, "w") as f:
        f.write(
            '[network]\nname = "testnet"\nnode_account_ids = ["0.0.3"]\n\n'
            '[context]\naccount_id = "0.0.1001"\nmode = "returnBytes"\n\n'
            '[state]\nbackend = "memory"\n\n' + "\n".join(entries)
        )
    return manifest


def start_to_first_call(hak, manifest, env):
    started = time.perf_counter()
    child = subprocess.Popen(
        [hak, "serve", "--config", manifest, "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        line = child.stdout.readline()
        listen = json.loads(line)["listen"]
        body = json.dumps({"transfers": [{"accountId": "0.0.2001", "amount": 1}]}).encode()
        request = urllib.request.Request(
            listen + "/v1/tools/transfer_hbar_tool", data=body, method="POST"
        )
        with urllib.request.urlopen(request) as response:
            answer = json.loads(response.read())
        elapsed = (time.perf_counter() - started) * 1000
        if "bytes" not in answer.get("raw", {}):
            sys.exit(f"{hak}: the first call did not return bytes: {answer}")
        return elapsed
    finally:
        child.terminate()
        child.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--components", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hak-startup-") as directory:
        manifest = components(directory, args.components)
        size = sum(
            os.path.getsize(os.path.join(directory, f))
            for f in os.listdir(directory)
            if f.endswith(".wasm")
        )
        env = dict(os.environ, HAK_CACHE_DIR=os.path.join(directory, "cache"))
        for hak in args.binaries:
            start_to_first_call(hak, manifest, env)  # warm the cache (and the page cache)
        samples = {hak: [] for hak in args.binaries}
        for _ in range(args.rounds):
            for hak in args.binaries:
                samples[hak].append(start_to_first_call(hak, manifest, env))
        print(json.dumps({"components": args.components, "megabytes": round(size / 1e6, 1)}))
        for hak, s in samples.items():
            print(
                json.dumps(
                    {"binary": hak, "medianMs": round(statistics.median(s), 1), "minMs": round(min(s), 1)}
                )
            )


if __name__ == "__main__":
    main()
