//! The environment the server will see (after planned changes), as UTF-8-lossy name → value.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Env {
    pub vars: BTreeMap<String, String>,
}

impl Env {
    pub fn from_process() -> Self {
        Env {
            vars: std::env::vars_os()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        v.to_string_lossy().into_owned(),
                    )
                })
                .collect(),
        }
    }

    pub fn from_pairs<I: IntoIterator<Item = (S, S)>, S: Into<String>>(pairs: I) -> Self {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// True for a set variable whose value reads as "on" (1/true/yes/on, case-insensitive).
    pub fn truthy(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
    }
}
