//! The raw invocation: which command, the launcher's options, and the SGLang tokens after them.
//!
//! `sglang-launch <SGLang args>` is the drop-in form of `sglang-launch run`. For `run`, `check`
//! and `plan`, launcher options end at `--` or at the first token that is not one of them; the
//! SGLang tokens never pass through clap, so they reach SGLang byte for byte.

mod adopt;
pub mod cli;
mod config;
pub(crate) mod context;
mod flags;
mod launch;
mod observed;
mod profiled;
mod profiles;
mod service;
pub mod split;
mod target;
mod upgrade;

use std::ffi::OsString;

use clap::FromArgMatches;

use crate::exit;
use crate::facts::Topology;
use crate::plan::{self, Fatal};
use crate::report;
use crate::rules::Code;

use cli::{Cli, Command};
use context::Context;

/// What the `docs` layer prints for `completions`, `man` and the hidden `__complete`: that
/// layer sits above this one, so the binary hands it in.
pub(crate) type Docs = fn(&Command) -> String;

pub fn main(docs: Docs) -> i32 {
    let argv: Vec<OsString> = std::env::args_os().collect();
    match run_argv(argv, docs) {
        Ok(code) => code,
        Err(f) => {
            crate::out::report_line(&format!("sglang-launch: error: {}", f.message));
            for n in &f.notes {
                crate::out::report_line(&format!("  {n}"));
            }
            f.code
        }
    }
}

/// Parses the argv and runs the command; returns the exit code (or never returns, on exec).
/// `SGLANG_LAUNCH_*` variables that no launcher option reads: a typo there would silently drop
/// a setting (say, the topology file), so say so with the nearest real name.
fn unknown_launcher_env() {
    if !launcher_env_set() {
        return;
    }
    let cmd = cli::command_ref();
    let mut known: Vec<String> = cmd
        .get_subcommands()
        .flat_map(|s| s.get_arguments())
        .filter_map(|a| a.get_env().map(|e| e.to_string_lossy().into_owned()))
        .collect();
    known.extend(
        crate::settings::registry::VARS
            .iter()
            .map(|v| v.name.to_owned()),
    );
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if !name.starts_with("SGLANG_LAUNCH_") || known.iter().any(|k| *k == name) {
            continue;
        }
        let hint = known
            .iter()
            .map(|k| (strsim::jaro_winkler(&name, k), k))
            .filter(|(score, _)| *score > 0.9)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, k)| format!("; did you mean {k}?"))
            .unwrap_or_default();
        crate::out::warn(&format!(
            "{name} is not a launcher setting and is ignored{hint}"
        ));
    }
}

/// Empty `SGLANG_LAUNCH_*` values mean unset (unit files and templates write `NAME=`), and a
/// boolean one must read as a boolean: checked here so the message names the variable.
fn normalize_launcher_env() -> Result<(), Fatal> {
    // Most runs set no launcher variable: building the definition would be all they cost.
    if !launcher_env_set() {
        return Ok(());
    }
    // Built apart from `command_ref`, which must only see the environment made here.
    let cmd = &<Cli as clap::CommandFactory>::command();
    let bools: Vec<String> = cmd
        .get_subcommands()
        .flat_map(|s| s.get_arguments())
        .filter(|a| matches!(a.get_action(), clap::ArgAction::SetTrue))
        .filter_map(|a| a.get_env().map(|e| e.to_string_lossy().into_owned()))
        .collect();
    for (name, value) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if !name.starts_with("SGLANG_LAUNCH_") {
            continue;
        }
        // Settings are text: a value that is not UTF-8 would be dropped or mangled unseen.
        let Some(value) = value.to_str() else {
            return Err(Fatal::usage(format!(
                "{name}={} is not valid UTF-8: launcher settings are UTF-8 text; \
                 for a path, use a UTF-8 name (a symlink to it)",
                value.to_string_lossy()
            )));
        };
        let value = value.trim().to_ascii_lowercase();
        if value.is_empty() {
            // SAFETY: called first thing in `main`, before any other thread exists.
            unsafe { std::env::remove_var(&name) };
        } else if bools.contains(&name)
            && !matches!(
                value.as_str(),
                "1" | "0" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "t" | "f"
            )
        {
            return Err(Fatal::usage(format!(
                "{name}={value} is not a boolean: use 1/0, true/false, yes/no or on/off"
            )));
        } else if is_count(&name) && value.parse::<u64>().map_or(true, |n| n == 0) {
            return Err(Fatal::usage(format!(
                "{name}={value} is not a whole number above 0"
            )));
        } else if let Some(choices) = choices_of(cmd, &name)
            && !choices.contains(&value)
        {
            return Err(Fatal::usage(format!(
                "{name}={value} is not one of {}",
                choices.join(", ")
            )));
        }
    }
    Ok(())
}

