"""An independent implementation of cosign's key files and image signatures, written from
cosign's formats with Python's `cryptography` and PyNaCl (no code shared with hak), for
tests/all/oci.rs to check hak against in both directions:

  keygen DIR                         cosign.key (sealed with $COSIGN_PASSWORD) + cosign.pub
  public KEYFILE                     open a cosign.key with $COSIGN_PASSWORD, print its public PEM
  sign REGISTRY REPO DIGEST KEYFILE [--identity REF] [--claim K=V]...
                                     what `cosign sign --key` stores: a simple-signing payload
                                     layer (signature in its annotation) added to the
                                     sha256-<hex>.sig image of REPO on REGISTRY (host:port, HTTP)
  verify REGISTRY REPO DIGEST PUBFILE
                                     what `cosign verify --key` checks: every signature layer of
                                     that image, its ECDSA P-256 signature over the payload and
                                     the payload's digest; prints the verified payloads (JSON)
  verify-blob FILE SIGFILE PUBFILE   what `cosign verify-blob --key` checks: SIGFILE (base64)
                                     signs FILE's bytes

Exit status 0 on success, 1 with the reason on stderr.
"""

import base64
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request

import nacl.secret
import nacl.utils
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

SIMPLE_SIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def password():
    value = os.environ.get("COSIGN_PASSWORD")
    if value is None:
        fail("COSIGN_PASSWORD is not set")
    return value.encode()


def pem(label, data):
    text = base64.b64encode(data).decode()
    lines = [text[i : i + 64] for i in range(0, len(text), 64)]
    return "-----BEGIN %s-----\n%s\n-----END %s-----\n" % (label, "\n".join(lines), label)


def unpem(text):
    lines = [l.strip() for l in text.strip().splitlines()]
    if not lines[0].startswith("-----BEGIN ") or not lines[-1].startswith("-----END "):
        fail("not PEM")
    return lines[0][len("-----BEGIN ") : -len("-----")], base64.b64decode("".join(lines[1:-1]))


def scrypt_key(secret, salt, n):
    return hashlib.scrypt(secret, salt=salt, n=n, r=8, p=1, dklen=32, maxmem=128 * 1024 * 1024)


