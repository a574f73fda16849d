//! Aux hidden-state capture (`--enable-return-aux-hidden-states`, 0.5.23): the speculative
//! algorithm only names the capture convention, and SGLang checks the layers to capture.

use serde_json::Value;

use super::*;
use crate::sglang::opt;

/// The algorithms whose capture convention SGLang knows.
const CONVENTIONS: [&str; 3] = ["EAGLE3", "DFLASH", "DSPARK"];

/// SPEC027: capture without a known convention, with a draft checkpoint or PP, or with layer
/// ids missing (other than EAGLE3's), empty, negative or repeated; layer ids without capture.
pub(crate) fn aux_capture(ctx: &Context) -> Vec<Fired> {
    let u = ctx.user();
    let ids_name = opt::RETURN_AUX_HIDDEN_STATE_LAYER_IDS;
    let ids: Option<Vec<i64>> = u
        .get_or_default(ids_name)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_i64).collect());
    let name = opt::ENABLE_RETURN_AUX_HIDDEN_STATES;
    if !u.flag(name) {
        let out = ids.map(|_| format!("{ids_name} without {name}"));
        return refused_at_start(ctx, out.into_iter().collect());
    }
    let method = u
        .sval(opt::SPECULATIVE_ALGORITHM)
        .unwrap_or_default()
        .to_ascii_uppercase();
    let mut out = vec![];
    if !CONVENTIONS.contains(&method.as_str()) {
        out.push(format!(
            "{name} needs {} EAGLE3, DFLASH or DSPARK",
            opt::SPECULATIVE_ALGORITHM
        ));
    } else if u.is_set(opt::SPECULATIVE_DRAFT_MODEL_PATH) {
        out.push(format!(
            "{name} with {}: it captures without a draft",
            opt::SPECULATIVE_DRAFT_MODEL_PATH
        ));
    } else if ctx.pp() != 1 {
        out.push(format!("{name} with PP {}: it takes PP 1", ctx.pp()));
    } else if let Some(why) = layer_ids(&method, ids.as_deref()) {
        out.push(format!("{name}: {why}"));
    }
    refused_at_start(ctx, out)
}

/// What SGLang refuses in the layer ids for `method`.
fn layer_ids(method: &str, ids: Option<&[i64]>) -> Option<String> {
    let name = opt::RETURN_AUX_HIDDEN_STATE_LAYER_IDS;
    let Some(ids) = ids else {
        return (method != "EAGLE3").then(|| format!("{method} capture needs {name}"));
    };
    if ids.is_empty() {
        return Some(format!("{name} must not be empty"));
    }
    let mut seen = std::collections::BTreeSet::new();
    if ids.iter().any(|i| *i < 0) {
        Some(format!("{name} must not be negative"))
    } else if !ids.iter().all(|i| seen.insert(*i)) {
        Some(format!("{name} must not repeat a layer"))
    } else {
        None
    }
}