/// Whether any `SGLANG_LAUNCH_*` variable is set.
fn launcher_env_set() -> bool {
    std::env::vars_os().any(|(n, _)| n.as_encoded_bytes().starts_with(b"SGLANG_LAUNCH_"))
}

/// Whether the variable holds a count (a whole number above 0).
fn is_count(var: &str) -> bool {
    use crate::settings::registry::{Kind, VARS};
    VARS.iter().any(|v| v.name == var && v.kind == Kind::Count)
}

/// The values an option read from `var` may take, when it has a fixed set (`--mode`).
fn choices_of(cmd: &clap::Command, var: &str) -> Option<Vec<String>> {
    let arg = cmd
        .get_subcommands()
        .flat_map(|s| s.get_arguments())
        .find(|a| a.get_env().is_some_and(|e| e == var))?;
    if matches!(arg.get_action(), clap::ArgAction::SetTrue) {
        return None;
    }
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .map(|v| v.get_name().to_owned())
        .collect();
    (!values.is_empty()).then_some(values)
}

pub(crate) fn run_argv(argv: Vec<OsString>, docs: Docs) -> Result<i32, Fatal> {
    // Completion runs on every TAB: a word about the environment there would garble the line.
    if argv.get(1).is_none_or(|a| a != cli::COMPLETE) {
        normalize_launcher_env()?;
        unknown_launcher_env();
    }
    let (launcher, sglang_tokens, form) = split::split_form(&argv);
    let Ok((launcher, sglang_tokens, earlier)) = adopt::adopt(launcher, sglang_tokens, form) else {
        return Ok(exit::USAGE);
    };
    not_utf8(&launcher)?;
    let matches = match cli::command().try_get_matches_from(&launcher) {
        Ok(m) => m,
        Err(e) if e.use_stderr() => {
            crate::out::report(&ours(&shown_error(e, &launcher)));
            return Ok(exit::USAGE);
        }
        Err(e) => {
            print_out(&e.render().to_string())?;
            return Ok(exit::OK);
        }
    };
    let cli = Cli::from_arg_matches(&matches).map_err(|e| Fatal::usage(e.to_string()))?;
    if let Some(code) = reject_stray(&cli.command) {
        return Ok(code);
    }
    // The one context of the run, for the commands that read the launcher's settings.
    match context_profile(&cli.command) {
        Some(profile) => {
            let ctx = Context::build(&matches, &profile)?.reusing(earlier);
            with_context(cli.command, &ctx, sglang_tokens)
        }
        None => without_context(cli.command, &matches, docs),
    }
}

/// The profile option of a command that reads the launcher's settings (the default for those
/// without one); `None` for a command that reads none.
fn context_profile(command: &Command) -> Option<cli::ProfileArg> {
    match command {
        Command::Run(a) => Some(a.opts.profile.clone()),
        Command::Check(a) => Some(a.opts.profile.clone()),
        Command::Plan(a) => Some(a.opts.profile.clone()),
        Command::Config(cli::ConfigCommand::Show(a)) => Some(a.profile.clone()),
        Command::Upgrade(_) | Command::Detect(_) | Command::Flags(_) => {
            Some(cli::ProfileArg::default())
        }
        _ => None,
    }
}

