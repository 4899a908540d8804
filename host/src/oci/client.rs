//! Push, pull and sign plugins against an OCI registry, with oci-client. Registry auth comes
//! from `$HAK_REGISTRY_USERNAME` / `$HAK_REGISTRY_PASSWORD`, else the usual docker config
//! (`$DOCKER_CONFIG/config.json` or `~/.docker/config.json`, credential helpers included),
//! else anonymous. HTTPS always, but for loopback registries and the ones named plain.
//!
//! The calls are synchronous: each runs on a short-lived thread of its own with a
//! current-thread runtime, so they work from the CLI, from a host being built and from a
//! follower thread alike, inside or outside a tokio runtime.

use super::artifact::{self, sha256_digest, Built, MAX_MANIFEST_BYTES};
use super::reference::OciRef;
use super::signature::{self, SignatureDocument};
use super::OciError;
use ed25519_dalek::{SigningKey, VerifyingKey};
use futures_util::StreamExt;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{DigestError, OciDistributionError, OciErrorCode};
use oci_client::manifest::{OciDescriptor, OCI_IMAGE_MEDIA_TYPE};
use oci_client::secrets::RegistryAuth;
use oci_client::Client;
use std::collections::BTreeMap;
use std::time::Duration;

/// How long a registry may take to accept a connection, and to answer one request.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A plugin pulled and checked: the manifest's digest recomputed here, its one Wasm layer
/// downloaded within the size limit and matching its digest, and the signature that verified
/// (when one was asked for).
#[derive(Clone, Debug)]
pub struct Pulled {
    pub digest: String,
    pub manifest: Vec<u8>,
    pub component: Vec<u8>,
    pub layer_digest: String,
    /// The signature document that verified, if signatures were checked.
    pub signature: Option<Vec<u8>>,
    pub annotations: BTreeMap<String, String>,
}

/// Which signatures a pull must carry.
#[derive(Clone, Copy, Debug)]
pub enum Verify<'a> {
    /// One of these keys must have signed the manifest digest.
    Required(&'a [VerifyingKey]),
    /// Not checked (the caller says so to its user).
    Unchecked,
}

pub struct OciClient {
    plain_http: Vec<String>,
    max_component: usize,
}

fn registry_error(reference: &OciRef, e: OciDistributionError) -> OciError {
    OciError::Registry {
        reference: reference.to_string(),
        message: crate::logging::one_line(&e.to_string()).into_owned(),
    }
}

/// Whether the registry said "no such manifest or repository".
fn is_not_found(e: &OciDistributionError) -> bool {
    match e {
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        OciDistributionError::ServerError { code, .. } => *code == 404,
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|e| {
            matches!(
                e.code,
                OciErrorCode::ManifestUnknown | OciErrorCode::NameUnknown | OciErrorCode::NotFound
            )
        }),
        _ => false,
    }
}

/// A manifest is read whole (oci-client buffers it); one past the limit is refused.
fn manifest_within_limit(
    reference: &OciRef,
    what: &'static str,
    len: usize,
) -> Result<(), OciError> {
    if len > MAX_MANIFEST_BYTES {
        return Err(OciError::TooLarge {
            reference: reference.to_string(),
            what,
            size: len as u64,
            limit: MAX_MANIFEST_BYTES as u64,
        });
    }
    Ok(())
}

