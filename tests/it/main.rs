//! The integration tests, one binary (one link on a small machine): each module is one area,
//! run against the real binary, real files and real local servers. The rule catalogue's
//! per-rule tests are the other binary (`tests/rules/`).

#[path = "../common/mod.rs"]
mod common;

mod bad_inputs;
mod budgets;
mod cli;
mod completions;
mod config;
mod conformance;
mod docs;
mod evidence;
mod extract;
mod field;
mod fit;
mod fixpoint;
mod hostile_files;
mod hub;
mod implausible_configs;
mod incomplete_configs;
mod memory;
mod modes;
mod nvml;
mod observed;
mod output_robust;
mod packages;
mod profiles;
mod quant_formats;
mod quoting;
mod recover;
mod redaction;
mod release_script;
mod report;
mod resolution;
mod settings;
mod structure;
mod systemd;
mod topology;
mod upgrade;
mod wait_ready;
