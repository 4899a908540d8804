//! `hak plugin new --lang rust|js|go|python <name>`: a working plugin project to start from — a policy
//! that blocks HBAR transfers above a configured amount, with its build command. Only the
//! templates live here; building is the language toolchain's job, and the SDKs they build
//! against come from `guest_sources` (embedded in the binary, unpacked on first use).

use std::path::{Path, PathBuf};

/// Languages hak can scaffold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    Rust,
    Js,
    Go,
    Python,
}

/// Why a project was not scaffolded (each names the path or the name at fault).
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    #[error("plugin name {0:?}: use lowercase letters, digits and '-', starting with a letter")]
    BadName(String),
    #[error("{} already exists", .0.display())]
    Exists(PathBuf),
    #[error("no directory for the guest SDKs: set $HAK_HOME")]
    NoHome,
    /// Unpacking the embedded SDKs failed (the message names the path).
    #[error("{0}")]
    Unpack(String),
    #[error("guest SDKs at {}: {source}", path.display())]
    Sdk {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The guest SDKs this binary was built with, unpacked under `home` (see
/// [`crate::authoring::guest_sources::unpack`]); `home` defaults to `$HAK_HOME`, `$XDG_DATA_HOME/hak` or
/// `~/.local/share/hak`.
pub fn embedded_sdk_root(home: Option<&Path>) -> Result<PathBuf, ScaffoldError> {
    let home = match home {
        Some(home) => home.to_path_buf(),
        None => crate::authoring::guest_sources::default_home().ok_or(ScaffoldError::NoHome)?,
    };
    Ok(crate::authoring::guest_sources::unpack(&home)
        .map_err(ScaffoldError::Unpack)?
        .join("guest-sdk"))
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Write the project into `dir/<name>`; the files written and the build command.
pub fn new_plugin(
    lang: Lang,
    name: &str,
    dir: &Path,
    sdk_root: &Path,
) -> Result<Scaffolded, ScaffoldError> {
    if !valid_name(name) {
        return Err(ScaffoldError::BadName(name.to_owned()));
    }
    let root = dir.join(name);
    if root.exists() {
        return Err(ScaffoldError::Exists(root));
    }
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| ScaffoldError::Io { path, source }
    };
    let sdk_root = sdk_root
        .canonicalize()
        .map_err(|source| ScaffoldError::Sdk {
            path: sdk_root.to_owned(),
            source,
        })?;
    let files: Vec<(PathBuf, String)> = match lang {
        Lang::Rust => vec![
            (
                root.join("Cargo.toml"),
                rust_manifest(name, &sdk_root.join("rust")),
            ),
            (root.join("src/lib.rs"), RUST_LIB.replace("{{name}}", name)),
        ],
        Lang::Js => vec![
            (
                root.join(format!("{name}.js")),
                JS_PLUGIN.replace("{{name}}", name),
            ),
            (
                root.join(format!("{name}.test.js")),
                JS_TEST.replace("{{name}}", name),
            ),
        ],
        Lang::Go => vec![
            (
                root.join("go.mod"),
                format!(
                    "module hak.local/plugins/{name}\n\ngo 1.27\n\nrequire hak.local/guest v0.0.0\n\nreplace hak.local/guest => {}\n",
                    sdk_root.join("go").display()
                ),
            ),
            (root.join("main.go"), GO_PLUGIN.replace("{{name}}", name)),
            (root.join("main_test.go"), GO_TEST.to_owned()),
        ],
        Lang::Python => vec![
            (root.join("app.py"), PY_APP.replace("{{name}}", name)),
            (root.join("test_app.py"), PY_TEST.to_owned()),
        ],
    };
    // Every language: expectations `hak plugin test <wasm> --cases cases.json` checks.
    let mut files = files;
    files.push((root.join("cases.json"), CASES.to_owned()));
    let mut written = Vec::new();
    for (path, text) in files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&path, text).map_err(io(&path))?;
        written.push(path);
    }
    // The commands as printed run as they are: this very hak, and the toolchains it finds
    // (or a line saying how to get one).
    let hak = std::env::current_exe()
        .map(|exe| shell_word(&exe.display().to_string()))
        .unwrap_or_else(|_| "hak".into());
    let mut needs = Vec::new();
    let mut need = |found: Result<PathBuf, super::toolchains::Missing>, or: &str| match found {
        Ok(path) => shell_word(&path.display().to_string()),
        Err(missing) => {
            needs.push(missing.to_string());
            or.to_owned()
        }
    };
    let build = match lang {
        Lang::Rust => format!(
            "cd {} && cargo test && cargo build --release --target wasm32-wasip2   # → target/wasm32-wasip2/release/{}.wasm",
            root.display(),
            name.replace('-', "_")
        ),
        Lang::Go => {
            let go = need(super::toolchains::go(), "go");
            format!(
                "cd {} && GOTOOLCHAIN=local GOFLAGS=-mod=mod {go} test . && {hak} plugin build . -o {name}.wasm",
                shell_word(&root.display().to_string()),
            )
        }
        Lang::Python => {
            need(super::toolchains::componentize_py(), "");
            format!(
                "cd {} && PYTHONPATH={} python3 -m unittest -q && {hak} plugin build . -o {name}.wasm",
                shell_word(&root.display().to_string()),
                shell_word(&sdk_root.join("python").display().to_string()),
            )
        }
        Lang::Js => format!(
            "npm ci --prefix {} --no-audit --no-fund && node {} {} && node {} {} -o {}",
            sdk_root.join("js").display(),
            sdk_root.join("js/bin/test.js").display(),
            root.join(format!("{name}.test.js")).display(),
            sdk_root.join("js/bin/build.js").display(),
            root.join(format!("{name}.js")).display(),
            root.join(format!("{name}.wasm")).display(),
        ),
    };
    let wasm = match lang {
        Lang::Rust => format!(
            "target/wasm32-wasip2/release/{}.wasm",
            name.replace('-', "_")
        ),
        Lang::Go | Lang::Js | Lang::Python => format!("{name}.wasm"),
    };
    let check = format!(
        "cd {} && {hak} plugin test {wasm} --cases cases.json",
        shell_word(&root.display().to_string())
    );
    Ok(Scaffolded {
        files: written,
        build,
        check,
        needs,
    })
}

