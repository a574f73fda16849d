//! `run` (and the drop-in form), `check` and `plan`: the mode, the target, the plan, where its
//! report goes, and the exec with the line that says what runs.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::context::Context;
use super::profiled::Prepared;
use super::target::{self, Target};
use super::{build, misplaced_hint, print_args, print_out};
use crate::exit;
use crate::facts::Env;
use crate::out::{report_line, warn};
use crate::plan::{self, Fatal};
use crate::report;
use crate::rules::Code;
use crate::settings::Mode;
use crate::sglang;

/// Where the plan's JSON goes, besides the human report.
pub(crate) struct Output {
    pub(crate) json: bool,
    pub(crate) json_file: Option<PathBuf>,
}

/// `check` and `plan`'s report flavour.
pub(crate) struct Show {
    pub(crate) print_args: bool,
    pub(crate) show_secrets: bool,
}

pub(crate) fn plan_cmd(
    ctx: &Context,
    out: &Output,
    tokens: Vec<OsString>,
    show: Show,
) -> Result<i32, Fatal> {
    let prepared = super::profiled::prepare(ctx, tokens, ctx.env.clone())?;
    crate::secrets::install_early(&prepared.tokens, &prepared.env);
    let (topology, pass_through) = match target::decide(ctx, &prepared.tokens, &prepared.env) {
        Target::Other(why) => (None, Some(why)),
        Target::NoDriver(f) => return Err(no_driver(f, &prepared.tokens)),
        Target::Nvidia(t) => (t.map(|t| *t), None),
    };
    if let Some(why) = &pass_through {
        report_line(&format!(
            "sglang-launch: pass-through: {why}; not planned, SGLang gets the command unchanged"
        ));
    }
    let outcome = build(ctx, prepared, topology, pass_through.clone(), false)?;
    let print_args = || {
        let masked = report::command_line(&outcome, false);
        print_args(
            &masked,
            &report::command_line(&outcome, true),
            show.show_secrets,
        )
    };
    if pass_through.is_some() && show.print_args {
        // What runs is the command as given: nothing is fixed for a server not planned.
        print_args()?;
        return Ok(outcome.exit_code());
    }
    misplaced_hint(&outcome);
    write_json_file(out, &outcome)?;
    if show.print_args {
        print_args()?;
    } else if out.json {
        print_out(&report::json(&outcome.plan))?;
    } else {
        super::print_report(&report::human(
            &outcome,
            report::use_color(&std::io::stdout()),
        ))?;
    }
    Ok(outcome.exit_code())
}

pub(crate) fn run(
    ctx: &Context,
    out: &Output,
    tokens: Vec<OsString>,
    dry_run: bool,
) -> Result<i32, Fatal> {
    let mode = ctx.settings().mode;
    let prepared = super::profiled::prepare(ctx, tokens, ctx.env.clone())?;
    crate::secrets::install_early(&prepared.tokens, &prepared.env);
    if mode == Mode::Off {
        report_line("sglang-launch: mode off: nothing checked or changed");
        return untouched(ctx, prepared, dry_run);
    }
    let topology = match target::decide(ctx, &prepared.tokens, &prepared.env) {
        Target::Other(why) => {
            report_line(&format!(
                "sglang-launch: pass-through: {why}; SGLang gets the command unchanged"
            ));
            return untouched(ctx, prepared, dry_run);
        }
        Target::NoDriver(f) if mode == Mode::Warn => {
            warn(&f.message);
            warn("launching unchecked (--mode warn)");
            return untouched(ctx, prepared, dry_run);
        }
        Target::NoDriver(f) => {
            let mut f = no_driver(f, &prepared.tokens);
            f.code = exit::NO_DRIVER;
            return Err(f);
        }
        Target::Nvidia(t) => t.map(|t| *t),
    };
    // Nothing to launch with: said once, before a report about a launch that cannot happen.
    if !dry_run {
        let python = ctx.interpreter();
        launchable(&python.path, python.found)?;
    }
    let outcome = build(ctx, prepared, topology, None, mode == Mode::Warn).map_err(|mut f| {
        if f.code == exit::BLOCKED {
            f.code = exit::CONFIG;
        }
        f
    })?;
    write_json_file(out, &outcome)?;
    // stdout belongs to SGLang: the report, JSON included, goes to stderr, best effort (a
    // closed or broken stderr never stops a valid launch).
    if out.json {
        report_line(&report::json(&outcome.plan));
    } else {
        crate::out::report(&report::human(
            &outcome,
            report::use_color(&std::io::stderr()),
        ));
    }
    misplaced_hint(&outcome);
    if outcome.exit_code() != exit::OK {
        let argparse = outcome
            .findings
            .iter()
            .any(|f| !f.fixed && f.code == Code::ARG001);
        if mode == Mode::Warn {
            warn("launching despite the errors above (--mode warn)");
        } else {
            report_line(&format!(
                "sglang-launch: not launching: {}",
                if argparse {
                    "SGLang would reject these arguments; correct them"
                } else {
                    "fix the errors above, --allow CODE to skip a rule, or --mode warn to launch anyway"
                }
            ));
            return Ok(exit::CONFIG);
        }
    }
    if dry_run {
        print_out(&report::command_line(&outcome, false))?;
        return Ok(exit::OK);
    }
    super::observed::record_run(&outcome);
    exec(
        &outcome.interpreter.path,
        &outcome.args,
        &outcome.env,
        report::argv(&outcome),
    )
}

