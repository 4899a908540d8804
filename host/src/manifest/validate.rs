//! The manifest's cross-field rules, checked once after parsing: plugin names and sources,
//! the state backend's settings, agents, limits. Each refusal names the field. What must not
//! live here: parsing and defaults.

use super::*;

impl Manifest {
    pub(super) fn validate(&self) -> Result<(), String> {
        let local = self.network.name == NetworkName::Local;
        if !local && (self.network.grpc.is_some() || self.network.state_dir.is_some()) {
            return Err(
                "network.grpc and network.state_dir apply to the local network only".into(),
            );
        }
        if self.network.grpc.is_some() && self.network.mirror_url.is_none() {
            return Err("network.grpc names a running `hak emu`: set network.mirror_url to its mirror too (both are on the first line `hak emu` prints); otherwise queries would go to another network".into());
        }
        if self.network.grpc.is_some() && self.network.state_dir.is_some() {
            return Err("network.state_dir applies to the emulator inside hak; a running `hak emu` keeps its own (--state)".into());
        }
        if let Some(seconds) = self.network.rates_refresh_seconds {
            if !(1..=3600).contains(&seconds) {
                return Err(format!(
                    "network.rates_refresh_seconds must be between 1 and 3600 (got {seconds})"
                ));
            }
        }
        if self.network.name == NetworkName::Custom && self.network.nodes.is_empty() {
            return Err("network.nodes must list at least one node for a custom network".into());
        }
        self.approvals.validate()?;
        if let Some(ms) = self.engine.call_budget_ms {
            let max = crate::model::limits::MAX_CALL_BUDGET_MS;
            if !(1..=max).contains(&ms) {
                return Err(format!(
                    "engine.call_budget_ms must be between 1 and {max} (got {ms})"
                ));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for (i, p) in self.plugins.iter().enumerate() {
            let at = format!("plugins[{i}] ({})", p.name);
            if p.name.trim().is_empty() {
                return Err(format!("plugins[{i}].name must not be empty"));
            }
            if !seen.insert(&p.name) {
                return Err(format!("{at}: duplicate plugin name"));
            }
            p.validate(&at, self.engine.fuel)?;
        }
        let trusted = self.trusted_keys()?;
        self.oci.validate()?;
        for (i, p) in self.plugins.iter().enumerate() {
            let followed = p
                .source
                .as_deref()
                .and_then(|s| crate::oci::OciRef::parse(s).ok())
                .is_some_and(|r| r.is_followed());
            if followed && trusted.cosign.is_empty() {
                let why = if trusted.ed25519.is_empty() {
                    "name the publisher's cosign.pub in trust.public_keys"
                } else {
                    "trust.public_keys names only ed25519 keys (hex), which verify plugin files; OCI signatures are cosign's (ECDSA P-256): name the publisher's cosign.pub (hak plugin keygen --cosign makes one)"
                };
                return Err(format!(
                    "plugins[{i}] ({}): source follows a tag, so it must be signed: {why} (or pin a digest, oci://…@sha256:…)",
                    p.name
                ));
            }
        }
        let redis_targets = [
            self.state.url.is_some(),
            self.state.cluster.is_some(),
            self.state.sentinel.is_some(),
        ]
        .iter()
        .filter(|given| **given)
        .count();
        if self.state.backend == Some(StateBackendKind::Redis) && redis_targets > 1 {
            return Err(
                "state: give one of url (one server), cluster (seed nodes) or sentinel (with service) for backend = \"redis\", not several".into(),
            );
        }
        if self.state.backend != Some(StateBackendKind::Redis)
            && (self.state.cluster.is_some()
                || self.state.sentinel.is_some()
                || self.state.service.is_some()
                || self.state.wait_replicas.is_some())
        {
            return Err(
                "state.cluster, state.sentinel, state.service and state.wait_replicas apply to backend = \"redis\" only".into(),
            );
        }
        if self.state.sentinel.is_some() != self.state.service.is_some() {
            return Err(
                "state.sentinel and state.service go together: the sentinels, and the name of the primary they follow".into(),
            );
        }
        for (field, list) in [
            ("cluster", &self.state.cluster),
            ("sentinel", &self.state.sentinel),
        ] {
            if list.as_ref().is_some_and(|l| l.is_empty()) {
                return Err(format!("state.{field} must name at least one node"));
            }
        }
        if let Some(n) = self.state.wait_replicas {
            if n > 16 {
                return Err(format!(
                    "state.wait_replicas must be between 0 and 16, got {n}"
                ));
            }
        }
        match (self.state.backend, &self.state.url, &self.state.dir) {
            (Some(StateBackendKind::Redis), None, _) if redis_targets == 0 => {
                return Err("state.url (one server), state.cluster or state.sentinel is required for backend = \"redis\"".into())
            }
            (Some(StateBackendKind::Redis), _, Some(_))
            | (Some(StateBackendKind::Memory), _, Some(_)) => {
                return Err("state.dir applies to the journal and sqlite backends only".into())
            }
            (Some(StateBackendKind::Sqlite | StateBackendKind::Memory), Some(_), _)
            | (None, Some(_), _) => {
                return Err("state.url applies to backend = \"redis\" only".into())
            }
            (None, None, Some(_)) => {
                return Err("state.dir needs state.backend = \"journal\" or \"sqlite\" (without a backend the dir would be ignored)".into())
            }
            _ => {}
        }
        if (self.state.timeout_ms.is_some() || self.state.redis_persistence.is_some())
            && self.state.backend != Some(StateBackendKind::Redis)
        {
            return Err(
                "state.timeout_ms and state.redis_persistence apply to backend = \"redis\" only"
                    .into(),
            );
        }
        if let Some(ms) = self.state.presumed_stopped_ms {
            if !matches!(
                self.state.backend,
                Some(StateBackendKind::Sqlite | StateBackendKind::Redis)
            ) {
                return Err(
                    "state.presumed_stopped_ms applies to backend = \"sqlite\" or \"redis\" only"
                        .into(),
                );
            }
            if !(1_000..=3_600_000).contains(&ms) {
                return Err(format!(
                    "state.presumed_stopped_ms must be between 1000 and 3600000, got {ms}"
                ));
            }
        }
        if let Some(ms) = self.state.timeout_ms {
            if !(1..=60_000).contains(&ms) {
                return Err(format!(
                    "state.timeout_ms must be between 1 and 60000, got {ms}"
                ));
            }
        }
        let mut agent_names = std::collections::HashSet::new();
        for (i, a) in self.agents.iter().enumerate() {
            let at = format!("agents[{i}] ({})", a.name);
            if a.name.trim().is_empty() {
                return Err(format!("agents[{i}].name must not be empty"));
            }
            if !agent_names.insert(&a.name) {
                return Err(format!("{at}: duplicate agent name"));
            }
            key_source(&at, a.key_env.as_deref(), a.key_sha256.as_deref())?;
            if a.mode.is_some_and(AgentMode::is_custom) {
                return Err(format!(
                    "{at}: mode {} needs a transaction strategy, which only the library API can supply",
                    a.mode.unwrap_or_default()
                ));
            }
            if let Some(id) = &a.account_id {
                hedera::AccountId::from_str(id)
                    .map_err(|e| format!("{at}: account_id: invalid account id {id:?}: {e}"))?;
            }
        }
        let mut approver_names = std::collections::HashSet::new();
        for (i, a) in self.approvers.iter().enumerate() {
            let at = format!("approvers[{i}] ({})", a.name);
            let name = a.name.trim();
            if name.is_empty() || name.len() > 64 {
                return Err(format!("approvers[{i}].name must be 1 to 64 characters"));
            }
            if name == "admin" || name.starts_with("mcp client") {
                return Err(format!(
                    "{at}: the name is reserved (the admin token approves as `admin`, an MCP client as `mcp client …`)"
                ));
            }
            if !approver_names.insert(name) {
                return Err(format!("{at}: duplicate approver name"));
            }
            key_source(&at, a.key_env.as_deref(), a.key_sha256.as_deref())?;
        }
        let can_approve = self.approvers.len()
            + usize::from(self.approvals.admin_approves)
            + usize::from(self.approvals.mcp_elicitation);
        if self.approvals.quorum > can_approve.max(1) {
            return Err(format!(
                "approvals.quorum = {} but only {can_approve} can approve ([[approvers]], the admin token unless approvals.admin_approves = false, an MCP client asked by elicitation)",
                self.approvals.quorum
            ));
        }
        if self.server.max_concurrent_calls == 0 {
            return Err("server.max_concurrent_calls must be at least 1".into());
        }
        if self.trust.require_signatures && self.trust.public_keys.is_empty() {
            return Err(
                "trust.require_signatures needs at least one trust.public_keys entry".into(),
            );
        }
        Ok(())
    }
}

/// A bearer key named by exactly one of `key_env` (the env var holding it) and `key_sha256`
/// (its digest, 64 hex digits), as `[[agents]]` and `[[approvers]]` name theirs.
fn key_source(at: &str, key_env: Option<&str>, key_sha256: Option<&str>) -> Result<(), String> {
    match (key_env, key_sha256) {
        (Some(_), None) => Ok(()),
        (None, Some(digest)) => {
            if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
                Err(format!("{at}: key_sha256 must be 64 hex digits"))
            } else {
                Ok(())
            }
        }
        _ => Err(format!("{at}: set exactly one of key_env and key_sha256")),
    }
}