/// What `hak plugin new` made: the files, the command that tests and builds the plugin, and
/// the command that checks the built component against the scaffolded `cases.json`.
#[derive(Debug)]
pub struct Scaffolded {
    pub files: Vec<PathBuf>,
    pub build: String,
    pub check: String,
    /// A line per toolchain the build needs and hak did not find, saying how to get it.
    pub needs: Vec<String>,
}

/// `word` as one word of a POSIX shell command (single-quoted when it must be).
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn rust_manifest(name: &str, sdk: &Path) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2021"

[lib]
crate-type = ["cdylib"]

[dependencies]
hak-guest = {{ path = {sdk:?} }}
serde = {{ version = "1", features = ["derive"] }}

[profile.release]
opt-level = "s"
lto = true
strip = true
codegen-units = 1
panic = "abort"

# A project of its own, even inside another workspace.
[workspace]
"#,
        sdk = sdk.display().to_string()
    )
}

/// The scaffolded policy's expectations, for `hak plugin test <wasm> --cases cases.json`:
/// stage inputs as `hak call --record` writes them (add your own the same way).
const CASES: &str = r#"[
  {
    "name": "2 HBAR to one recipient is allowed",
    "config": { "maxTinybars": "500000000" },
    "expect": "allow",
    "input": {
      "stage": "post_params_normalization",
      "method": "transfer_hbar_tool",
      "toolType": "transaction",
      "input": {
        "normalisedParams": {
          "hbarTransfers": [
            { "accountId": "0.0.2001", "amount": "200000000" },
            { "accountId": "0.0.1001", "amount": "-200000000" }
          ],
          "schedulingParams": { "isScheduled": false }
        },
        "rawParams": { "transfers": [{ "accountId": "0.0.2001", "amount": 2 }] },
        "context": { "accountId": "0.0.1001", "mode": "returnBytes", "network": "testnet" }
      }
    }
  },
  {
    "name": "10 HBAR to one recipient is blocked",
    "config": { "maxTinybars": "500000000" },
    "expect": "block",
    "reason": "1000000000 tinybars to one recipient is too much",
    "input": {
      "stage": "post_params_normalization",
      "method": "transfer_hbar_tool",
      "toolType": "transaction",
      "input": {
        "normalisedParams": {
          "hbarTransfers": [
            { "accountId": "0.0.2001", "amount": "1000000000" },
            { "accountId": "0.0.1001", "amount": "-1000000000" }
          ],
          "schedulingParams": { "isScheduled": false }
        },
        "rawParams": { "transfers": [{ "accountId": "0.0.2001", "amount": 10 }] },
        "context": { "accountId": "0.0.1001", "mode": "returnBytes", "network": "testnet" }
      }
    }
  },
  {
    "name": "a balance query is not judged",
    "config": { "maxTinybars": "500000000" },
    "expect": "allow",
    "input": {
      "stage": "post_params_normalization",
      "method": "get_hbar_balance_query_tool",
      "toolType": "query",
      "input": {
        "normalisedParams": { "accountId": "0.0.2001" },
        "rawParams": { "accountId": "0.0.2001" },
        "context": { "accountId": "0.0.1001", "mode": "returnBytes", "network": "testnet" }
      }
    }
  }
]
"#;