/// Run `fut` to completion on a thread of its own.
fn run<T: Send>(fut: impl std::future::Future<Output = T> + Send) -> T {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread runtime starts")
                    .block_on(fut)
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// The credentials for `registry`.
fn auth(registry: &str) -> RegistryAuth {
    if let (Ok(user), Ok(password)) = (
        std::env::var("HAK_REGISTRY_USERNAME"),
        std::env::var("HAK_REGISTRY_PASSWORD"),
    ) {
        return RegistryAuth::Basic(user, password);
    }
    match docker_credential::get_credential(registry) {
        Ok(docker_credential::DockerCredential::UsernamePassword(user, password)) => {
            RegistryAuth::Basic(user, password)
        }
        Ok(docker_credential::DockerCredential::IdentityToken(token)) => {
            RegistryAuth::Bearer(token)
        }
        Err(_) => RegistryAuth::Anonymous,
    }
}

impl OciClient {
    /// A client that reaches the registries in `plain_http` (and loopback ones) over HTTP.
    pub fn new(plain_http: Vec<String>) -> Self {
        OciClient {
            plain_http,
            max_component: crate::model::limits::MAX_COMPONENT_BYTES,
        }
    }

    fn client(&self, reference: &OciRef) -> (Client, RegistryAuth) {
        let protocol = if reference.plain_http(&self.plain_http) {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        };
        let client = Client::new(ClientConfig {
            protocol,
            connect_timeout: Some(CONNECT_TIMEOUT),
            read_timeout: Some(READ_TIMEOUT),
            ..Default::default()
        });
        (client, auth(reference.registry()))
    }

    /// Push `built` (the artifact of `component`) to `reference`'s repository under its tag;
    /// the manifest digest.
    pub fn push(
        &self,
        reference: &OciRef,
        built: &Built,
        component: &[u8],
    ) -> Result<String, OciError> {
        let (client, auth) = self.client(reference);
        let image = reference.inner();
        let err = |e| registry_error(reference, e);
        run(async {
            client
                .store_auth_if_needed(image.resolve_registry(), &auth)
                .await;
            client
                .push_blob(image, component.to_vec(), &built.layer_digest)
                .await
                .map_err(err)?;
            client
                .push_blob(image, built.config.clone(), &built.config_digest)
                .await
                .map_err(err)?;
            client
                .push_manifest_raw(
                    image,
                    built.manifest.clone(),
                    OCI_IMAGE_MEDIA_TYPE.parse().expect("a valid header value"),
                )
                .await
                .map_err(err)?;
            Ok(built.digest.clone())
        })
    }

    /// The digest the registry has behind `reference` now (a HEAD request for a tag).
    pub fn digest_of(&self, reference: &OciRef) -> Result<String, OciError> {
        if let Some(digest) = reference.digest() {
            return Ok(digest.to_owned());
        }
        let (client, auth) = self.client(reference);
        let digest = run(client.fetch_manifest_digest(reference.inner(), &auth))
            .map_err(|e| registry_error(reference, e))?;
        artifact::valid_digest(&digest).map_err(|reason| OciError::NotAPlugin {
            reference: reference.to_string(),
            reason,
        })?;
        Ok(digest)
    }

    /// Sign the manifest `digest` in `reference`'s repository with `key`: the signature
    /// artifact at `sha256-<hex>.sig` gains (or replaces) this key's document; others stay.
    pub fn sign(&self, reference: &OciRef, key: &SigningKey) -> Result<String, OciError> {
        let digest = self.digest_of(reference)?;
        let (client, auth) = self.client(reference);
        let pinned = reference.at_digest(&digest);
        let sig_ref = reference.at_tag(&signature::tag_for(&digest));
        let err = |e| registry_error(reference, e);
        let document = SignatureDocument::sign(key, &digest);
        run(async {
            client
                .store_auth_if_needed(pinned.inner().resolve_registry(), &auth)
                .await;
            let (manifest, _) = client
                .pull_manifest_raw(pinned.inner(), &auth, &[OCI_IMAGE_MEDIA_TYPE])
                .await
                .map_err(err)?;
            let mut documents = match self.documents_at(&client, &sig_ref).await {
                Ok(docs) => docs,
                Err(OciError::Unsigned { .. }) => Vec::new(),
                Err(e) => return Err(e),
            };
            documents.retain(|d| {
                serde_json::from_slice::<SignatureDocument>(d)
                    .map_or(true, |d| d.public_key != document.public_key)
            });
            documents.push(document.to_bytes());
            documents.truncate(signature::MAX_SIGNERS);
            for d in &documents {
                client
                    .push_blob(sig_ref.inner(), d.clone(), &sha256_digest(d))
                    .await
                    .map_err(err)?;
            }
            client
                .push_blob(
                    sig_ref.inner(),
                    signature::EMPTY_CONFIG.to_vec(),
                    &sha256_digest(signature::EMPTY_CONFIG),
                )
                .await
                .map_err(err)?;
            let body = signature::manifest(&digest, manifest.len(), &documents);
            client
                .push_manifest_raw(
                    sig_ref.inner(),
                    body,
                    OCI_IMAGE_MEDIA_TYPE.parse().expect("a valid header value"),
                )
                .await
                .map_err(err)?;
            Ok(sig_ref.to_string())
        })
    }

    /// The signer documents of the signature artifact at `sig_ref` (`Unsigned` when there is
    /// none).
    async fn documents_at(
        &self,
        client: &Client,
        sig_ref: &OciRef,
    ) -> Result<Vec<Vec<u8>>, OciError> {
        let auth = auth(sig_ref.registry());
        let manifest = match client
            .pull_manifest_raw(sig_ref.inner(), &auth, &[OCI_IMAGE_MEDIA_TYPE])
            .await
        {
            Ok((manifest, _)) => manifest,
            Err(e) if is_not_found(&e) => {
                return Err(OciError::Unsigned {
                    reference: sig_ref.to_string(),
                    digest: String::new(),
                })
            }
            Err(e) => return Err(registry_error(sig_ref, e)),
        };
        manifest_within_limit(sig_ref, "the signature manifest", manifest.len())?;
        let mut documents = Vec::new();
        for layer in signature::layers(&sig_ref.to_string(), &manifest)? {
            documents.push(
                self.blob(client, sig_ref, &layer, signature::MAX_DOCUMENT_BYTES)
                    .await?,
            );
        }
        Ok(documents)
    }

    /// Every signer document about `digest`: the `.sig` tag's, else the referrers API's.
    async fn signatures(
        &self,
        client: &Client,
        reference: &OciRef,
        digest: &str,
    ) -> Result<Vec<Vec<u8>>, OciError> {
        let sig_ref = reference.at_tag(&signature::tag_for(digest));
        match self.documents_at(client, &sig_ref).await {
            Err(OciError::Unsigned { .. }) => {}
            other => return other,
        }
        // Registries with the referrers API list signatures by subject (oci-client falls back
        // to the referrers tag schema where the API is missing; none is an empty list).
        let auth = auth(reference.registry());
        client
            .store_auth_if_needed(reference.inner().resolve_registry(), &auth)
            .await;
        let Ok(index) = client
            .pull_referrers(
                reference.at_digest(digest).inner(),
                Some(signature::ARTIFACT_TYPE),
            )
            .await
        else {
            return Ok(Vec::new());
        };
        let mut documents = Vec::new();
        for entry in index.manifests.iter().take(signature::MAX_SIGNERS) {
            if artifact::valid_digest(&entry.digest).is_err() {
                continue;
            }
            match self
                .documents_at(client, &reference.at_digest(&entry.digest))
                .await
            {
                Ok(mut docs) => documents.append(&mut docs),
                Err(OciError::Unsigned { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(documents)
    }

    /// One blob, at most `max` bytes, checked against its digest while it streams.
    async fn blob(
        &self,
        client: &Client,
        reference: &OciRef,
        layer: &OciDescriptor,
        max: usize,
    ) -> Result<Vec<u8>, OciError> {
        let too_large = |size: u64| OciError::TooLarge {
            reference: reference.to_string(),
            what: "a blob",
            size,
            limit: max as u64,
        };
        if layer.size < 0 || layer.size as u64 > max as u64 {
            return Err(too_large(layer.size.max(0) as u64));
        }
        let mut stream = client
            .pull_blob_stream(reference.inner(), layer)
            .await
            .map_err(|e| registry_error(reference, e))?;
        let mut bytes = Vec::with_capacity(layer.size as usize);
        while let Some(chunk) = stream.next().await {
            // oci-client checks the digest while it streams: a mismatch ends the stream.
            let chunk = chunk.map_err(|e| {
                if e.get_ref().is_some_and(|inner| inner.is::<DigestError>()) {
                    OciError::DigestMismatch {
                        reference: reference.to_string(),
                        expected: layer.digest.clone(),
                        actual: e.to_string(),
                    }
                } else {
                    OciError::Registry {
                        reference: reference.to_string(),
                        message: e.to_string(),
                    }
                }
            })?;
            if bytes.len() + chunk.len() > max {
                return Err(too_large((bytes.len() + chunk.len()) as u64));
            }
            bytes.extend_from_slice(&chunk);
        }
        let actual = sha256_digest(&bytes);
        if actual != layer.digest || bytes.len() as i64 != layer.size {
            return Err(OciError::DigestMismatch {
                reference: reference.to_string(),
                expected: format!("{} ({} bytes)", layer.digest, layer.size),
                actual: format!("{actual} ({} bytes)", bytes.len()),
            });
        }
        Ok(bytes)
    }

    /// Pull the plugin at `reference`: the manifest (its digest recomputed, and equal to the
    /// pinned one), its checks, the signature (before the component is downloaded), then the
    /// component itself.
    pub fn pull(&self, reference: &OciRef, verify: Verify<'_>) -> Result<Pulled, OciError> {
        let (client, auth) = self.client(reference);
        let shown = reference.to_string();
        run(async {
            let (manifest, _) = client
                .pull_manifest_raw(reference.inner(), &auth, &[OCI_IMAGE_MEDIA_TYPE])
                .await
                .map_err(|e| registry_error(reference, e))?;
            manifest_within_limit(reference, "the manifest", manifest.len())?;
            let digest = sha256_digest(&manifest);
            if let Some(pinned) = reference.digest() {
                if pinned != digest {
                    return Err(OciError::DigestMismatch {
                        reference: shown.clone(),
                        expected: pinned.to_owned(),
                        actual: digest,
                    });
                }
            }
            let checked = artifact::check(&shown, &manifest, self.max_component)?;
            let signature = match verify {
                Verify::Required(trusted) => {
                    let documents = self.signatures(&client, reference, &digest).await?;
                    Some(signature::verify_any(&shown, &digest, &documents, trusted)?)
                }
                Verify::Unchecked => None,
            };
            let pinned = reference.at_digest(&digest);
            let component = self
                .blob(&client, &pinned, &checked.layer, self.max_component)
                .await?;
            Ok(Pulled {
                digest,
                manifest: manifest.to_vec(),
                component,
                layer_digest: checked.layer.digest,
                signature,
                annotations: checked.annotations,
            })
        })
    }
}
