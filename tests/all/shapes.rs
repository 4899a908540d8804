//! The generated stage JSON types hold what hak really sends plugins: every conformance case
//! (all 44 tools, against a seeded local network) runs with a recording hook at
//! post-params-normalization and post-core-action, and each recorded `rawParams`,
//! `normalisedParams` and `coreActionResult` must type-check against the TypeScript
//! declarations the JS SDK ships (`tsc --strict`: no missing, mistyped or undocumented key)
//! and decode into the Go structs the Go SDK ships (unknown fields refused) and encode back to
//! the same JSON, and fit the TypedDicts the Python SDK ships (checked key by key).

use super::conformance::{cases, return_bytes_manifest, seeded_network};
use super::scaffold::go;
use hak_host::authoring::codegen::{self, Ty};
use hak_tests::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

/// One recorded value and the type it must have.
struct Sample {
    method: String,
    part: &'static str,
    type_name: String,
    value: Value,
}

fn recorded_samples() -> Vec<Sample> {
    let (_local, seed, mirror) = seeded_network();
    let manifest = format!(
        "{}{}",
        return_bytes_manifest(&mirror),
        plugin_entry(
            "shapes",
            "fixtures/recorder",
            "[plugins.config]\ntag = \"S\"\nhooksOnly = true\nechoParams = true\nstages = [\"post-params-normalization\", \"post-core-action\"]\n",
        )
    );
    let (host, logs) = start(&manifest);
    let model = codegen::model(&hak_host::tools::ToolRegistry::native().shapes());
    let roots: BTreeMap<&str, &codegen::ToolTypes> =
        model.tools.iter().map(|t| (t.method, t)).collect();
    let name = |ty: &Ty| match ty {
        Ty::Named(name) => name.clone(),
        other => panic!("a root type is declared, not {other:?}"),
    };
    let mut session = host.default_session();
    let mut samples = Vec::new();
    // The recorder hands each stage JSON over as a log line, which the host cuts at 4 KiB:
    // the long topic messages of the chunk cases are left to the kit comparison.
    let short = cases(&seed)
        .into_iter()
        .filter(|(_, params)| params.to_string().len() < 1024);
    for (tool, params) in short {
        let _ = logs.take();
        session.call(tool, &params.to_string()).unwrap();
        let lines = logs.take();
        let roots = roots[tool];
        for (i, line) in lines.iter().enumerate() {
            let Some(stage) = line.strip_prefix("S hook ") else {
                continue;
            };
            let params: Value = serde_json::from_str(&lines[i + 1]).unwrap();
            let mut add = |part: &'static str, ty: &Ty| {
                samples.push(Sample {
                    method: tool.to_owned(),
                    part,
                    type_name: name(ty),
                    value: params[part].clone(),
                });
            };
            if stage.starts_with("post-params-normalization") {
                add("rawParams", &roots.raw_params);
                add("normalisedParams", &roots.normalised_params);
            } else if stage.starts_with("post-core-action") {
                add("coreActionResult", &roots.core_action_result);
            }
        }
    }
    samples
}

