//! Push, pull and sign plugins against an OCI registry. Registry auth comes from
//! `$HAK_REGISTRY_USERNAME` / `$HAK_REGISTRY_PASSWORD`, else the usual docker config
//! (`$DOCKER_CONFIG/config.json` or `~/.docker/config.json`, credential helpers included),
//! else anonymous. HTTPS always, but for loopback registries and the ones named plain.
//!
//! Everything a registry sends is bounded in size and in time. Blobs stream through
//! oci-client, checked against their size and digest as they come. Manifests (the plugin's
//! and its signatures') are read here, with oci-client's token for the repository: oci-client
//! buffers a manifest whole before anyone can look at its size, so a registry could make a
//! pull hold whatever it sends; here the read stops at the limit. Every request has a total
//! deadline ([`DEFAULT_DEADLINE`], `[oci] timeout_seconds`, `--timeout`): a registry that
//! answers a byte at a time fails the request when it runs out, not at its last byte.
//!
//! The calls are synchronous: each runs on a short-lived thread of its own with a
//! current-thread runtime, so they work from the CLI, from a host being built and from a
//! follower thread alike, inside or outside a tokio runtime.

use super::artifact::{self, sha256_digest, Built, MAX_MANIFEST_BYTES};
use super::reference::OciRef;
use super::signature::{self, Signed, Verified};
use super::version::PluginVersion;
use super::OciError;
use futures_util::StreamExt;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{DigestError, OciDistributionError};
use oci_client::manifest::{OciDescriptor, OCI_IMAGE_MEDIA_TYPE};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, RegistryOperation};
use p256::ecdsa::{SigningKey, VerifyingKey};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

/// How long a registry may take to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one registry request may take, whole, unless the operator says otherwise.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);
/// The manifest media types a manifest request accepts.
const ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";

/// A plugin pulled and checked: the manifest's digest recomputed here, its one Wasm layer
/// downloaded within the size limit and matching its digest, and the signature that verified
/// (when one was asked for).
#[derive(Clone, Debug)]
pub struct Pulled {
    pub digest: String,
    pub manifest: Vec<u8>,
    pub component: Vec<u8>,
    pub layer_digest: String,
    /// The signature that verified, with the version it claims, if signatures were checked.
    pub signature: Option<Verified>,
    pub annotations: BTreeMap<String, String>,
}

impl Pulled {
    /// The release's version, as its verified signature names it.
    pub fn version(&self) -> Option<&PluginVersion> {
        self.signature.as_ref().and_then(|s| s.version.as_ref())
    }
}

/// Which signatures a pull must carry.
#[derive(Clone, Copy, Debug)]
pub enum Verify<'a> {
    /// One of these cosign keys must have signed the manifest digest for this repository.
    Required(&'a [VerifyingKey]),
    /// Not checked (the caller says so to its user).
    Unchecked,
}

pub struct OciClient {
    plain_http: Vec<String>,
    max_component: usize,
    deadline: Duration,
}

/// One operation's connection to a registry: oci-client (auth, blobs, pushes), an HTTP client
/// for bounded manifest reads, and the pull token once fetched.
struct Conn {
    oci: Client,
    http: reqwest::Client,
    auth: RegistryAuth,
    scheme: &'static str,
    deadline: Duration,
    /// The bearer token for pulls (`Some(None)`: the registry wants none).
    token: Mutex<Option<Option<String>>>,
}

fn registry_error(reference: &OciRef, e: impl std::fmt::Display) -> OciError {
    OciError::Registry {
        reference: reference.to_string(),
        message: crate::logging::one_line(&e.to_string()).into_owned(),
    }
}

