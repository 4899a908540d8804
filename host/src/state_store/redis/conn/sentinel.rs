//! Finding the primary that Sentinel names: each sentinel asked in turn within the
//! operation's deadline (`SENTINEL get-master-addr-by-name`), the answer checked with `ROLE`.
//! What must not live here: connections and their pools.

use super::slots::value_text;
use super::{client_for, Pool, Target};
use crate::state_store::StateError;
use std::time::{Duration, Instant};

impl Pool {
    /// Ask each sentinel in turn (each within what is left of `deadline`) for the primary,
    /// and keep the first answer whose server says it is the primary (`ROLE`).
    pub(super) fn find_primary(&self, deadline: Instant) -> Result<redis::Client, StateError> {
        let Target::Sentinel {
            sentinels,
            service,
            node,
            ..
        } = &self.target
        else {
            return Err(StateError::Unavailable("not a sentinel topology".into()));
        };
        let mut why = Vec::new();
        for sentinel in sentinels {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                why.push("no time left".to_owned());
                break;
            }
            let asked = (|| -> redis::RedisResult<Option<(String, u16)>> {
                let mut c = sentinel.get_connection_with_timeout(left)?;
                c.set_read_timeout(Some(left))?;
                c.set_write_timeout(Some(left))?;
                redis::cmd("SENTINEL")
                    .arg("get-master-addr-by-name")
                    .arg(service)
                    .query(&mut c)
            })();
            let addr = match asked {
                Ok(Some((host, port))) => format!("{host}:{port}"),
                Ok(None) => {
                    why.push(format!("a sentinel does not know service {service:?}"));
                    continue;
                }
                Err(e) => {
                    why.push(e.to_string());
                    continue;
                }
            };
            let checked = (|| -> redis::RedisResult<(redis::Client, String)> {
                let client = client_for(&addr, node)?;
                let left = deadline
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(1));
                let mut c = client.get_connection_with_timeout(left)?;
                c.set_read_timeout(Some(left))?;
                let role: Vec<redis::Value> = redis::cmd("ROLE").query(&mut c)?;
                Ok((client, role.first().map(value_text).unwrap_or_default()))
            })();
            match checked {
                Ok((client, role)) if role == "master" => return Ok(client),
                Ok((_, role)) => why.push(format!("{addr} is a {role}, not the primary")),
                Err(e) => why.push(format!("{addr}: {e}")),
            }
        }
        Err(StateError::Unavailable(format!(
            "no primary for service {service:?}: {}",
            why.join("; ")
        )))
    }
}