fn check_typescript(samples: &[Sample], dir: &std::path::Path) {
    let sdk = root().join("guest-sdk/js");
    let tsc = sdk.join("node_modules/typescript/bin/tsc");
    assert!(tsc.exists(), "no tsc: run npm ci in guest-sdk/js");
    let mut text = format!(
        "import type * as T from {:?};\nimport type {{ StageInput }} from {:?};\n\
         declare const input: StageInput;\n\
         // The SDK's typed accessor reaches the generated types.\n\
         export const amount: string | undefined = input.paramsFor('transfer_hbar_tool')?.normalisedParams?.hbarTransfers[0]?.amount;\n",
        sdk.join("src/tools.js").display().to_string(),
        sdk.join("src/index.js").display().to_string()
    );
    for (i, s) in samples.iter().enumerate() {
        text.push_str(&format!(
            "// {} {}\nexport const v{i}: T.{} = {};\n",
            s.method, s.part, s.type_name, s.value
        ));
    }
    let file = dir.join("check.ts");
    std::fs::write(&file, text).unwrap();
    let out = Command::new("node")
        .arg(&tsc)
        .args([
            "--strict", "--noEmit", "--module", "nodenext", "--target", "es2022",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the recorded stage JSON does not fit tools.d.ts ({}):\n{}",
        file.display(),
        String::from_utf8_lossy(&out.stdout)
    );
}

fn check_go(samples: &[Sample], dir: &std::path::Path) {
    let module = dir.join("go-check");
    std::fs::create_dir_all(&module).unwrap();
    std::fs::write(
        module.join("go.mod"),
        format!(
            "module shapecheck\n\ngo 1.27\n\nrequire hak.local/guest v0.0.0\n\nreplace hak.local/guest => {}\n",
            root().join("guest-sdk/go").display()
        ),
    )
    .unwrap();
    let values: Vec<String> = samples.iter().map(|s| s.value.to_string()).collect();
    std::fs::write(
        module.join("samples.json"),
        serde_json::to_string(&values).unwrap(),
    )
    .unwrap();
    let mut main = String::from(
        r#"package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	"hak.local/guest/tools"
)

//go:embed samples.json
var samplesJSON []byte

var failed bool

func check[T any](label string, text string) {
	var v T
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		fmt.Printf("%s: %v\n  %s\n", label, err, text)
		failed = true
		return
	}
	back, err := json.Marshal(&v)
	if err != nil {
		fmt.Printf("%s: encode: %v\n", label, err)
		failed = true
		return
	}
	var want, got any
	_ = json.Unmarshal([]byte(text), &want)
	_ = json.Unmarshal(back, &got)
	if !reflect.DeepEqual(want, got) {
		fmt.Printf("%s: decodes and encodes to different JSON\n  in  %s\n  out %s\n", label, text, back)
		failed = true
	}
}

func main() {
	var samples []string
	if err := json.Unmarshal(samplesJSON, &samples); err != nil {
		panic(err)
	}
"#,
    );
    for (i, s) in samples.iter().enumerate() {
        main.push_str(&format!(
            "\tcheck[tools.{}](\"{} {}\", samples[{i}])\n",
            s.type_name, s.method, s.part
        ));
    }
    main.push_str("\tif failed {\n\t\tos.Exit(1)\n\t}\n}\n");
    std::fs::write(module.join("main.go"), main).unwrap();
    let out = Command::new(go())
        .args(["run", "."])
        .current_dir(&module)
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", "local")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the recorded stage JSON does not fit tools.go:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs node, Go and npm ci in guest-sdk/js (scripts/install-deps.sh); scripts/test.sh runs it"]
fn the_generated_types_hold_every_tools_real_stage_json() {
    let samples = recorded_samples();
    let tools: std::collections::BTreeSet<&str> =
        samples.iter().map(|s| s.method.as_str()).collect();
    assert_eq!(tools.len(), 44, "every tool was recorded: {tools:?}");
    for part in ["rawParams", "normalisedParams", "coreActionResult"] {
        let covered = samples
            .iter()
            .filter(|s| s.part == part)
            .map(|s| s.method.as_str())
            .collect::<std::collections::BTreeSet<_>>();
        assert_eq!(covered.len(), 44, "{part} recorded for every tool");
    }
    let dir = root().join("target/test-tmp/shapes");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    check_typescript(&samples, &dir);
    check_go(&samples, &dir);
    check_python(&samples, &dir);
}

/// Every sample against the TypedDict the Python SDK ships (`hak_guest.tools`): keys required
/// and allowed, value types, literals, nullability, recursively.
fn check_python(samples: &[Sample], dir: &std::path::Path) {
    let cases: Vec<Value> = samples
        .iter()
        .map(|s| serde_json::json!([format!("{} {}", s.method, s.part), s.type_name, s.value]))
        .collect();
    let file = dir.join("python-samples.json");
    std::fs::write(&file, serde_json::to_string(&cases).unwrap()).unwrap();
    let out = Command::new("python3")
        .arg("-c")
        .arg(PY_CHECK)
        .arg(&file)
        .env("PYTHONPATH", root().join("guest-sdk/python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the recorded stage JSON does not fit hak_guest/tools.py:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const PY_CHECK: &str = r#"
import json, sys, typing
from hak_guest import tools

def fits(value, ty, at, errors):
    origin, args = typing.get_origin(ty), typing.get_args(ty)
    if ty is typing.Any:
        return
    if typing.is_typeddict(ty):
        if not isinstance(value, dict):
            errors.append(f"{at}: {value!r} is not an object"); return
        hints = typing.get_type_hints(ty)
        for key in ty.__required_keys__ - value.keys():
            errors.append(f"{at}: missing {key}")
        for key, item in value.items():
            if key not in hints:
                errors.append(f"{at}: undocumented key {key}")
            else:
                fits(item, hints[key], f"{at}.{key}", errors)
    elif origin is typing.Union:
        trial = []
        for option in args:
            found = []
            fits(value, option, at, found)
            if not found:
                return
            trial += found
        errors.append(f"{at}: {value!r} fits none of {ty}: {trial}")
    elif origin is typing.Literal:
        if value not in args:
            errors.append(f"{at}: {value!r} not in {args}")
    elif origin in (list, typing.List):
        if not isinstance(value, list):
            errors.append(f"{at}: {value!r} is not a list"); return
        for i, item in enumerate(value):
            fits(item, args[0], f"{at}[{i}]", errors)
    elif origin in (dict, typing.Dict):
        if not isinstance(value, dict):
            errors.append(f"{at}: {value!r} is not an object")
    elif ty is type(None):
        if value is not None:
            errors.append(f"{at}: {value!r} is not null")
    elif ty is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            errors.append(f"{at}: {value!r} is not a number")
    elif ty is int:
        if isinstance(value, bool) or not isinstance(value, int):
            errors.append(f"{at}: {value!r} is not an integer")
    elif ty in (str, bool):
        if not isinstance(value, ty):
            errors.append(f"{at}: {value!r} is not a {ty.__name__}")
    else:
        errors.append(f"{at}: unknown type {ty}")

errors = []
for label, name, value in json.load(open(sys.argv[1])):
    fits(value, getattr(tools, name), label, errors)
print(chr(10).join(errors[:50]))
sys.exit(1 if errors else 0)
"#;
