//! Signatures: which public keys signed a transaction body, and whether a (possibly
//! composite) key is satisfied by them. Ed25519 signs the body bytes; ECDSA(secp256k1) signs
//! keccak256 of them (the SDK's `PublicKey::verify` does both).

use hedera::PublicKey;
use hedera_proto::services as proto;
use proto::key::Key as K;
use proto::signature_pair::Signature as S;

/// Raw public keys (32-byte ed25519, 33-byte compressed secp256k1) whose signatures verified.
#[derive(Debug, Default)]
pub struct ActiveKeys(Vec<Vec<u8>>);

/// Verify every signature pair of `sig_map` over `body`.
pub fn verify(body: &[u8], sig_map: Option<&proto::SignatureMap>) -> ActiveKeys {
    let mut active = Vec::new();
    for pair in sig_map.map(|m| m.sig_pair.as_slice()).unwrap_or_default() {
        let prefix = &pair.pub_key_prefix;
        let ok = match &pair.signature {
            Some(S::Ed25519(sig)) => {
                PublicKey::from_bytes_ed25519(prefix).is_ok_and(|k| k.verify(body, sig).is_ok())
            }
            Some(S::EcdsaSecp256k1(sig)) => {
                PublicKey::from_bytes_ecdsa(prefix).is_ok_and(|k| k.verify(body, sig).is_ok())
            }
            _ => false,
        };
        if ok {
            active.push(prefix.clone());
        }
    }
    ActiveKeys(active)
}

impl ActiveKeys {
    /// Keys that count as signed (a schedule's accumulated signatories).
    pub fn from_keys(keys: Vec<Vec<u8>>) -> Self {
        ActiveKeys(keys)
    }

    /// The raw public keys that signed.
    pub fn keys(&self) -> &[Vec<u8>] {
        &self.0
    }

    fn has(&self, raw: &[u8]) -> bool {
        self.0.iter().any(|k| k == raw)
    }

    /// Is `key` satisfied: a primitive key signed, every key of a list, `threshold` of a
    /// threshold key? Contract keys and unknown kinds are never satisfied here.
    pub fn satisfies(&self, key: &proto::Key) -> bool {
        match &key.key {
            Some(K::Ed25519(raw)) | Some(K::EcdsaSecp256k1(raw)) => self.has(raw),
            Some(K::KeyList(list)) => {
                !list.keys.is_empty() && list.keys.iter().all(|k| self.satisfies(k))
            }
            Some(K::ThresholdKey(t)) => {
                let keys = t
                    .keys
                    .as_ref()
                    .map(|l| l.keys.as_slice())
                    .unwrap_or_default();
                let met = keys.iter().filter(|k| self.satisfies(k)).count();
                t.threshold > 0 && met >= t.threshold as usize
            }
            _ => false,
        }
    }
}

/// Is `key` a usable key structure: an Ed25519 key of 32 bytes, a compressed secp256k1 key
/// of 33, a contract id, a non-empty list of usable keys, or a threshold key whose
/// threshold is between 1 and its number of (usable) keys? The network refuses the others
/// (`INVALID_ADMIN_KEY`, `INVALID_CUSTOM_FEE_SCHEDULE_KEY` ...).
pub fn is_valid(key: &proto::Key) -> bool {
    match &key.key {
        Some(K::Ed25519(raw)) => raw.len() == 32,
        Some(K::EcdsaSecp256k1(raw)) => raw.len() == 33 && matches!(raw[0], 2 | 3),
        Some(K::ContractId(_)) | Some(K::DelegatableContractId(_)) => true,
        Some(K::KeyList(list)) => !list.keys.is_empty() && list.keys.iter().all(is_valid),
        Some(K::ThresholdKey(t)) => {
            let keys = t.keys.as_ref().map_or(&[][..], |l| l.keys.as_slice());
            !keys.is_empty()
                && t.threshold >= 1
                && t.threshold as usize <= keys.len()
                && keys.iter().all(is_valid)
        }
        _ => false,
    }
}

/// A proto `Key` for an SDK public key.
pub fn proto_key(key: &PublicKey) -> proto::Key {
    let raw = key.to_bytes_raw();
    proto::Key {
        key: Some(if key.is_ed25519() {
            K::Ed25519(raw)
        } else {
            K::EcdsaSecp256k1(raw)
        }),
    }
}

/// The mirror's `{_type, key}` for a key: raw hex for primitive keys, protobuf hex otherwise.
pub fn mirror_key(key: &proto::Key) -> serde_json::Value {
    use prost::Message;
    match &key.key {
        Some(K::Ed25519(raw)) => serde_json::json!({"_type": "ED25519", "key": hex::encode(raw)}),
        Some(K::EcdsaSecp256k1(raw)) => {
            serde_json::json!({"_type": "ECDSA_SECP256K1", "key": hex::encode(raw)})
        }
        _ => {
            serde_json::json!({"_type": "ProtobufEncoded", "key": hex::encode(key.encode_to_vec())})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hedera::PrivateKey;
    use prost::Message;

    fn signed(body: &[u8], keys: &[&PrivateKey]) -> proto::SignatureMap {
        let sig_pair = keys
            .iter()
            .map(|k| {
                let public = k.public_key();
                let sig = k.sign(body);
                proto::SignaturePair {
                    pub_key_prefix: public.to_bytes_raw(),
                    signature: Some(if public.is_ed25519() {
                        S::Ed25519(sig)
                    } else {
                        S::EcdsaSecp256k1(sig)
                    }),
                }
            })
            .collect();
        proto::SignatureMap { sig_pair }
    }

    #[test]
    fn ed25519_ecdsa_lists_and_thresholds() {
        let a = PrivateKey::generate_ed25519();
        let b = PrivateKey::generate_ecdsa();
        let c = PrivateKey::generate_ed25519();
        let body = b"body bytes";
        let map = signed(body, &[&a, &b]);
        let active = verify(body, Some(&map));
        assert!(active.satisfies(&proto_key(&a.public_key())));
        assert!(active.satisfies(&proto_key(&b.public_key())));
        assert!(!active.satisfies(&proto_key(&c.public_key())));
        let list = |keys: Vec<proto::Key>| proto::KeyList { keys };
        let all = proto::Key {
            key: Some(K::KeyList(list(vec![
                proto_key(&a.public_key()),
                proto_key(&c.public_key()),
            ]))),
        };
        assert!(!active.satisfies(&all));
        let two_of_three = proto::Key {
            key: Some(K::ThresholdKey(proto::ThresholdKey {
                threshold: 2,
                keys: Some(list(vec![
                    proto_key(&a.public_key()),
                    proto_key(&b.public_key()),
                    proto_key(&c.public_key()),
                ])),
            })),
        };
        assert!(active.satisfies(&two_of_three));
        // A signature over other bytes does not count.
        let forged = verify(b"other body", Some(&map));
        assert!(!forged.satisfies(&proto_key(&a.public_key())));
        let _ = all.encode_to_vec();
    }
}