/// The command as given (after the profile, if any): no facts read, no fixes.
fn untouched(ctx: &Context, prepared: Prepared, dry_run: bool) -> Result<i32, Fatal> {
    let interpreter = ctx.interpreter();
    // Only for masking secrets in what is printed: their option names are the same in every release.
    let args = sglang::parse(newest(), prepared.tokens);
    if dry_run {
        let changes = (&prepared.changes.masked(), &prepared.env);
        print_out(&report::shell_line(
            &interpreter.path,
            &args,
            changes,
            false,
        ))?;
        return Ok(exit::OK);
    }
    if !interpreter.found {
        return Err(not_found(&interpreter.path));
    }
    let mut argv: Vec<OsString> = vec![
        interpreter.path.clone().into(),
        "-m".into(),
        "sglang.launch_server".into(),
    ];
    argv.extend(args.tokens.iter().cloned());
    exec(&interpreter.path, &args, &prepared.env, argv)
}

fn newest() -> &'static sglang::FlagSet {
    let known = sglang::flagset::KNOWN_VERSIONS;
    sglang::flagset::get(known[known.len() - 1]).expect("newest flag set is embedded")
}

fn not_found(python: &Path) -> Fatal {
    Fatal {
        code: exit::NOT_FOUND,
        notes: Vec::new(),
        message: format!(
            "Python interpreter {} not found: install Python, or pass --python PATH (env SGLANG_LAUNCH_PYTHON)",
            python.display()
        ),
    }
}

/// The interpreter exists and has SGLang: otherwise exec would fail after the report.
/// (`check` and `plan` plan without either: VER002 says what the launch would lack.)
fn launchable(python: &Path, found: bool) -> Result<(), Fatal> {
    if !found {
        return Err(not_found(python));
    }
    if !crate::install::select::sglang_installed(Some(python)) {
        return Err(Fatal {
            code: exit::NOT_FOUND,
            notes: Vec::new(),
            message: format!(
                "SGLang is not installed for {}: `{} -m pip install sglang`, or pass --python PATH to the interpreter that has it",
                python.display(),
                python.display()
            ),
        });
    }
    Ok(())
}

/// Logs what runs (one stderr line, secrets masked), then replaces this process with it.
fn exec(
    python: &Path,
    args: &sglang::SglangArgs,
    env: &Env,
    argv: Vec<OsString>,
) -> Result<i32, Fatal> {
    report_line(&format!(
        "sglang-launch: {}",
        crate::exec::describe(python, args, env)
    ));
    let _ = std::io::stderr().flush();
    match crate::exec::exec(&argv, env) {
        Ok(never) => match never {},
        Err(e) => Err(Fatal {
            code: exit::NOT_FOUND,
            notes: Vec::new(),
            message: e.to_string(),
        }),
    }
}

/// No driver: perhaps `--topology` went after the SGLang arguments, where SGLang gets it.
fn no_driver(f: Fatal, tokens: &[OsString]) -> Fatal {
    super::hinted(f, super::misplaced(tokens, |_| false))
}

fn write_json_file(out: &Output, outcome: &plan::Outcome) -> Result<(), Fatal> {
    let Some(path) = &out.json_file else {
        return Ok(());
    };
    // A file is output too: the same redaction as every stream.
    let text = crate::out::redact(&report::json(&outcome.plan)) + "\n";
    open_output(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| {
            let why = if e.raw_os_error() == Some(nix::libc::ENXIO) {
                "it is a named pipe no process is reading; start the reader first, or name a \
                 regular file"
                    .to_owned()
            } else {
                e.to_string()
            };
            Fatal::usage(format!(
                "cannot write the plan to --json-file {}: {why}",
                path.display()
            ))
        })
}

/// Opens a file to write without waiting: `open` of a FIFO no process reads would block for
/// ever, and fails at once (ENXIO) when opened non-blocking. A pipe with a reader (`>(jq .)`)
/// and devices work as before; writes block again once it is open.
fn open_output(path: &Path) -> std::io::Result<std::fs::File> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits())
        .open(path)?;
    fcntl(&file, FcntlArg::F_SETFL(OFlag::empty()))?;
    Ok(file)
}
