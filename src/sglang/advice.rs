//! Upgrade advice: what changes between two releases' flag sets and environment registries,
//! and where each option of one release went in the other. Pure: the command line and the
//! `--config` file are rewritten by the sibling `rewrite` module.

use serde::Serialize;
use serde_json::Value;

use super::envs::Registry;
use super::flagset::{Action, ActionKind, FlagSet};
use super::renames;

/// Where an option of the release in use went in the target release.
#[derive(Debug, Clone)]
pub(crate) enum Fate<'a> {
    /// Same spelling, a real (not deprecated) option there.
    Kept(&'a Action),
    /// Spelled differently there (an alias left, a rename, or a deprecation pointing to it).
    Renamed { to: String, action: &'a Action },
    /// Still accepted there, but deprecated (warns, or stops the launch).
    Deprecated { replacement: Option<String> },
    /// Not accepted there.
    Removed,
}

fn is_deprecated(a: &Action) -> bool {
    matches!(
        a.kind,
        ActionKind::Deprecated | ActionKind::DeprecatedStoreConst
    ) || (a.deprecated_for.is_some() && a.kind == ActionKind::StoreTrue)
}

fn long(a: &Action) -> Option<&str> {
    a.option_strings
        .iter()
        .find(|o| o.starts_with("--"))
        .map(String::as_str)
}

/// Where the option string `option` (of `from`'s action `a`) goes in `to`.
pub(crate) fn fate<'a>(a: &Action, option: &str, to: &'a FlagSet) -> Fate<'a> {
    if let Some(t) = to.action(option) {
        if is_deprecated(t) && !is_deprecated(a) {
            let replacement = t.deprecated_for.clone();
            // A deprecation that names a plain option of the target is a rename.
            if let Some(new) = replacement.as_deref()
                && let Some(action) = to.action(new)
            {
                return Fate::Renamed {
                    to: new.to_owned(),
                    action,
                };
            }
            return Fate::Deprecated { replacement };
        }
        return Fate::Kept(t);
    }
    // Another spelling of the same action, a known rename, or what `from` deprecated it for.
    let candidates = a
        .option_strings
        .iter()
        .map(String::as_str)
        .chain(renames::counterpart(option))
        .chain(a.deprecated_for.as_deref());
    for c in candidates.filter(|c| c.starts_with("--") && *c != option) {
        if let Some(action) = to.action(c).filter(|t| !is_deprecated(t)) {
            return Fate::Renamed {
                to: c.to_owned(),
                action,
            };
        }
    }
    Fate::Removed
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct Renamed {
    pub(crate) from: String,
    pub(crate) to: String,
    /// How the target release converts an environment variable's value on the way
    /// (`invert_bool`, `ms_to_s`); absent when it copies it as it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) converted: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct DeprecatedIn {
    pub(crate) option: String,
    /// What the target release says to use instead, when it says.
    pub(crate) replacement: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct DefaultChanged {
    pub(crate) option: String,
    pub(crate) from: Value,
    pub(crate) to: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct ChoicesRemoved {
    pub(crate) option: String,
    pub(crate) choices: Vec<Value>,
}

/// Every option difference between two releases, each list in the first release's parser order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FlagDiff {
    pub(crate) renamed: Vec<Renamed>,
    pub(crate) removed: Vec<String>,
    pub(crate) deprecated: Vec<DeprecatedIn>,
    pub(crate) default_changed: Vec<DefaultChanged>,
    pub(crate) choices_removed: Vec<ChoicesRemoved>,
    /// Options only the target release has.
    pub(crate) added: Vec<String>,
}

impl FlagDiff {
    pub(crate) fn between(from: &FlagSet, to: &FlagSet) -> FlagDiff {
        let mut d = FlagDiff::default();
        for a in from.actions.iter().filter(|a| a.kind != ActionKind::Help) {
            let Some(opt) = long(a) else { continue };
            match fate(a, opt, to) {
                Fate::Kept(t) => d.compare_values(opt, a, t),
                Fate::Renamed { to: new, action } => {
                    d.renamed.push(Renamed {
                        from: opt.to_owned(),
                        to: new,
                        converted: None,
                    });
                    d.compare_values(opt, a, action);
                }
                Fate::Deprecated { replacement, .. } => d.deprecated.push(DeprecatedIn {
                    option: opt.to_owned(),
                    replacement,
                }),
                Fate::Removed => d.removed.push(opt.to_owned()),
            }
        }
        let reached: Vec<&str> = d.renamed.iter().map(|r| r.to.as_str()).collect();
        d.added = to
            .actions
            .iter()
            .filter(|t| t.kind != ActionKind::Help && !is_deprecated(t))
            .filter(|t| !t.option_strings.iter().any(|o| from.action(o).is_some()))
            .filter_map(long)
            .filter(|o| !reached.contains(o))
            .map(str::to_owned)
            .collect();
        d
    }

    fn compare_values(&mut self, opt: &str, a: &Action, t: &Action) {
        let value_kinds = !is_deprecated(a) && !is_deprecated(t);
        if value_kinds && !a.default_is_suppress && !t.default_is_suppress && a.default != t.default
        {
            self.default_changed.push(DefaultChanged {
                option: opt.to_owned(),
                from: a.default.clone(),
                to: t.default.clone(),
            });
        }
        if let (Some(old), Some(new)) = (&a.choices, &t.choices) {
            let gone: Vec<Value> = old.iter().filter(|c| !new.contains(c)).cloned().collect();
            if !gone.is_empty() {
                self.choices_removed.push(ChoicesRemoved {
                    option: opt.to_owned(),
                    choices: gone,
                });
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub(crate) struct EnvDefaultChanged {
    pub(crate) name: String,
    pub(crate) from: Value,
    pub(crate) to: Value,
}

/// Environment-variable differences between two releases' registries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct EnvDiff {
    pub(crate) renamed: Vec<Renamed>,
    /// Read by the first release, no longer read by the target.
    pub(crate) removed: Vec<String>,
    pub(crate) default_changed: Vec<EnvDefaultChanged>,
}

impl EnvDiff {
    pub(crate) fn between(from: &Registry, to: &Registry) -> EnvDiff {
        let mut d = EnvDiff::default();
        let mut names: Vec<&str> = from.names().collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            if let Some((new, converted)) = env_rename(name, to) {
                d.renamed.push(Renamed {
                    from: name.to_owned(),
                    to: new,
                    converted,
                });
            } else if !to.knows(name) {
                d.removed.push(name.to_owned());
            } else if let (Some(a), Some(b)) = (from.var(name), to.var(name))
                && a.default != b.default
            {
                d.default_changed.push(EnvDefaultChanged {
                    name: name.to_owned(),
                    from: a.default.clone(),
                    to: b.default.clone(),
                });
            }
        }
        d
    }
}

/// The name the target reads instead of `name`, with how it converts the value: a deprecation
/// with a replacement, or a variable that keeps `name` only as its alias.
fn env_rename(name: &str, to: &Registry) -> Option<(String, Option<String>)> {
    if to.var(name).is_some() {
        return None;
    }
    let deprecated = to
        .deprecated
        .iter()
        .find(|d| d.name == name)
        .and_then(|d| Some((d.replacement.clone()?, d.transform.clone())));
    deprecated.or_else(|| {
        to.registry
            .iter()
            .find(|e| e.alias.as_deref() == Some(name))
            .map(|e| (e.name.clone(), None))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sglang::flagset;

    fn set(v: &str) -> &'static FlagSet {
        flagset::get(v).unwrap()
    }

    /// 0.5.18 forwards the old TP-imbalance opt-out into its ENABLE successor inverted: the
    /// upgrade says so.
    #[test]
    fn env_renames_carry_the_value_conversion() {
        let (a, b) = (
            crate::sglang::envs::for_version("0.5.17").0,
            crate::sglang::envs::for_version("0.5.18").0,
        );
        let d = EnvDiff::between(a, b);
        let conv = |name: &str| {
            let r = d.renamed.iter().find(|r| r.from == name).expect(name);
            (r.to.as_str(), r.converted.as_deref())
        };
        assert_eq!(
            conv("SGLANG_DISABLE_TP_MEMORY_INBALANCE_CHECK"),
            (
                "SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK",
                Some("invert_bool")
            )
        );
    }

    #[test]
    fn a_rename_without_an_alias_is_found_from_the_rename_table() {
        let d = FlagDiff::between(set("0.5.10.post1"), set("0.5.23"));
        assert!(
            d.renamed
                .iter()
                .any(|r| r.from == "--cuda-graph-max-bs" && r.to == "--cuda-graph-max-bs-decode"),
            "{:?}",
            d.renamed
        );
        assert!(!d.removed.contains(&"--cuda-graph-max-bs".to_owned()));
        assert!(!d.added.contains(&"--cuda-graph-max-bs-decode".to_owned()));
    }

    #[test]
    fn downgrading_reverses_the_rename_and_lists_what_the_older_release_lacks() {
        let d = FlagDiff::between(set("0.5.23"), set("0.5.10.post1"));
        assert!(
            d.renamed
                .iter()
                .any(|r| r.from == "--cuda-graph-max-bs-decode" && r.to == "--cuda-graph-max-bs")
        );
        let up = FlagDiff::between(set("0.5.10.post1"), set("0.5.23"));
        for added in &up.added {
            assert!(d.removed.contains(added), "{added}");
        }
    }

    #[test]
    fn same_release_has_no_differences() {
        assert_eq!(
            FlagDiff::between(set("0.5.5"), set("0.5.5")),
            FlagDiff::default()
        );
    }

    #[test]
    fn every_option_of_the_older_release_is_accounted_for() {
        let (from, to) = (set("0.4.10.post2"), set("0.5.23"));
        let d = FlagDiff::between(from, to);
        for a in from.actions.iter().filter(|a| a.kind != ActionKind::Help) {
            let opt = long(a).unwrap();
            let listed = d.removed.iter().any(|o| o == opt)
                || d.renamed.iter().any(|r| r.from == opt)
                || d.deprecated.iter().any(|r| r.option == opt)
                || to.action(opt).is_some();
            assert!(listed, "{opt}");
        }
    }
}
