//! The ordered plugin chain and, per tool, the precomputed plan of which plugin runs at which
//! stage (as policy, hook or both). Plugins run in manifest order; a plugin is only called at
//! stages it declared and for tools it declared relevant, so the hot path never asks.

use crate::runtime::LoadedPlugin;
use crate::stage::Stage;
use std::collections::HashMap;
use std::sync::Arc;

/// One plugin's turn at one stage: its policy check first, then its hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub plugin: usize,
    pub policy: bool,
    pub hook: bool,
}

/// The steps of every stage for one tool.
#[derive(Debug, Default)]
pub struct Plan {
    stages: [Vec<Step>; 4],
}

impl Plan {
    pub fn steps(&self, stage: Stage) -> &[Step] {
        &self.stages[stage.index()]
    }

    fn for_method(plugins: &[Arc<LoadedPlugin>], method: &str) -> Self {
        let mut plan = Plan::default();
        for (i, plugin) in plugins.iter().enumerate() {
            let d = &plugin.description;
            if !d.applies_to(method) {
                continue;
            }
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
                    });
                }
            }
        }
        plan
    }
}

/// Plugins in manifest order with a plan per known tool.
pub struct Chain {
    plugins: Vec<Arc<LoadedPlugin>>,
    plans: HashMap<String, Arc<Plan>>,
}

impl Chain {
    pub fn new<'a>(
        plugins: Vec<Arc<LoadedPlugin>>,
        methods: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let plans = methods
            .into_iter()
            .map(|m| (m.to_owned(), Arc::new(Plan::for_method(&plugins, m))))
            .collect();
        Chain { plugins, plans }
    }

    pub fn plugins(&self) -> &[Arc<LoadedPlugin>] {
        &self.plugins
    }

    /// The plan for `method` (computed on the fly for a method the chain was not built for).
    pub fn plan(&self, method: &str) -> Arc<Plan> {
        match self.plans.get(method) {
            Some(plan) => plan.clone(),
            None => Arc::new(Plan::for_method(&self.plugins, method)),
        }
    }
}