fn with_context(command: Command, ctx: &Context, tokens: Vec<OsString>) -> Result<i32, Fatal> {
    let show = |print_args, show_secrets| launch::Show {
        print_args,
        show_secrets,
    };
    match command {
        Command::Run(a) => launch::run(ctx, &output(&a.opts), tokens, a.dry_run),
        Command::Check(a) => launch::plan_cmd(ctx, &output(&a.opts), tokens, show(false, false)),
        Command::Plan(a) => launch::plan_cmd(
            ctx,
            &output(&a.opts),
            tokens,
            show(a.print_args, a.show_secrets),
        ),
        Command::Upgrade(a) => upgrade::upgrade(&a, tokens, ctx),
        Command::Detect(a) => detect(&a, ctx),
        Command::Flags(f) => flags::command(&f, ctx),
        Command::Config(cli::ConfigCommand::Show(a)) => config::show(a.json, ctx),
        // `context_profile` sends only the commands above here.
        _ => Err(misrouted()),
    }
}

fn without_context(command: Command, matches: &clap::ArgMatches, docs: Docs) -> Result<i32, Fatal> {
    match command {
        Command::Rules(a) => {
            print_out(&crate::rules::render_list(a.json))?;
            Ok(exit::OK)
        }
        Command::Explain(a) => match crate::rules::lookup(&a.rule) {
            Ok(rule) => {
                print_out(&crate::rules::render_explain(rule))?;
                Ok(exit::OK)
            }
            Err(e) => Err(Fatal::usage(e.to_string())),
        },
        // Each profile is planned with its own `[launcher]` table over the same layers.
        Command::Profiles(p) => profiles::command(&p, &context::Layers::read(matches)),
        c @ (Command::Completions(_) | Command::Man | Command::Complete(_)) => {
            print_docs(&docs(&c))?;
            Ok(exit::OK)
        }
        Command::SystemdUnit(a) => service::systemd_unit(&a),
        Command::WaitReady(a) => service::wait_ready(&a),
        Command::Observed(a) => observed::list(a.json),
        _ => Err(misrouted()),
    }
}

/// A command sent to the dispatcher for the other kind: a bug, said as one (never a panic).
fn misrouted() -> Fatal {
    Fatal::usage("internal error: command dispatched to the wrong handler")
}

/// A launcher option or value that is not UTF-8: its settings are text, and clap would only
/// say that some argument is not. SGLang's own tokens (after `--`) may be any bytes.
fn not_utf8(launcher: &[OsString]) -> Result<(), Fatal> {
    match launcher.iter().skip(1).find(|t| t.to_str().is_none()) {
        Some(t) => Err(Fatal::usage(format!(
            "launcher argument '{}' is not valid UTF-8: launcher options take UTF-8 text; \
             for a path, use a UTF-8 name (a symlink to it)",
            t.to_string_lossy()
        ))),
        None => Ok(()),
    }
}

/// Tokens that clap put into `SGLANG_ARGS` can only come from before a `--`, where only
/// launcher options belong: reject them like clap rejects an unknown option.
fn reject_stray(command: &Command) -> Option<i32> {
    let (name, stray) = match command {
        Command::Run(a) => ("run", &a.opts.sglang_args),
        Command::Check(a) => ("check", &a.opts.sglang_args),
        Command::Plan(a) => ("plan", &a.opts.sglang_args),
        Command::Upgrade(a) => ("upgrade", &a.sglang_args),
        _ => return None,
    };
    let first = stray.first()?.to_string_lossy().into_owned();
    let mut cmd = cli::command();
    let sub = cmd.find_subcommand_mut(name)?;
    let longs: Vec<String> = sub
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    let wanted = first.split('=').next().unwrap_or(&first);
    let hint = longs
        .iter()
        .map(|l| (strsim::jaro_winkler(wanted, l), l))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, l)| format!("\n\n  tip: a similar launcher option exists: '{l}'"))
        .unwrap_or_default();
    let err = sub.error(
        clap::error::ErrorKind::UnknownArgument,
        format!(
            "unexpected argument '{}' before `--`: only sglang-launch options go there, SGLang's arguments go after it{hint}",
            crate::out::escape(&first)
        ),
    );
    crate::out::report(&ours(&err));
    Some(exit::USAGE)
}

