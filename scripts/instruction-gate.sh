#!/usr/bin/env bash
# The instruction-count gate: callgrind (through gungraun, host/benches/gate.rs) counts the
# instructions of one warm `transfer_hbar_tool` call through no plugins, 5 Rust policies and
# 1 JS policy, and this compares them with host/benches/gate-baseline.json: more than 5 %
# more instructions in any case fails.
#   scripts/instruction-gate.sh                  check (CI runs this from scripts/test.sh)
#   scripts/instruction-gate.sh --update REASON  write the counts as the new baseline, with
#                                                the reason (commit it with the change)
#   scripts/instruction-gate.sh --install-runner only install gungraun-runner (scripts/test.sh
#                                                compiles it while other steps run)
# Counts come from the dev profile, the build CI already has for the tests (a release build
# would add ~15 minutes to CI on 2 cores); they are deterministic for one binary and input
# (±0.5 % between clean clones). The baseline is counted as scripts/test.sh builds: through
# clippy-driver (RUSTC_WORKSPACE_WRAPPER), which compiles with MIR optimisations off; run
# without it, the counts come out ~2-3 % lower.
# Needs valgrind, the Rust and JS plugins (scripts/build-plugins.sh rust js) and target/debug/hak.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.20.0
# A tool, not part of the checkout: kept in the cargo home, by version, so a clean clone on a
# machine that ran the gate before does not compile it again (as cargo's registry is kept).
tools="${CARGO_HOME:-$HOME/.cargo}/hak-tools/gungraun-runner-$version"
runner=$tools/bin/gungraun-runner
command -v valgrind >/dev/null || { echo "instruction gate: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
if ! "$runner" --version 2>/dev/null | grep -q "$version"; then
  echo "installing gungraun-runner $version into $tools" >&2
  # Not linted: scripts/test.sh's clippy wrapper is for this workspace's crates only. cargo
  # install builds in a temporary directory, so it may run beside other steps.
  env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS \
    cargo install --quiet --locked gungraun-runner --version "=$version" --root "$tools"
fi
[ "${1:-}" = --install-runner ] && exit 0
export GUNGRAUN_RUNNER=$runner
# Plugins are compiled natively into the cache the bench reads: compiling under valgrind
# would take minutes, and compilation is not what is counted.
export HAK_CACHE_DIR=$PWD/target/test-cache
# Under valgrind the pooling allocator cannot reserve its address space and the engine falls
# back to on-demand allocation; its settings key the cache, so precompile with those too
# (otherwise every plugin is compiled again under valgrind: minutes, past the 120 s limit
# for the JS one on a busy machine).
export HAK_POOLING=0
# The same for the CPU: compiled natively, code for this CPU's AVX-512 would not match under
# valgrind, which has none. Both compile for plain x86-64 (SSE4.2).
export HAK_PORTABLE_CODE=1
hak=target/debug/hak
[ -x $hak ] || cargo build --quiet --bin hak
$hak plugin inspect target/plugins/rust/max-recipients.wasm --config '{"maxRecipients":5}' >/dev/null
$hak plugin inspect target/plugins/rust/reject-tool.wasm --config '{"relevantTools":["get_hbar_balance_query_tool"]}' >/dev/null
$hak plugin inspect target/plugins/js/max-recipients.wasm --config '{"maxRecipients":5}' >/dev/null
rm -rf target/gungraun/hak-host/gate
# --workspace: the features the tests are built with, so nothing is compiled again.
cargo bench --quiet --profile dev --workspace --bench gate -- --save-summary=json
python3 - "$@" <<'PY'
import json, pathlib, sys
counts = {}
for path in pathlib.Path("target/gungraun/hak-host/gate").rglob("summary.json"):
    summary = json.loads(path.read_text())
    # Every thread of the process (parts), summed by gungraun into the total.
    total = summary["profiles"][0]["data"]["total"]["metrics"]["Ir"]["values"]["new"]
    counts[summary["id"]] = int(total)
baseline_path = pathlib.Path("host/benches/gate-baseline.json")
if len(sys.argv) > 1 and sys.argv[1] == "--update":
    reason = " ".join(sys.argv[2:]).strip()
    if not reason:
        sys.exit("--update needs a reason")
    baseline_path.write_text(json.dumps({"reason": reason, "instructions": dict(sorted(counts.items()))}, indent=2) + "\n")
    print(f"baseline written: {counts}")
    sys.exit(0)
baseline = json.loads(baseline_path.read_text())["instructions"]
failed = False
for case, base in baseline.items():
    now = counts.get(case)
    if now is None:
        print(f"instruction gate: no count for {case}"); failed = True; continue
    ratio = now / base
    verdict = "FAIL (> +5 %)" if ratio > 1.05 else "ok"
    failed |= ratio > 1.05
    print(f"instruction gate: {case}: {now} instructions, baseline {base} ({ratio - 1:+.1%}) {verdict}")
for case in counts.keys() - baseline.keys():
    print(f"instruction gate: {case} has no baseline ({counts[case]})"); failed = True
if failed:
    sys.exit("instruction gate failed: make the call path cheaper again, or update the baseline in the same commit with a reason (scripts/instruction-gate.sh --update REASON)")
PY
