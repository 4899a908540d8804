//! The content-addressed cache of pulled plugins: `sha256/<manifest hex>/` holds the manifest,
//! the component and, per repository, the signature that verified it there
//! (`signature-<hash of REGISTRY/REPO>.json`: the same manifest may be signed for several);
//! `tags/<hash of reference>` holds the digest a followed tag pointed to when last resolved,
//! so a host starts offline, and `versions/<hash of reference>` the highest signed version
//! it has resolved to, so a restart does not forget what a rollback is. Every read checks
//! again what it reads (the manifest's digest is its directory, the component's digest the
//! manifest's layer, the signature against the trusted keys and the repository): a file
//! changed in the cache is refused, not loaded. Writes go to a temporary name and are renamed.

use super::artifact::{self, sha256_digest};
use super::client::{Pulled, Verify};
use super::reference::OciRef;
use super::signature::{self, Signed};
use super::version::PluginVersion;
use super::OciError;
use std::path::{Path, PathBuf};

pub struct OciCache {
    dir: PathBuf,
}

const MANIFEST: &str = "manifest.json";
const COMPONENT: &str = "plugin.wasm";
const MAX_SIGNATURE_FILE: usize = 2 * signature::MAX_PAYLOAD_BYTES;

impl OciCache {
    pub fn new(dir: PathBuf) -> Self {
        OciCache { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn error(&self, path: &Path, message: impl std::fmt::Display) -> OciError {
        OciError::Cache {
            path: path.display().to_string(),
            message: message.to_string(),
        }
    }

    fn entry(&self, digest: &str) -> PathBuf {
        self.dir
            .join("sha256")
            .join(digest.trim_start_matches("sha256:"))
    }

    fn keyed(&self, dir: &str, reference: &OciRef) -> PathBuf {
        let key = sha256_digest(reference.to_string().as_bytes());
        self.dir.join(dir).join(key.trim_start_matches("sha256:"))
    }

    fn tag_file(&self, reference: &OciRef) -> PathBuf {
        self.keyed("tags", reference)
    }

    fn version_file(&self, reference: &OciRef) -> PathBuf {
        self.keyed("versions", reference)
    }

    /// The file, in a manifest's entry, of the signature that verified it for `reference`'s
    /// repository.
    fn signature_name(reference: &OciRef) -> String {
        let repository = sha256_digest(signature::docker_reference(reference).as_bytes());
        format!("signature-{}.json", &repository["sha256:".len()..][..16])
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> Result<(), OciError> {
        let parent = path.parent().expect("cache paths have a parent");
        std::fs::create_dir_all(parent).map_err(|e| self.error(parent, e))?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes).map_err(|e| self.error(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| self.error(path, e))
    }

    /// Keep a pulled plugin (and, for a followed tag, where the tag pointed).
    pub fn store(&self, reference: &OciRef, pulled: &Pulled) -> Result<(), OciError> {
        artifact::valid_digest(&pulled.digest).map_err(|e| self.error(&self.dir, e))?;
        let entry = self.entry(&pulled.digest);
        self.write(&entry.join(COMPONENT), &pulled.component)?;
        if let Some(verified) = &pulled.signature {
            self.write(
                &entry.join(Self::signature_name(reference)),
                &verified.signed.to_bytes(),
            )?;
        }
        // The manifest last: an entry without one is incomplete and never read.
        self.write(&entry.join(MANIFEST), &pulled.manifest)?;
        if reference.is_followed() {
            let line = format!("{}\n{reference}\n", pulled.digest);
            self.write(&self.tag_file(reference), line.as_bytes())?;
            if let Some(version) = pulled.version() {
                if self.highest_version(reference).is_none_or(|h| *version > h) {
                    let line = format!("{version}\n{reference}\n");
                    self.write(&self.version_file(reference), line.as_bytes())?;
                }
            }
        }
        Ok(())
    }

    /// The highest signed version `reference`'s tag has resolved to here.
    pub fn highest_version(&self, reference: &OciRef) -> Option<PluginVersion> {
        let text = std::fs::read_to_string(self.version_file(reference)).ok()?;
        let mut lines = text.lines();
        let version = PluginVersion::parse(lines.next()?)?;
        (lines.next() == Some(reference.to_string().as_str())).then_some(version)
    }

    /// The digest `reference`'s tag pointed to when last resolved.
    pub fn last_digest(&self, reference: &OciRef) -> Option<String> {
        let text = std::fs::read_to_string(self.tag_file(reference)).ok()?;
        let mut lines = text.lines();
        let digest = lines.next()?.to_owned();
        (lines.next() == Some(reference.to_string().as_str())
            && artifact::valid_digest(&digest).is_ok())
        .then_some(digest)
    }

    /// The cached plugin with manifest `digest`, checked again; `Ok(None)` when not cached.
    pub fn load(
        &self,
        reference: &OciRef,
        digest: &str,
        verify: Verify<'_>,
    ) -> Result<Option<Pulled>, OciError> {
        artifact::valid_digest(digest).map_err(|e| self.error(&self.dir, e))?;
        let entry = self.entry(digest);
        let read = |name: &str, max: usize| -> Result<Option<Vec<u8>>, OciError> {
            crate::intake::read(&self.dir, &entry.join(name), max).map_err(|e| OciError::Cache {
                path: entry.join(name).display().to_string(),
                message: e,
            })
        };
        let Some(manifest) = read(MANIFEST, artifact::MAX_MANIFEST_BYTES)? else {
            return Ok(None);
        };
        let shown = reference.to_string();
        let tampered = |what: &str| OciError::Cache {
            path: entry.display().to_string(),
            message: format!("{what} does not match its digest; refused (pull it again)"),
        };
        if sha256_digest(&manifest) != digest {
            return Err(tampered("the manifest"));
        }
        let checked =
            artifact::check(&shown, &manifest, crate::model::limits::MAX_COMPONENT_BYTES)?;
        let component = read(COMPONENT, crate::model::limits::MAX_COMPONENT_BYTES)?
            .ok_or_else(|| tampered("the component (missing)"))?;
        if sha256_digest(&component) != checked.layer.digest {
            return Err(tampered("the component"));
        }
        let signature = match verify {
            Verify::Required(trusted) => {
                let name = Self::signature_name(reference);
                let stored = match read(&name, MAX_SIGNATURE_FILE)? {
                    Some(bytes) => {
                        vec![Signed::from_bytes(&bytes).map_err(|e| OciError::Cache {
                            path: entry.join(&name).display().to_string(),
                            message: format!("not a stored signature: {e}"),
                        })?]
                    }
                    None => Vec::new(),
                };
                Some(signature::verify(reference, digest, &stored, trusted)?)
            }
            Verify::Unchecked => None,
        };
        Ok(Some(Pulled {
            digest: digest.to_owned(),
            manifest,
            component,
            layer_digest: checked.layer.digest,
            signature,
            annotations: checked.annotations,
        }))
    }
}
