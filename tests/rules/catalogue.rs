//! Across the families: every checked rule has cases, fixes converge and use options the version
//! knows, the catalogue's data agrees with its checks, and every rule has a message snapshot.

use std::collections::BTreeSet;

use sglang_launch::rules::{self, ArgEdit, Fix, Severity};
use sglang_launch::sglang::flagset::{self, KNOWN_VERSIONS};

use crate::all_cases;
use crate::support::world;

/// PyPI releases without an embedded flag set that some rules single out.
const OLDER_RELEASES: &[&str] = &["0.4.5", "0.4.6.post5", "0.4.7", "0.4.8.post1"];

#[test]
fn every_checked_rule_has_a_firing_and_a_quiet_case() {
    let cs = all_cases();
    for r in rules::all().iter().filter(|r| r.check.is_some()) {
        assert!(
            cs.iter().any(|c| c.code == r.code && c.fires),
            "{} has no firing case",
            r.code
        );
        assert!(
            cs.iter().any(|c| c.code == r.code && !c.fires),
            "{} has no quiet case",
            r.code
        );
    }
}

#[test]
fn fixes_converge_the_rule_stops_firing() {
    let mut fixed = 0;
    for case in all_cases().iter().filter(|c| c.fires) {
        let mut w = world(case);
        let hits = w.hits(case.code);
        let fixes: Vec<Fix> = hits.iter().filter_map(|h| h.fix.clone()).collect();
        if fixes.is_empty() {
            continue;
        }
        for f in &fixes {
            assert!(
                !f.summary.is_empty() && !f.summary.contains('\n'),
                "{}",
                case.code
            );
            assert!(
                !f.args.is_empty() || !f.env.is_empty(),
                "{}: empty fix",
                case.code
            );
            w.apply(f);
        }
        fixed += 1;
        let after = w.hits(case.code);
        assert!(
            after.iter().all(|h| h.fix.is_none()) && after.len() < hits.len() || after.is_empty(),
            "{} still fires after its fix: {:?}",
            case.code,
            after.iter().map(|h| &h.message).collect::<Vec<_>>()
        );
        // Idempotent: applying the same fixes again changes nothing.
        let (args, env) = (w.args.values.clone(), w.env.clone());
        for f in &fixes {
            w.apply(f);
        }
        assert_eq!(args, w.args.values, "{}", case.code);
        assert_eq!(env, w.env, "{}", case.code);
    }
    assert!(fixed >= 15, "only {fixed} cases exercised a fix");
}

#[test]
fn fixes_use_options_the_version_knows() {
    for case in all_cases().iter().filter(|c| c.fires) {
        let w = world(case);
        for h in w.hits(case.code) {
            for e in h.fix.iter().flat_map(|f| &f.args) {
                let opt = match e {
                    ArgEdit::Remove { option }
                    | ArgEdit::Set { option, .. }
                    | ArgEdit::AddFlag { option }
                    | ArgEdit::NamePositional { option } => option,
                    ArgEdit::Rename { to, .. } => to,
                    // Drops an option the release refuses: unknown to it by design.
                    ArgEdit::Drop { .. } | ArgEdit::DropOption { .. } => continue,
                };
                assert!(
                    w.args.knows(opt),
                    "{}: {opt} unknown to {}",
                    case.code,
                    case.version
                );
            }
        }
    }
}

