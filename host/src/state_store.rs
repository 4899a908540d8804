//! The scratchpad behind `state-get` / `state-set`: a small key/value map per plugin per
//! agent context, capped in bytes. Contexts never see each other's maps.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One plugin's map in one agent context.
#[derive(Debug, Default)]
pub struct Scratchpad {
    entries: HashMap<String, String>,
    bytes: usize,
    cap: usize,
}

impl Scratchpad {
    pub fn with_cap(cap: usize) -> Self {
        Scratchpad {
            cap,
            ..Default::default()
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(String::as_str)
    }

    pub fn set(&mut self, key: String, value: String) -> Result<(), String> {
        let old = self.entries.get(&key).map_or(0, |v| key.len() + v.len());
        let new_total = self.bytes - old + key.len() + value.len();
        if new_total > self.cap {
            return Err(format!(
                "state limit of {} bytes exceeded (would be {new_total})",
                self.cap
            ));
        }
        self.bytes = new_total;
        self.entries.insert(key, value);
        Ok(())
    }

    pub fn delete(&mut self, key: &str) {
        if let Some(v) = self.entries.remove(key) {
            self.bytes -= key.len() + v.len();
        }
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// All scratchpads of a host, keyed by (agent context scope, plugin name).
#[derive(Default)]
pub struct StateStore {
    pads: Mutex<HashMap<ScratchpadKey, Arc<Mutex<Scratchpad>>>>,
}

/// (agent context scope, plugin name)
type ScratchpadKey = (String, String);

impl StateStore {
    /// The scratchpad of `plugin` in the context `scope`, created empty on first use.
    pub fn scratchpad(&self, scope: &str, plugin: &str, cap: usize) -> Arc<Mutex<Scratchpad>> {
        let mut pads = self.pads.lock().unwrap_or_else(|e| e.into_inner());
        pads.entry((scope.to_owned(), plugin.to_owned()))
            .or_insert_with(|| Arc::new(Mutex::new(Scratchpad::with_cap(cap))))
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_counts_keys_and_values_and_replacements() {
        let mut pad = Scratchpad::with_cap(10);
        pad.set("ab".into(), "cdef".into()).unwrap();
        assert_eq!(pad.bytes(), 6);
        pad.set("ab".into(), "cdefghij".into()).unwrap();
        assert_eq!(pad.bytes(), 10);
        assert!(pad
            .set("x".into(), "y".into())
            .unwrap_err()
            .contains("state limit of 10 bytes"));
        pad.delete("ab");
        assert_eq!(pad.bytes(), 0);
    }

    #[test]
    fn contexts_are_separate() {
        let store = StateStore::default();
        store
            .scratchpad("a", "p", 100)
            .lock()
            .unwrap()
            .set("k".into(), "1".into())
            .unwrap();
        assert_eq!(
            store.scratchpad("b", "p", 100).lock().unwrap().get("k"),
            None
        );
        assert_eq!(
            store.scratchpad("a", "p", 100).lock().unwrap().get("k"),
            Some("1")
        );
    }
}
