//! Making and trying plugins, for `hak plugin` and `hak replay`: new projects
//! ([`scaffold`]), components from Go core modules ([`componentize`], [`go_plugin`]) and from
//! Python projects ([`python_plugin`], through componentize-py), the contract and guest SDKs
//! embedded in the binary ([`guest_sources`]), the guest SDKs' tool types generated from the
//! tools' shapes ([`codegen`]), one plugin on one recorded stage input ([`trial`]) and
//! recorded calls re-run through another chain ([`replay`]), and where the builds' toolchains
//! are ([`toolchains`]). Nothing below the command line imports it.

pub mod codegen;
pub mod componentize;
pub mod go_plugin;
pub mod guest_sources;
pub mod python_plugin;
pub mod replay;
pub mod scaffold;
pub mod toolchains;
pub mod trial;
