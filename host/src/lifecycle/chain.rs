//! The ordered plugin chain and, per tool, the precomputed plan of which plugin runs at which
//! stage (as policy, hook or both) and what it reads of the stage input. Plugins run in manifest order; a plugin is only called at
//! stages it declared and for tools it declared relevant, so the hot path never asks.

use crate::model::stage::Stage;
use crate::plugin::{ChainPlugin, Reads};
use std::collections::HashMap;
use std::sync::Arc;

/// One plugin's turn at one stage: its policy check first, then its hook, each given the
/// parts of the stage input the plugin reads for this tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub plugin: usize,
    pub policy: bool,
    pub hook: bool,
    pub reads: Reads,
}

/// The steps of every stage for one tool, and who hears about its failures.
#[derive(Debug, Default)]
pub struct Plan {
    stages: [Vec<Step>; 4],
    /// Members that observe failures and declared the tool relevant, in order.
    notify: Vec<usize>,
}

impl Plan {
    pub fn steps(&self, stage: Stage) -> &[Step] {
        &self.stages[stage.index()]
    }

    pub fn has_steps(&self, stage: Stage) -> bool {
        !self.stages[stage.index()].is_empty()
    }

    /// The plugins to tell when a call to this tool ends blocked or failed.
    pub fn failure_observers(&self) -> &[usize] {
        &self.notify
    }

    fn for_method(members: &[Member], method: &str) -> Self {
        let mut plan = Plan::default();
        for (i, member) in members.iter().enumerate() {
            let d = member.description();
            if !d.applies_to(method) {
                continue;
            }
            if member.observes_failures() {
                plan.notify.push(i);
            }
            let reads = member.reads(method);
            for stage in Stage::ALL {
                let (policy, hook) = (
                    d.policy_stages.contains(stage),
                    d.hook_stages.contains(stage),
                );
                if policy || hook {
                    plan.stages[stage.index()].push(Step {
                        plugin: i,
                        policy,
                        hook,
                        reads,
                    });
                }
            }
        }
        plan
    }
}

/// One link of the chain: a sandboxed component or a trusted native plugin, behind the same
/// trait.
pub type Member = Arc<dyn ChainPlugin>;

/// Plugins in order (manifest plugins, then watched or uploaded ones, then native ones) with a
/// plan per known tool. Immutable: a change builds a new chain with the next version.
pub struct Chain {
    members: Vec<Member>,
    /// Looked up once a call by the tool's name: foldhash, not SipHash (built once from the
    /// registry's names and never added to from a call, so there is nothing to flood).
    plans: HashMap<String, Arc<Plan>, foldhash::fast::RandomState>,
    version: u64,
}

impl Chain {
    pub fn new<'a>(members: Vec<Member>, methods: impl IntoIterator<Item = &'a str>) -> Self {
        Self::versioned(1, members, methods)
    }

    pub fn versioned<'a>(
        version: u64,
        members: Vec<Member>,
        methods: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let plans = methods
            .into_iter()
            .map(|m| (m.to_owned(), Arc::new(Plan::for_method(&members, m))))
            .collect();
        Chain {
            members,
            plans,
            version,
        }
    }

    /// 1 for the chain the host started with, +1 for every swap.
    pub fn version(&self) -> u64 {
        self.version
    }

    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The plan for `method` (computed on the fly for a method the chain was not built for).
    pub fn plan(&self, method: &str) -> Arc<Plan> {
        match self.plans.get(method) {
            Some(plan) => plan.clone(),
            None => Arc::new(Plan::for_method(&self.members, method)),
        }
    }
}
