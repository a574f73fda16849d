//! `sglang-launch config show`: the merged settings and where each came from.

use clap::ArgMatches;

use super::cli::ConfigCommand;
use super::print_out;
use crate::exit;
use crate::plan::Fatal;
use crate::settings;

pub fn command(c: &ConfigCommand, matches: &ArgMatches) -> Result<i32, Fatal> {
    let ConfigCommand::Show(a) = c;
    // `config show`'s own matches: its options are the command-line layer.
    let show = matches
        .subcommand()
        .and_then(|(_, m)| m.subcommand())
        .map_or(matches, |(_, m)| m);
    let profile = super::profiled::load(&a.profile)?;
    let layer = profile
        .as_ref()
        .map(super::profiled::launcher_layer)
        .transpose()?;
    let resolved = settings::load(show, layer).map_err(fatal)?;
    let python = crate::plan::resolve_interpreter(resolved.settings.python.as_deref());
    let interpreter = if python.found {
        python.path.display().to_string()
    } else {
        format!("{} (not found)", python.path.display())
    };
    print_out(&if a.json {
        settings::render_json(&resolved)
    } else {
        settings::render_text(&resolved, &interpreter)
    })?;
    Ok(exit::OK)
}

/// A settings error: it names its file or variable; say where the keys are documented.
pub fn fatal(message: String) -> Fatal {
    Fatal::usage(message).with_note(
        "(settings and their types: docs/config.md; `sglang-launch config show` prints the merged ones)",
    )
}
