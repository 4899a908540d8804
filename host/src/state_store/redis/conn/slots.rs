//! A cluster's slot table: which primary serves a key's hash slot, asked of the cluster
//! (`CLUSTER SLOTS`) at the first call and again after a `MOVED` or a failed node, by one
//! thread at a time. What must not live here: connections and their pools.

use super::{client_for, slot, Pool, Route, Target};
use crate::state_store::StateError;
use std::time::Instant;

pub(super) fn value_text(v: &redis::Value) -> String {
    redis::from_redis_value_ref::<String>(v).unwrap_or_default()
}

fn value_int(v: &redis::Value) -> Option<i64> {
    redis::from_redis_value_ref::<i64>(v).ok()
}

/// `CLUSTER SLOTS` as slot ranges of primaries (a node that answers with an empty host
/// means itself).
fn parse_slots(answer: &redis::Value, asked: &str) -> Vec<(u16, u16, String)> {
    let asked_host = asked.rsplit_once(':').map_or(asked, |(h, _)| h);
    let mut ranges = Vec::new();
    let redis::Value::Array(items) = answer else {
        return ranges;
    };
    for item in items {
        let redis::Value::Array(fields) = item else {
            continue;
        };
        let (Some(first), Some(last), Some(redis::Value::Array(primary))) = (
            fields.first().and_then(value_int),
            fields.get(1).and_then(value_int),
            fields.get(2),
        ) else {
            continue;
        };
        let host = primary.first().map(value_text).unwrap_or_default();
        let Some(port) = primary.get(1).and_then(value_int) else {
            continue;
        };
        let host = if host.is_empty() || host == "?" {
            asked_host.to_owned()
        } else {
            host
        };
        ranges.push((first as u16, last as u16, format!("{host}:{port}")));
    }
    ranges.sort();
    ranges
}

impl Pool {
    /// The server `route` names now: `""` for the one server (or Sentinel's primary), a
    /// cluster node's `host:port`, and the table's epoch it was read at.
    pub(super) fn address(
        &self,
        route: Route,
        deadline: Instant,
    ) -> Result<(String, u64), StateError> {
        let Target::Cluster { table, .. } = &self.target else {
            return Ok((String::new(), 0));
        };
        let key = match route {
            Route::Node(addr) => return Ok((addr.to_owned(), 0)),
            Route::Key(key) => key,
        };
        let slot = slot(key);
        for _ in 0..2 {
            {
                let table = table.read().unwrap_or_else(|e| e.into_inner());
                let found = table
                    .ranges
                    .iter()
                    .find(|(first, last, _)| (*first..=*last).contains(&slot));
                if let Some((_, _, addr)) = found {
                    return Ok((addr.clone(), table.epoch));
                }
            }
            let epoch = table.read().unwrap_or_else(|e| e.into_inner()).epoch;
            self.refresh(epoch, deadline)?;
        }
        Err(StateError::Unavailable(format!(
            "no cluster node serves hash slot {slot}"
        )))
    }

    /// Ask the cluster for its slot table again, unless another thread did since `epoch`:
    /// the seeds and the primaries known, in turn, each within what is left.
    pub(super) fn refresh(&self, epoch: u64, deadline: Instant) -> Result<(), StateError> {
        let Target::Cluster {
            seeds,
            node,
            table,
            refreshing,
        } = &self.target
        else {
            return Ok(());
        };
        let _one = refreshing.lock().unwrap_or_else(|e| e.into_inner());
        if table.read().unwrap_or_else(|e| e.into_inner()).epoch != epoch {
            return Ok(());
        }
        let mut candidates: Vec<String> = table
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .ranges
            .iter()
            .map(|(_, _, addr)| addr.clone())
            .collect();
        candidates.extend(seeds.iter().cloned());
        candidates.dedup();
        let mut why = Vec::new();
        for addr in candidates {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                why.push("no time left".to_owned());
                break;
            }
            let asked = (|| -> redis::RedisResult<redis::Value> {
                let mut c = client_for(&addr, node)?.get_connection_with_timeout(left)?;
                c.set_read_timeout(Some(left))?;
                c.set_write_timeout(Some(left))?;
                redis::cmd("CLUSTER").arg("SLOTS").query(&mut c)
            })();
            match asked {
                Ok(answer) => {
                    let ranges = parse_slots(&answer, &addr);
                    if ranges.is_empty() {
                        why.push(format!("{addr} serves no slots"));
                        continue;
                    }
                    let mut table = table.write().unwrap_or_else(|e| e.into_inner());
                    table.ranges = ranges;
                    table.epoch += 1;
                    return Ok(());
                }
                Err(e) => why.push(format!("{addr}: {e}")),
            }
        }
        Err(StateError::Unavailable(format!(
            "no cluster node gave its slots: {}",
            why.join("; ")
        )))
    }
}
