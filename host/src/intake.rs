//! Reading files someone else may control — the watched plugins directory — without being
//! abused by them: only regular files (a FIFO would block the reader forever, a device would
//! never end), nothing reached through a symlink that leaves the directory, the size checked
//! from metadata before a byte is read (and the read itself capped), and error messages that
//! never quote what a file contains.

use std::io::Read;
use std::path::Path;

/// Largest `<name>.toml` sidecar read.
pub const MAX_SIDECAR_BYTES: usize = 64 * 1024;
/// Largest `<name>.wasm.sig` / `<name>.toml.sig` read.
pub const MAX_SIGNATURE_BYTES: usize = 4 * 1024;

/// The bytes of `path` (inside `dir`), `Ok(None)` when it does not exist, or why it is refused.
pub fn read(dir: &Path, path: &Path, max: usize) -> Result<Option<Vec<u8>>, String> {
    let shown = path.display();
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{shown}: cannot read: {e}")),
    };
    if link.file_type().is_symlink() {
        let target = std::fs::canonicalize(path)
            .map_err(|e| format!("{shown}: a symlink that does not resolve: {e}"))?;
        let root = std::fs::canonicalize(dir)
            .map_err(|e| format!("{}: cannot resolve: {e}", dir.display()))?;
        if !target.starts_with(&root) {
            return Err(format!(
                "{shown}: a symlink out of the plugins directory; refused"
            ));
        }
    }
    let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{shown}: not a regular file (a FIFO, socket, device or directory); refused"
        ));
    }
    if meta.len() > max as u64 {
        return Err(format!(
            "{shown}: {} bytes, more than the {max}-byte limit; refused unread",
            meta.len()
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(max as u64 + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if bytes.len() > max {
        return Err(format!(
            "{shown}: grew past the {max}-byte limit while read; refused"
        ));
    }
    Ok(Some(bytes))
}

/// A settings parse error that says where and why, but not what the file says there.
pub fn toml_error(path: &Path, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => format!(
            "{}: invalid settings at byte {}: {}",
            path.display(),
            span.start,
            e.message()
        ),
        None => format!("{}: invalid settings: {}", path.display(), e.message()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_symlinks_out_and_oversized_files_are_refused_unread() {
        let dir = std::env::temp_dir().join(format!("hak-intake-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("x.wasm");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert!(read(&dir, &fifo, 100)
                .unwrap_err()
                .contains("not a regular file"));
        }
        let secret = std::env::temp_dir().join(format!("hak-secret-{}", std::process::id()));
        std::fs::write(&secret, "root:password").unwrap();
        let link = dir.join("y.toml");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let err = read(&dir, &link, 100).unwrap_err();
        assert!(
            err.contains("symlink out of the plugins directory"),
            "{err}"
        );
        assert!(!err.contains("password"));
        let big = dir.join("big.wasm");
        std::fs::write(&big, vec![0u8; 101]).unwrap();
        assert!(read(&dir, &big, 100)
            .unwrap_err()
            .contains("more than the 100-byte limit"));
        assert_eq!(read(&dir, &dir.join("none.wasm"), 100).unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(&secret);
    }
}