/// Run `fut` to completion on a thread of its own.
fn run<T: Send>(fut: impl Future<Output = T> + Send) -> T {
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

impl Conn {
    /// `fut`, one registry request about `reference`, within the deadline.
    async fn timed<T>(
        &self,
        reference: &OciRef,
        what: &'static str,
        fut: impl Future<Output = Result<T, OciError>>,
    ) -> Result<T, OciError> {
        tokio::time::timeout(self.deadline, fut)
            .await
            .unwrap_or_else(|_| {
                Err(OciError::Timeout {
                    reference: reference.to_string(),
                    what,
                    seconds: self.deadline.as_secs(),
                })
            })
    }

    fn manifest_url(&self, reference: &OciRef) -> String {
        let image = reference.inner();
        format!(
            "{}://{}/v2/{}/manifests/{}",
            self.scheme,
            image.resolve_registry(),
            image.repository(),
            image.digest().or(image.tag()).unwrap_or("latest")
        )
    }

    /// `request` with the credentials the registry wants for pulls from `reference`.
    async fn authorized(
        &self,
        reference: &OciRef,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, OciError> {
        let known = self.token.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let token = match known {
            Some(token) => token,
            None => {
                let token = self
                    .oci
                    .auth(reference.inner(), &self.auth, RegistryOperation::Pull)
                    .await
                    .map_err(|e| registry_error(reference, e))?;
                *self.token.lock().unwrap_or_else(|e| e.into_inner()) = Some(token.clone());
                token
            }
        };
        Ok(match (token, &self.auth) {
            (Some(token), _) => request.bearer_auth(token),
            (None, RegistryAuth::Basic(user, password)) => request.basic_auth(user, Some(password)),
            (None, _) => request,
        })
    }

    /// A manifest request (`GET` or `HEAD`) for `reference`, sent with the pull credentials.
    async fn send(
        &self,
        method: reqwest::Method,
        reference: &OciRef,
    ) -> Result<reqwest::Response, OciError> {
        let request = self
            .http
            .request(method, self.manifest_url(reference))
            .header(reqwest::header::ACCEPT, ACCEPT);
        self.authorized(reference, request)
            .await?
            .send()
            .await
            .map_err(|e| registry_error(reference, e))
    }

    /// The manifest `reference` names, read up to `max` bytes (`None`: the registry has no
    /// such manifest or repository).
    async fn manifest(
        &self,
        reference: &OciRef,
        what: &'static str,
        max: usize,
    ) -> Result<Option<Vec<u8>>, OciError> {
        self.timed(reference, what, async {
            let mut response = self.send(reqwest::Method::GET, reference).await?;
            let status = response.status();
            if status == reqwest::StatusCode::NOT_FOUND {
                return Ok(None);
            }
            if !status.is_success() {
                return Err(registry_error(reference, format!("{what}: HTTP {status}")));
            }
            let too_large = |size: u64| OciError::TooLarge {
                reference: reference.to_string(),
                what,
                size,
                limit: max as u64,
            };
            if let Some(length) = response.content_length().filter(|l| *l > max as u64) {
                return Err(too_large(length));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| registry_error(reference, e))?
            {
                if body.len() + chunk.len() > max {
                    return Err(too_large((body.len() + chunk.len()) as u64));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Some(body))
        })
        .await
    }

    /// The digest the registry has behind `reference` now: its `Docker-Content-Digest` on a
    /// HEAD request, else the digest of the manifest itself (read within the limit).
    async fn digest_now(&self, reference: &OciRef) -> Result<String, OciError> {
        let head = self.timed(reference, "the manifest's digest", async {
            let response = self.send(reqwest::Method::HEAD, reference).await?;
            let status = response.status();
            if !status.is_success() {
                return Err(registry_error(
                    reference,
                    format!("the manifest: HTTP {status}"),
                ));
            }
            Ok(response
                .headers()
                .get("docker-content-digest")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned))
        });
        let digest = match head.await? {
            Some(digest) => digest,
            None => {
                let manifest = self
                    .manifest(reference, "the manifest", MAX_MANIFEST_BYTES)
                    .await?
                    .ok_or_else(|| registry_error(reference, "the manifest: HTTP 404"))?;
                sha256_digest(&manifest)
            }
        };
        artifact::valid_digest(&digest).map_err(|reason| OciError::NotAPlugin {
            reference: reference.to_string(),
            reason,
        })?;
        Ok(digest)
    }

    /// Every signature stored for manifest `digest` of `reference`'s repository (its
    /// `sha256-<hex>.sig` image), each payload read within its limit.
    async fn signatures(&self, reference: &OciRef, digest: &str) -> Result<Vec<Signed>, OciError> {
        let sig_ref = reference.at_tag(&signature::tag_for(digest));
        let Some(manifest) = self
            .manifest(&sig_ref, "the signature manifest", MAX_MANIFEST_BYTES)
            .await?
        else {
            return Ok(Vec::new());
        };
        let mut signatures = Vec::new();
        for (layer, sig) in signature::layers(&sig_ref, &manifest)? {
            let payload = self
                .blob(&sig_ref, &layer, signature::MAX_PAYLOAD_BYTES)
                .await?;
            signatures.push(Signed {
                payload,
                signature: sig,
            });
        }
        Ok(signatures)
    }

    /// One blob, at most `max` bytes, checked against its digest while it streams.
    async fn blob(
        &self,
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
        self.timed(reference, "a blob", async {
            self.oci
                .store_auth_if_needed(reference.inner().resolve_registry(), &self.auth)
                .await;
            let mut stream = self
                .oci
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
                        registry_error(reference, e)
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
        })
        .await
    }

    /// Upload `bytes` as a blob of `reference`'s repository.
    async fn push_blob(&self, reference: &OciRef, bytes: Vec<u8>) -> Result<(), OciError> {
        let digest = sha256_digest(&bytes);
        self.timed(reference, "a blob upload", async {
            self.oci
                .push_blob(reference.inner(), bytes, &digest)
                .await
                .map(|_| ())
                .map_err(|e| registry_error(reference, e))
        })
        .await
    }

    /// Store `manifest` (an OCI image manifest) at `reference`.
    async fn push_manifest(&self, reference: &OciRef, manifest: Vec<u8>) -> Result<(), OciError> {
        self.timed(reference, "a manifest upload", async {
            self.oci
                .push_manifest_raw(
                    reference.inner(),
                    manifest,
                    OCI_IMAGE_MEDIA_TYPE.parse().expect("a valid header value"),
                )
                .await
                .map(|_| ())
                .map_err(|e: OciDistributionError| registry_error(reference, e))
        })
        .await
    }
}

impl OciClient {
    /// A client that reaches the registries in `plain_http` (and loopback ones) over HTTP,
    /// giving each request [`DEFAULT_DEADLINE`].
    pub fn new(plain_http: Vec<String>) -> Self {
        OciClient {
            plain_http,
            max_component: crate::model::limits::MAX_COMPONENT_BYTES,
            deadline: DEFAULT_DEADLINE,
        }
    }

    /// The same client, giving each registry request `deadline` in all.
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    fn conn(&self, reference: &OciRef) -> Result<Conn, OciError> {
        let plain = reference.plain_http(&self.plain_http);
        let oci = Client::new(ClientConfig {
            protocol: if plain {
                ClientProtocol::Http
            } else {
                ClientProtocol::Https
            },
            connect_timeout: Some(CONNECT_TIMEOUT),
            // The deadline is `Conn::timed`'s, which says which request ran out; a read
            // timeout firing first would only say "error sending request".
            read_timeout: Some(self.deadline + CONNECT_TIMEOUT),
            ..Default::default()
        });
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| registry_error(reference, e))?;
        Ok(Conn {
            oci,
            http,
            auth: auth(reference.registry()),
            scheme: if plain { "http" } else { "https" },
            deadline: self.deadline,
            token: Mutex::new(None),
        })
    }

    /// Push `built` (the artifact of `component`) to `reference`'s repository under its tag;
    /// the manifest digest.
    pub fn push(
        &self,
        reference: &OciRef,
        built: &Built,
        component: &[u8],
    ) -> Result<String, OciError> {
        let conn = self.conn(reference)?;
        run(async {
            conn.oci
                .store_auth_if_needed(reference.inner().resolve_registry(), &conn.auth)
                .await;
            conn.push_blob(reference, component.to_vec()).await?;
            conn.push_blob(reference, built.config.clone()).await?;
            conn.push_manifest(reference, built.manifest.clone())
                .await?;
            Ok(built.digest.clone())
        })
    }

    /// The digest the registry has behind `reference` now (a HEAD request for a tag).
    pub fn digest_of(&self, reference: &OciRef) -> Result<String, OciError> {
        if let Some(digest) = reference.digest() {
            return Ok(digest.to_owned());
        }
        let conn = self.conn(reference)?;
        run(conn.digest_now(reference))
    }

    /// Sign the manifest `reference` names with `key`, for `reference`'s repository and
    /// claiming `version`: a cosign signature added to the `sha256-<hex>.sig` image beside it
    /// (a signature this key made of the same payload is replaced; others stay). The
    /// signature image's reference.
    pub fn sign(
        &self,
        reference: &OciRef,
        key: &SigningKey,
        version: Option<&PluginVersion>,
    ) -> Result<String, OciError> {
        let conn = self.conn(reference)?;
        run(async {
            let digest = match reference.digest() {
                Some(digest) => digest.to_owned(),
                None => conn.digest_now(reference).await?,
            };
            let sig_ref = reference.at_tag(&signature::tag_for(&digest));
            let signed = Signed::sign(key, signature::payload(reference, &digest, version));
            let existing = conn.signatures(reference, &digest).await.or_else(|e| {
                // A signature image hak cannot read (another format) is replaced, not kept.
                match e {
                    OciError::BadSignature { .. } => Ok(Vec::new()),
                    e => Err(e),
                }
            })?;
            let signatures = signature::merged(existing, signed, key.verifying_key());
            conn.oci
                .store_auth_if_needed(reference.inner().resolve_registry(), &conn.auth)
                .await;
            for s in &signatures {
                conn.push_blob(&sig_ref, s.payload.clone()).await?;
            }
            let (manifest, config) = signature::manifest(&signatures);
            conn.push_blob(&sig_ref, config).await?;
            conn.push_manifest(&sig_ref, manifest).await?;
            Ok(sig_ref.to_string())
        })
    }

    /// Pull the plugin at `reference`: the manifest (read within its limit, its digest
    /// recomputed, and equal to the pinned one), its checks, the signature (before the
    /// component is downloaded), then the component itself.
    pub fn pull(&self, reference: &OciRef, verify: Verify<'_>) -> Result<Pulled, OciError> {
        let conn = self.conn(reference)?;
        let shown = reference.to_string();
        run(async {
            let manifest = conn
                .manifest(reference, "the manifest", MAX_MANIFEST_BYTES)
                .await?
                .ok_or_else(|| registry_error(reference, "the manifest: HTTP 404"))?;
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
                    let signatures = conn.signatures(reference, &digest).await?;
                    Some(signature::verify(reference, &digest, &signatures, trusted)?)
                }
                Verify::Unchecked => None,
            };
            let pinned = reference.at_digest(&digest);
            let component = conn
                .blob(&pinned, &checked.layer, self.max_component)
                .await?;
            Ok(Pulled {
                digest,
                manifest,
                component,
                layer_digest: checked.layer.digest,
                signature,
                annotations: checked.annotations,
            })
        })
    }
}