/// clap's error for a line whose words hold control characters, told about the words with
/// those escaped: clap quotes what the user typed, and a newline there would start a line of
/// its own. Escaping does not change which error it is.
fn shown_error(e: clap::Error, launcher: &[OsString]) -> clap::Error {
    let escaped: Vec<OsString> = launcher
        .iter()
        .map(|w| match w.to_str() {
            Some(s) => crate::out::escape(s).into(),
            None => w.clone(),
        })
        .collect();
    if escaped == launcher {
        return e;
    }
    match cli::command().try_get_matches_from(&escaped) {
        Err(again) if again.kind() == e.kind() => again,
        _ => e,
    }
}

/// clap's error text with the launcher's prefix, as every other error of the launcher has.
fn ours(e: &clap::Error) -> String {
    let text = e.render().to_string();
    match text.strip_prefix("error: ") {
        Some(rest) => format!("sglang-launch: error: {rest}"),
        None => text,
    }
}

fn output(o: &cli::PlanOptions) -> launch::Output {
    launch::Output {
        json: o.json,
        json_file: o.json_file.clone(),
    }
}

/// The command's answer on stdout (redacted, see [`crate::out`]). A reader that went away
/// (`| head`) is no error; any other failed write (a full disk, a closed stdout) is one: the
/// user asked for this text and did not get it.
pub(crate) fn print_out(text: &str) -> Result<(), Fatal> {
    written(crate::out::stdout(text))
}

/// One line of answer on stdout ([`print_out`]), its data escaped: a path or a name never
/// breaks it.
pub(crate) fn print_line(line: &str) -> Result<(), Fatal> {
    written(crate::out::stdout_line(line))
}

/// The launcher's generated documents (completion scripts and replies, the man page) on
/// stdout ([`print_out`], tabs kept for the completion protocol).
pub(crate) fn print_docs(text: &str) -> Result<(), Fatal> {
    written(crate::out::stdout_docs(text))
}

/// A human report on stdout ([`print_out`]'s errors), in ASCII where the locale is not UTF-8.
pub(crate) fn print_report(text: &str) -> Result<(), Fatal> {
    written(crate::out::stdout_report(text))
}

/// A command line asked for with `--print-args` (`plan`, `upgrade`): `real` byte for byte under
/// `--show-secrets`, else `masked`, with a note on stderr when masking changed it (the line
/// printed will not run as is).
pub(crate) fn print_args(masked: &str, real: &str, show_secrets: bool) -> Result<(), Fatal> {
    if show_secrets {
        return print_verbatim(real);
    }
    if masked != real {
        crate::out::report_line(
            "sglang-launch: note: secret values are shown as *** and the line will not run as is; --show-secrets prints them",
        );
    }
    print_out(masked)
}

/// `text` byte for byte, unredacted (`--show-secrets`), with [`print_out`]'s errors.
pub(crate) fn print_verbatim(text: &str) -> Result<(), Fatal> {
    let mut t = text.to_owned();
    if !t.ends_with('\n') {
        t.push('\n');
    }
    written(crate::out::stdout_bytes(t.as_bytes()))
}

fn written(r: std::io::Result<()>) -> Result<(), Fatal> {
    match r {
        Err(e) if !crate::out::is_broken_pipe(&e) => Err(Fatal::usage(format!(
            "cannot write the output to stdout: {e}"
        ))),
        _ => Ok(()),
    }
}

/// Launcher options written among SGLang's arguments (`check -- --model-path m --json`): SGLang
/// would reject or misread them, and the user most likely meant them for us.
fn misplaced(tokens: &[OsString], sglang_knows: impl Fn(&str) -> bool) -> Option<String> {
    let cmd = cli::command_ref();
    let ours: Vec<String> = ["plan", "run"]
        .iter()
        .filter_map(|n| cmd.find_subcommand(n))
        .flat_map(|c| c.get_arguments())
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect();
    let mut found: Vec<String> = tokens
        .iter()
        .filter_map(|t| t.to_str())
        .map(|t| t.split('=').next().unwrap_or(t).to_owned())
        .filter(|t| ours.contains(t) && !sglang_knows(t))
        .collect();
    found.dedup();
    (!found.is_empty()).then(|| {
        format!(
            "hint: {} {} sglang-launch's, not SGLang's: put launcher options before `--` \
             (or before the first SGLang argument)",
            found.join(", "),
            if found.len() == 1 { "is" } else { "are" }
        )
    })
}

