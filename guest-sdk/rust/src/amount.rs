//! 64-bit amounts arrive as signed decimal strings (tinybars, token base units) so that no
//! language loses precision. [`Amount`] reads them without going through floating point.

use serde::{Deserialize, Deserializer};

/// A signed integer amount in base units, read from a decimal string or a JSON integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Amount(pub i128);

impl Amount {
    pub fn is_positive(self) -> bool {
        self.0 > 0
    }
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Amount;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer amount as a decimal string")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Amount, E> {
                s.parse::<i128>()
                    .map(Amount)
                    .map_err(|_| E::custom(format!("bad amount {s:?}")))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Amount, E> {
                Ok(Amount(v.into()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Amount, E> {
                Ok(Amount(v.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Amount, E> {
                // Only integers are amounts; a fraction is kept by sign (enough for comparisons).
                Ok(Amount(if v > 0.0 {
                    v.ceil() as i128
                } else {
                    v.floor() as i128
                }))
            }
        }
        d.deserialize_any(V)
    }
}
