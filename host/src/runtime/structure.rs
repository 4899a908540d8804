//! A component's shape, checked before it is compiled: compiling is the expensive step an
//! uploader controls (a 2.7 MB component of 100,000 tiny functions took seconds and 600 MB of
//! compiler memory), so counts that no real plugin needs are refused up front, in one cheap
//! pass of `wasmparser`. The limits leave the project's own plugins ample room: the largest,
//! a componentize-js plugin (~12 MB, the JS engine inside), is checked in the tests.

use wasmparser::{Parser, Payload};

/// Function bodies over all core modules of one component.
pub const MAX_FUNCTIONS: usize = 50_000;
/// Locals declared by one function.
pub const MAX_LOCALS: u64 = 50_000;
/// Core modules inside one component.
pub const MAX_MODULES: usize = 64;

/// What the check found: (function bodies, core modules).
pub fn check(bytes: &[u8]) -> Result<(usize, usize), String> {
    let (mut functions, mut modules) = (0usize, 0usize);
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(|e| format!("malformed: {e}"))? {
            Payload::ModuleSection { .. } => {
                modules += 1;
                if modules > MAX_MODULES {
                    return Err(format!("more than {MAX_MODULES} core modules"));
                }
            }
            Payload::CodeSectionEntry(body) => {
                functions += 1;
                if functions > MAX_FUNCTIONS {
                    return Err(format!(
                        "more than {MAX_FUNCTIONS} functions; refused before compiling"
                    ));
                }
                let mut locals = 0u64;
                let reader = body
                    .get_locals_reader()
                    .map_err(|e| format!("malformed: {e}"))?;
                for local in reader {
                    let (count, _) = local.map_err(|e| format!("malformed: {e}"))?;
                    locals += u64::from(count);
                    if locals > MAX_LOCALS {
                        return Err(format!(
                            "a function declares more than {MAX_LOCALS} locals; refused before compiling"
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    Ok((functions, modules))
}