fn misplaced_hint(outcome: &plan::Outcome) {
    let argparse_error = outcome
        .findings
        .iter()
        .any(|f| f.code == Code::ARG001 && !f.fixed);
    if argparse_error && let Some(h) = misplaced(&outcome.args.tokens, |t| outcome.args.knows(t)) {
        crate::out::report_line(&format!("sglang-launch: {h}"));
    }
}

/// The misplaced-option hint, if any, under an input error's message.
fn hinted(e: Fatal, hint: Option<String>) -> Fatal {
    match hint {
        Some(h) => e.with_note(h),
        None => e,
    }
}

/// Plans (from the profile, when one is named), adding the misplaced-option hint to an input
/// error (say, no driver because `--topology` went after the SGLang arguments). Under `--mode
/// warn` a profile for other hardware is a warning.
fn build(
    ctx: &Context,
    prepared: profiled::Prepared,
    gpus: Option<Topology>,
    pass_through: Option<String>,
    warn: bool,
) -> Result<plan::Outcome, Fatal> {
    let hint = misplaced(&prepared.tokens, |_| false);
    let mut req = ctx.request(prepared.tokens, prepared.env, gpus);
    req.env_changes = prepared.changes;
    req.pass_through = pass_through;
    let outcome = plan::build(&req).map_err(|e| hinted(e, hint))?;
    if let Some(p) = &ctx.profile {
        // A profile's hardware conditions describe NVIDIA GPUs: a pass-through has none.
        match profiled::check_hardware(p, &outcome.topology) {
            _ if req.pass_through.is_some() => {}
            Err(f) if warn => crate::out::warn(&format!("{} (--mode warn)", f.message)),
            other => other?,
        }
        let name = crate::out::escape(&p.name);
        crate::out::report_line(&format!(
            "sglang-launch: profile {name} ({})",
            crate::out::escape(&p.chain.join(" extends "))
        ));
        for o in &prepared.overrides {
            let o = crate::out::escape(o);
            crate::out::report_line(&format!("sglang-launch: profile {name}: {o}"));
        }
    }
    outcome.secrets.install();
    Ok(outcome)
}

fn detect(a: &cli::DetectArgs, ctx: &Context) -> Result<i32, Fatal> {
    let s = ctx.settings();
    let mut topo = match plan::load_topology(None, s.nvml_lib.as_deref()) {
        Ok(t) => t,
        Err(e) => other_accelerators(s.device_root.as_deref()).ok_or_else(|| {
            Fatal::usage(e.to_string()).with_note(
                "(`detect` reads this machine's GPUs: on a GPU machine, `sglang-launch detect --json > box.json` \
                 writes the file that check/plan read with --topology box.json)",
            )
        })?,
    };
    // The host around the GPUs, so a plan for this machine elsewhere sees it too.
    let python = ctx.interpreter();
    let packages = python
        .found
        .then(|| crate::facts::Packages::detect(Some(&python.path)).with_toolkit(&ctx.env));
    topo.host = Some(crate::facts::host_record::HostRecord::probe(
        packages.as_ref(),
    ));
    if a.json {
        print_out(&topo.to_json_pretty())?;
    } else {
        print_report(&report::topology(&topo))?;
    }
    Ok(exit::OK)
}

/// No NVIDIA driver: a host with another accelerator is still described (no GPUs, its
/// accelerators listed), so an offline check of it passes through as the drop-in would.
fn other_accelerators(root: Option<&std::path::Path>) -> Option<crate::facts::Topology> {
    let root = root.unwrap_or(std::path::Path::new("/"));
    let found = crate::facts::accelerators::other(root);
    (!found.is_empty()).then(|| {
        crate::facts::Topology::without_gpus(
            "sglang-launch detect (device nodes)",
            crate::facts::accelerators::listed(&found),
        )
    })
}
