//! EAGLE-family speculative decoding calls methods on the loaded target model: the model runner
//! sets the target's EAGLE3 capture layers, and the draft worker takes the target's embedding and
//! LM head. A class of the release without them stops start-up once the weights are loaded.

use super::*;
use crate::sglang::architectures::Lack;

/// SPEC031: the target's class lacks what EAGLE / EAGLE3 / NEXTN call on it.
pub(crate) fn target_hooks(ctx: &Context) -> Vec<Fired> {
    let Some(spec) = ctx.server.speculative.as_ref().filter(|s| s.eagle()) else {
        return vec![];
    };
    // Under PP a later stage has no embedding of its own; PAR004 judges PP with drafts.
    if ctx.pp() > 1 {
        return vec![];
    }
    let mut lacks = vec![];
    if spec.algorithm == "EAGLE3" {
        lacks.extend(lacking(
            ctx,
            Lack::Eagle3Hook,
            "set_eagle3_layers_to_capture",
            "the model runner",
        ));
    }
    lacks.extend(lacking(
        ctx,
        Lack::EmbedHandOver,
        "get_embed_and_head",
        "the draft worker",
    ));
    lacks
        .into_iter()
        .map(|(arch, what, upgrade)| {
            Fired::new(format!(
                "--speculative-algorithm {} with {arch}: SGLang {}'s class for it has no {what} on the target, so start-up stops once the weights are loaded; serve it without speculative decoding{upgrade}",
                spec.algorithm, ctx.version
            ))
        })
        .collect()
}

/// The target class, what it lacks (the method and its caller), and the upgrade that has it.
fn lacking(
    ctx: &Context,
    what: Lack,
    method: &str,
    caller: &str,
) -> Option<(String, String, String)> {
    let (arch, later) = super::model::class_lacking(ctx, what)?;
    let upgrade = later.map_or(String::new(), |v| {
        format!(", or use SGLang {v}, the first release whose {arch} has it")
    });
    Some((
        arch.to_owned(),
        format!("{method}, which {caller} calls"),
        upgrade,
    ))
}