const RUST_LIB: &str = r#"//! {{name}}: blocks HBAR transfers that send more than `maxTinybars` to one recipient.
//! Config: `{"maxTinybars": "100000000"}`.

use hak_guest::{block, parse_config, Plugin, PluginInfo, PolicyOutcome, Stage, StageInput, Verdict};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    max_tinybars: String,
}

pub struct Policy {
    max: u64,
}

impl Plugin for Policy {
    fn describe(config: &str) -> Result<(Self, PluginInfo), String> {
        let config: Config = parse_config(config)?;
        let max = config
            .max_tinybars
            .parse()
            .map_err(|_| "invalid config: maxTinybars: not an integer".to_string())?;
        let info = PluginInfo::policy(
            "{{name}}",
            "Blocks large HBAR transfers",
            ["transfer_hbar_tool"],
            [Stage::PostParamsNormalization],
        );
        Ok((Policy { max }, info))
    }

    fn should_block_post_params_normalization(&self, input: &StageInput) -> PolicyOutcome {
        // The host states who gets what (input.facts): no params JSON to read.
        for m in input.movements() {
            if m.amount > self.max {
                return Ok(block(format!("{} tinybars to one recipient is too much", m.amount)));
            }
        }
        Ok(Verdict::Allow)
    }
}

hak_guest::export_plugin!(Policy);

// `cargo test` runs these natively: the host's imports are in-memory fakes there
// (hak_guest::testing), and the input carries the facts a host would state.
#[cfg(test)]
mod tests {
    use super::*;
    use hak_guest::{testing, Asset};

    fn transfer(tinybars: u64) -> StageInput {
        testing::input("transfer_hbar_tool", Stage::PostParamsNormalization)
            .with_credit(Asset::Hbar, "0.0.2001", tinybars)
    }

    #[test]
    fn blocks_more_than_the_maximum_to_one_recipient() {
        let (policy, info) = Policy::describe("{\"maxTinybars\": \"100000000\"}").unwrap();
        assert_eq!(info.policy_stages, [Stage::PostParamsNormalization]);
        let at_max = policy.should_block_post_params_normalization(&transfer(100_000_000));
        assert_eq!(at_max, Ok(Verdict::Allow));
        let over = policy.should_block_post_params_normalization(&transfer(100_000_001));
        assert!(matches!(over, Ok(Verdict::Block(_))), "{over:?}");
    }

    #[test]
    fn refuses_a_bad_config() {
        assert!(Policy::describe("{\"maxTinybars\": \"lots\"}").is_err());
    }
}
"#;

const JS_PLUGIN: &str = r#"// {{name}}: blocks HBAR transfers that send more than `maxTinybars` to one recipient.
// Config: {"maxTinybars": "100000000"}.
import { definePlugin, Stage, allow, block } from '@hak/guest';