def keygen(directory):
    key = ec.generate_private_key(ec.SECP256R1())
    der = key.private_bytes(
        serialization.Encoding.DER,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    salt = nacl.utils.random(32)
    nonce = nacl.utils.random(24)
    box = nacl.secret.SecretBox(scrypt_key(password(), salt, 32768))
    # PyNaCl's ciphertext is NaCl's secretbox output: the Poly1305 tag, then the bytes.
    sealed = box.encrypt(der, nonce).ciphertext
    envelope = {
        "kdf": {
            "name": "scrypt",
            "params": {"N": 32768, "r": 8, "p": 1},
            "salt": base64.b64encode(salt).decode(),
        },
        "cipher": {"name": "nacl/secretbox", "nonce": base64.b64encode(nonce).decode()},
        "ciphertext": base64.b64encode(sealed).decode(),
    }
    with open(os.path.join(directory, "cosign.key"), "w") as f:
        f.write(pem("ENCRYPTED SIGSTORE PRIVATE KEY", json.dumps(envelope).encode()))
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    with open(os.path.join(directory, "cosign.pub"), "wb") as f:
        f.write(public)


def open_key(path):
    label, data = unpem(open(path).read())
    if label not in ("ENCRYPTED SIGSTORE PRIVATE KEY", "ENCRYPTED COSIGN PRIVATE KEY"):
        fail("label %r" % label)
    envelope = json.loads(data)
    kdf, cipher = envelope["kdf"], envelope["cipher"]
    if kdf["name"] != "scrypt" or cipher["name"] != "nacl/secretbox":
        fail("envelope %r / %r" % (kdf["name"], cipher["name"]))
    box = nacl.secret.SecretBox(
        scrypt_key(password(), base64.b64decode(kdf["salt"]), kdf["params"]["N"])
    )
    der = box.decrypt(base64.b64decode(envelope["ciphertext"]), base64.b64decode(cipher["nonce"]))
    return serialization.load_der_private_key(der, password=None)


def request(method, url, body=None, headers=None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def push_blob(registry, repo, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    status, headers, _ = request("POST", "http://%s/v2/%s/blobs/uploads/" % (registry, repo))
    if status != 202:
        fail("blob upload start: HTTP %d" % status)
    location = headers["Location"]
    if location.startswith("/"):
        location = "http://%s%s" % (registry, location)
    joiner = "&" if "?" in location else "?"
    status, _, body = request(
        "PUT",
        location + joiner + "digest=" + digest,
        data,
        {"Content-Type": "application/octet-stream"},
    )
    if status != 201:
        fail("blob upload: HTTP %d %s" % (status, body[:200]))
    return digest


def signature_image(registry, repo, digest):
    tag = digest.replace(":", "-", 1) + ".sig"
    url = "http://%s/v2/%s/manifests/%s" % (registry, repo, tag)
    status, _, body = request("GET", url, headers={"Accept": OCI_MANIFEST})
    if status == 404:
        return url, None
    if status != 200:
        fail("signature manifest: HTTP %d" % status)
    return url, json.loads(body)


def sign(registry, repo, digest, key_path, identity, claims):
    key = open_key(key_path)
    payload = json.dumps(
        {
            "critical": {
                "identity": {"docker-reference": identity or "%s/%s" % (registry, repo)},
                "image": {"docker-manifest-digest": digest},
                "type": "cosign container image signature",
            },
            "optional": claims or None,
        }
    ).encode()
    signature = key.sign(payload, ec.ECDSA(hashes.SHA256()))
    url, existing = signature_image(registry, repo, digest)
    layers = existing["layers"] if existing else []
    layers.append(
        {
            "mediaType": SIMPLE_SIGNING,
            "size": len(payload),
            "digest": push_blob(registry, repo, payload),
            "annotations": {SIGNATURE_ANNOTATION: base64.b64encode(signature).decode()},
        }
    )
    config = json.dumps(
        {
            "architecture": "",
            "os": "",
            "config": {},
            "rootfs": {"type": "layers", "diff_ids": [l["digest"] for l in layers]},
        }
    ).encode()
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "size": len(config),
            "digest": push_blob(registry, repo, config),
        },
        "layers": layers,
    }
    status, _, body = request(
        "PUT", url, json.dumps(manifest).encode(), {"Content-Type": OCI_MANIFEST}
    )
    if status != 201:
        fail("signature manifest upload: HTTP %d %s" % (status, body[:200]))


def verify(registry, repo, digest, pub_path):
    with open(pub_path, "rb") as f:
        public = serialization.load_pem_public_key(f.read())
    _, image = signature_image(registry, repo, digest)
    if image is None:
        fail("no signatures found")
    verified = []
    for layer in image["layers"]:
        if layer["mediaType"] != SIMPLE_SIGNING:
            continue
        status, _, payload = request(
            "GET", "http://%s/v2/%s/blobs/%s" % (registry, repo, layer["digest"])
        )
        if status != 200 or "sha256:" + hashlib.sha256(payload).hexdigest() != layer["digest"]:
            fail("payload blob %s: HTTP %d or digest mismatch" % (layer["digest"], status))
        signature = base64.b64decode(layer["annotations"][SIGNATURE_ANNOTATION])
        try:
            public.verify(signature, payload, ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            continue
        claims = json.loads(payload)
        if claims["critical"]["image"]["docker-manifest-digest"] != digest:
            continue
        if claims["critical"]["type"] != "cosign container image signature":
            continue
        verified.append(claims)
    if not verified:
        fail("no matching signatures")
    print(json.dumps(verified))


def verify_blob(path, sig_path, pub_path):
    with open(pub_path, "rb") as f:
        public = serialization.load_pem_public_key(f.read())
    with open(path, "rb") as f:
        data = f.read()
    with open(sig_path) as f:
        signature = base64.b64decode(f.read().strip())
    try:
        public.verify(signature, data, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        fail("the signature does not verify")
    print("Verified OK")


def main(argv):
    if argv[:1] == ["keygen"] and len(argv) == 2:
        keygen(argv[1])
    elif argv[:1] == ["public"] and len(argv) == 2:
        key = open_key(argv[1])
        sys.stdout.write(
            key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )
    elif argv[:1] == ["sign"] and len(argv) >= 5:
        identity, claims, rest = None, {}, argv[5:]
        while rest:
            if rest[0] == "--identity":
                identity, rest = rest[1], rest[2:]
            elif rest[0] == "--claim":
                k, v = rest[1].split("=", 1)
                claims[k], rest = v, rest[2:]
            else:
                fail("unknown option %r" % rest[0])
        sign(argv[1], argv[2], argv[3], argv[4], identity, claims)
    elif argv[:1] == ["verify"] and len(argv) == 5:
        verify(*argv[1:])
    elif argv[:1] == ["verify-blob"] and len(argv) == 4:
        verify_blob(*argv[1:])
    else:
        fail(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
