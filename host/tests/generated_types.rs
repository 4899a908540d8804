//! The SDKs ship the stage JSON types `hak tools --shapes` generates (and docs/ their JSON
//! Schemas): they must be what this host generates, or `scripts/generate-types.sh` was not run.

use hak_host::authoring::codegen::{render, ShapesFormat};
use std::path::Path;

#[test]
fn the_sdks_ship_the_current_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (path, format) in [
        ("guest-sdk/js/src/tools.d.ts", ShapesFormat::Ts),
        ("guest-sdk/go/tools/tools.go", ShapesFormat::Go),
        ("guest-sdk/python/hak_guest/tools.py", ShapesFormat::Py),
        ("docs/tool-shapes.json", ShapesFormat::Json),
    ] {
        let shipped = std::fs::read_to_string(root.join(path)).unwrap_or_default();
        assert!(
            shipped == render(format),
            "{path} is stale: run scripts/generate-types.sh and commit the result"
        );
    }
}