export default definePlugin({
  describe(config) {
    if (typeof config.maxTinybars !== 'string' || !/^\d+$/.test(config.maxTinybars)) {
      throw 'invalid config: maxTinybars: not an integer string';
    }
    return {
      name: '{{name}}',
      description: 'Blocks large HBAR transfers',
      relevantTools: ['transfer_hbar_tool'],
      policyStages: [Stage.POST_PARAMS_NORMALIZATION],
      state: { max: BigInt(config.maxTinybars) },
    };
  },
  policy: {
    postParamsNormalization(input, { max }) {
      // The host states who gets what (input.facts): no params JSON to read.
      for (const m of input.movements) {
        if (m.amount > max) return block(`${m.amount} tinybars to one recipient is too much`);
      }
      return allow;
    },
  },
});
"#;

const GO_PLUGIN: &str = r#"// {{name}}: blocks HBAR transfers that send more than `maxTinybars` to one recipient.
// Config: {"maxTinybars": "100000000"}.
package main

import (
	"encoding/json"
	"fmt"
	"math/big"

	guest "hak.local/guest"
)

type policy struct{ max *big.Int }

func (p *policy) Describe(config []byte) (guest.Info, error) {
	var c struct {
		MaxTinybars string `json:"maxTinybars"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		return guest.Info{}, fmt.Errorf("invalid config: %v", err)
	}
	max, ok := new(big.Int).SetString(c.MaxTinybars, 10)
	if !ok {
		return guest.Info{}, fmt.Errorf("invalid config: maxTinybars: not an integer string")
	}
	p.max = max
	return guest.Info{
		Name:          "{{name}}",
		Description:   "Blocks large HBAR transfers",
		RelevantTools: []string{"transfer_hbar_tool"},
		PolicyStages:  []guest.Stage{guest.PostParamsNormalization},
	}, nil
}

func (p *policy) ShouldBlock(in *guest.StageInput) (guest.Verdict, error) {
	// The host states who gets what (in.Facts): no params JSON to read.
	for _, m := range in.Movements() {
		if m.Amount.Cmp(p.max) > 0 {
			return guest.Block(m.Amount.String()+" tinybars to one recipient is too much", "", nil), nil
		}
	}
	return guest.Allow, nil
}

func init() { guest.Register(&policy{}) }

func main() {}
"#;

const GO_TEST: &str = r#"package main

// `go test` runs these natively: the SDK's host imports are in-memory fakes in a native build
// (guest.FakeReset, guest.FakeLogs, ...), and the input carries the facts a host would state.

import (
	"math/big"
	"testing"

	guest "hak.local/guest"
)

func transfer(tinybars int64) *guest.StageInput {
	return &guest.StageInput{
		Stage:    guest.PostParamsNormalization,
		Method:   "transfer_hbar_tool",
		ToolType: guest.Transaction,
		Facts: &guest.Facts{Movements: []guest.Movement{
			{Kind: guest.Hbar, To: "0.0.2001", Amount: big.NewInt(tinybars)},
		}},
	}
}

func TestBlocksMoreThanTheMaximumToOneRecipient(t *testing.T) {
	guest.FakeReset()
	p := &policy{}
	info, err := p.Describe([]byte(`{"maxTinybars": "100000000"}`))
	if err != nil || len(info.PolicyStages) != 1 || info.PolicyStages[0] != guest.PostParamsNormalization {
		t.Fatalf("describe: %+v, %v", info, err)
	}
	if v, err := p.ShouldBlock(transfer(100_000_000)); err != nil || v.Blocked {
		t.Fatalf("at the maximum: %+v, %v", v, err)
	}
	if v, err := p.ShouldBlock(transfer(100_000_001)); err != nil || !v.Blocked {
		t.Fatalf("over the maximum: %+v, %v", v, err)
	}
}

func TestRefusesABadConfig(t *testing.T) {
	if _, err := (&policy{}).Describe([]byte(`{"maxTinybars": "lots"}`)); err == nil {
		t.Fatal("a bad config was accepted")
	}
}
"#;

const JS_TEST: &str = r#"// Unit tests of {{name}}, run natively by `node <sdk>/js/bin/test.js {{name}}.test.js` (node's
// test runner): the SDK fakes the host imports and builds inputs with the facts a host states.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import plugin from './{{name}}.js';
import { load, input, reset } from '@hak/guest/testing';

const transfer = (tinybars) =>
  input('transfer_hbar_tool', 'post-params-normalization').withCredit('hbar', '0.0.2001', tinybars);

test('blocks more than the maximum to one recipient', () => {
  reset();
  const policy = load(plugin, { maxTinybars: '100000000' });
  assert.deepEqual(policy.info.policyStages, ['post-params-normalization']);
  assert.equal(policy.run(transfer(100_000_000n)).tag, 'allow');
  const over = policy.run(transfer(100_000_001n));
  assert.equal(over.tag, 'block');
  assert.equal(over.val.message, '100000001 tinybars to one recipient is too much');
});

test('refuses a bad config', () => {
  assert.throws(() => load(plugin, { maxTinybars: 'lots' }), /maxTinybars/);
});
"#;

const PY_APP: &str = r#""""{{name}}: blocks HBAR transfers that send more than `maxTinybars` to one recipient.
Config: {"maxTinybars": "100000000"}.

Written as the Python Hedera Agent Kit teaches policies (AbstractPolicy, should_block_*);
hak_guest.register makes it the component's plugin.
"""

from hak_guest import AbstractPolicy, Block, register
from hak_guest.exports import Events, Hooks, Inputs, Plugin, Policy  # noqa: F401 (the component's exports)


class LargeTransferPolicy(AbstractPolicy):
    def __init__(self, config: dict):
        unknown = set(config) - {"maxTinybars"}
        if unknown:
            raise ValueError(f"invalid config: unknown field `{sorted(unknown)[0]}`")
        try:
            self.max = int(config["maxTinybars"])
        except (KeyError, ValueError, TypeError):
            raise ValueError("invalid config: maxTinybars: not an integer") from None

    @property
    def name(self) -> str:
        return "{{name}}"

    @property
    def description(self) -> str:
        return "Blocks large HBAR transfers"

    @property
    def relevant_tools(self) -> list:
        return ["transfer_hbar_tool"]

    @property
    def reads(self) -> dict:
        # The host states who gets what (params.facts): no params JSON to hand over.
        return {"*": ["facts"]}

    async def should_block_post_params_normalization(self, context, params, method):
        for m in params.facts.movements:
            if m.amount > self.max:
                return Block(f"{m.amount} tinybars to one recipient is too much")
        return False


register(LargeTransferPolicy)
"#;

const PY_TEST: &str = r#""""Runs natively (python3 -m unittest): the host's imports are hak_guest.testing's fakes."""

import asyncio
import unittest

from hak_guest import Asset, Block, Context, Facts, Movement, PostParamsNormalizationParams

from app import LargeTransferPolicy


def transfer(tinybars: int) -> PostParamsNormalizationParams:
    facts = Facts(movements=[Movement(Asset("hbar"), "0.0.2001", tinybars, "transfer")])
    return PostParamsNormalizationParams("transfer_hbar_tool", "", facts)


class LargeTransferPolicyTest(unittest.TestCase):
    def test_blocks_more_than_the_maximum_to_one_recipient(self):
        policy = LargeTransferPolicy({"maxTinybars": "100000000"})
        judge = policy.should_block_post_params_normalization
        self.assertFalse(asyncio.run(judge(Context(), transfer(100_000_000), "transfer_hbar_tool")))
        self.assertEqual(
            asyncio.run(judge(Context(), transfer(100_000_001), "transfer_hbar_tool")),
            Block("100000001 tinybars to one recipient is too much"),
        )

    def test_refuses_a_bad_config(self):
        with self.assertRaisesRegex(ValueError, "maxTinybars"):
            LargeTransferPolicy({"maxTinybars": "lots"})


if __name__ == "__main__":
    unittest.main()
"#;
