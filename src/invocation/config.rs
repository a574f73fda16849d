//! `sglang-launch config show`: the merged settings and where each came from.

use super::context::Context;
use super::print_out;
use crate::exit;
use crate::plan::Fatal;
use crate::settings;

/// The context's settings (`config show`'s own options are the command-line layer) and the
/// interpreter they choose.
pub(crate) fn show(json: bool, ctx: &Context) -> Result<i32, Fatal> {
    let text = if json {
        settings::render_json(&ctx.resolved)
    } else {
        let python = ctx.interpreter();
        let interpreter = if python.found {
            python.path.display().to_string()
        } else {
            format!("{} (not found)", python.path.display())
        };
        settings::render_text(&ctx.resolved, &interpreter)
    };
    print_out(&text)?;
    Ok(exit::OK)
}