/// Every option a fix names exists, so spelled, in every embedded release the rule applies to
/// (not only the case's own): a rule's version range must not reach a release whose flag set
/// lacks the option its fix writes or removes.
#[test]
fn fixes_name_options_every_release_in_range_has() {
    let mut checked = 0;
    for case in all_cases().iter().filter(|c| c.fires) {
        let rule = rules::lookup(case.code).unwrap();
        for v in KNOWN_VERSIONS.iter().copied() {
            let flags = flagset::get(v).unwrap();
            if !rule.applies_to(v) || case.args.iter().any(|(o, _)| flags.action(o).is_none()) {
                continue;
            }
            let at_v = case.clone().version(v);
            for h in world(&at_v).hits(case.code) {
                for e in h.fix.iter().flat_map(|f| &f.args) {
                    let opt = match e {
                        ArgEdit::Remove { option }
                        | ArgEdit::Set { option, .. }
                        | ArgEdit::AddFlag { option }
                        | ArgEdit::NamePositional { option } => option,
                        ArgEdit::Rename { to, .. } => to,
                        ArgEdit::Drop { .. } | ArgEdit::DropOption { .. } => continue,
                    };
                    assert!(
                        flags.action(opt).is_some(),
                        "{} (versions {}): its fix names {opt}, which SGLang {v} lacks",
                        case.code,
                        rule.versions
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 50, "only {checked} fix edits checked");
}

/// No rule calls an option wrong in a release that has it: every option string of every
/// embedded release, written on the command line of that release, draws no FLAG001/FLAG004
/// and no error from any FLAG rule. (Options a release knows only to raise on are refusals
/// SGLang makes itself.)
#[test]
fn no_flag_rule_blocks_an_option_the_release_has() {
    for v in KNOWN_VERSIONS.iter().copied() {
        let options: Vec<&'static str> = flagset::get(v)
            .unwrap()
            .actions
            .iter()
            .filter(|a| !a.refuses())
            .flat_map(|a| a.option_strings.iter())
            .map(|o| &*o.clone().leak())
            .filter(|o| o.starts_with("--") && *o != "--help")
            .collect();
        let w = world(&crate::support::c("X").version(v).tokens(&options));
        let ctx = w.ctx();
        let blocking: Vec<String> = rules::evaluate(&ctx, &rules::RuleSettings::default())
            .into_iter()
            .filter(|h| h.code.as_str().starts_with("FLAG"))
            .filter(|h| h.severity == Severity::Error || h.code.as_str() == "FLAG004")
            .map(|h| format!("{}: {}", h.code, h.message))
            .collect();
        assert!(blocking.is_empty(), "SGLang {v}: {blocking:#?}");
    }
}

#[test]
fn declared_fix_availability_matches_the_checks() {
    use sglang_launch::rules::FixAvailability;
    let mut seen_fix: BTreeSet<&str> = BTreeSet::new();
    for case in all_cases().iter().filter(|c| c.fires) {
        let rule = rules::lookup(case.code).unwrap();
        for h in world(case).hits(case.code) {
            match rule.fix {
                FixAvailability::None => assert!(h.fix.is_none(), "{} declares no fix", h.code),
                FixAvailability::Always => {
                    assert!(h.fix.is_some(), "{} declares a fix: {}", h.code, h.message)
                }
                FixAvailability::Sometimes => {}
            }
            if h.fix.is_some() {
                seen_fix.insert(h.code.as_str());
            }
        }
    }
    // A pipeline code's fix has no check to call: MEM015's is exercised through the binary
    // (tests/it/fit.rs and its message snapshot).
    for r in rules::all()
        .iter()
        .filter(|r| r.fix != FixAvailability::None && !r.emitted_by_pipeline())
    {
        assert!(
            seen_fix.contains(r.code),
            "{}: no case exercises its fix",
            r.code
        );
    }
}

fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

#[test]
fn catalogue_data_and_checks_agree() {
    let all = rules::all();
    assert!(all.len() >= 60, "{} rules", all.len());
    let mut codes = BTreeSet::new();
    let mut names = BTreeSet::new();
    for r in all {
        assert!(codes.insert(r.code), "duplicate code {}", r.code);
        assert!(names.insert(r.name), "duplicate name {}", r.name);
        assert!(
            is_kebab(r.name),
            "{}: name {} is not kebab-case",
            r.code,
            r.name
        );
        assert!(
            r.code.len() > r.family().len() && r.code[r.family().len()..].len() == 3,
            "{}: family + three digits",
            r.code
        );
        assert!(
            !r.summary.is_empty() && !r.summary.contains('\n'),
            "{}",
            r.code
        );
        assert!(
            !r.sources().is_empty() || r.no_source.is_some_and(|s| !s.is_empty()),
            "{}: needs a source URL or a reason",
            r.code
        );
        for u in &r.sources() {
            assert!(u.starts_with("https://"), "{}: {u}", r.code);
        }
        for section in ["## What it does", "## Why", "## Example", "## Fix"] {
            assert!(r.explanation.contains(section), "{}: no {section}", r.code);
        }
        // Every version range parses and selects at least one real release.
        assert!(
            KNOWN_VERSIONS
                .iter()
                .chain(OLDER_RELEASES)
                .any(|v| r.applies_to(v)),
            "{}: versions {} select no known release",
            r.code,
            r.versions
        );
    }
    // One file per code, nothing else in the directory.
    let dir = format!("{}/data/rules", env!("CARGO_MANIFEST_DIR"));
    let files: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let expected: BTreeSet<String> = codes.iter().map(|c| format!("{c}.md")).collect();
    assert_eq!(files, expected);
    for (old, new) in rules::REDIRECTS {
        assert!(!codes.contains(old), "redirected code {old} reused");
        assert!(codes.contains(new));
    }
}

#[test]
fn pipeline_codes_are_registered_without_checks() {
    let want = [
        ("ARG001", "invalid-sglang-arguments", Severity::Error),
        ("VER001", "sglang-version-fallback", Severity::Warning),
        ("VER002", "sglang-version-undetected", Severity::Warning),
        ("TOP001", "gpu-selection", Severity::Error),
        ("MEM001", "model-config-unavailable", Severity::Info),
        ("MEM002", "model-config-invalid", Severity::Warning),
        ("MEM003", "mem-fraction-too-high", Severity::Warning),
        ("MEM004", "mem-fraction-too-low", Severity::Error),
        ("MEM005", "does-not-fit", Severity::Error),
        ("MEM006", "cuda-graph-memory", Severity::Info),
        ("HUB001", "hub-access-denied", Severity::Error),
        ("HUB002", "hub-not-found", Severity::Error),
        ("HUB003", "hub-unreachable", Severity::Warning),
        ("MEM013", "model-facts-implausible", Severity::Warning),
        ("MEM015", "fit-to-memory", Severity::Warning),
    ];
    for (code, name, sev) in want {
        let r = rules::lookup(code).unwrap();
        assert_eq!((r.name, r.severity), (name, sev), "{code}");
        assert!(r.emitted_by_pipeline(), "{code}");
        let hit = rules::Finding::new(r.id, "m");
        assert_eq!(
            (hit.code.as_str(), hit.name(), hit.severity),
            (code, name, sev)
        );
    }
    let checked = rules::all().iter().filter(|r| r.check.is_some()).count();
    assert!(checked >= 60, "{checked} checks");
}

/// Adding a rule means adding its message snapshot: `<family>.rs` snapshots every checked rule's
/// firing cases, `pipeline.rs` the codes the pipeline emits. A snapshot of a code that is no
/// longer in the catalogue fails too.
#[test]
fn every_rule_has_a_message_snapshot() {
    let dir = format!("{}/tests/rules/snapshots", env!("CARGO_MANIFEST_DIR"));
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".snap"))
        .collect();
    let mut wanted = BTreeSet::new();
    for r in rules::all() {
        let file = if r.emitted_by_pipeline() {
            "pipeline".to_owned()
        } else {
            r.family().to_ascii_lowercase()
        };
        let suffix = format!("__{file}__{}.snap", r.code);
        let found: Vec<&String> = files.iter().filter(|n| n.ends_with(&suffix)).collect();
        assert_eq!(
            found.len(),
            1,
            "{}: want one snapshot *{suffix} in {dir} (run INSTA_UPDATE=always cargo test --test rules \
             and review it), found {found:?}",
            r.code
        );
        wanted.insert(found[0].clone());
    }
    let stale: Vec<&String> = files.difference(&wanted).collect();
    assert!(
        stale.is_empty(),
        "snapshots of no catalogue code: {stale:?}"
    );
}
