//! The all-to-all backend SGLang puts over the one a line names, read before the resolution
//! inputs so the layout's EP and the backends agree on it.

use crate::facts::Env;
use crate::sglang::{SglangArgs, envs, opt};

/// The all-to-all backend SGLang puts over the one named: Waterfill needs DeepEP (0.5.16+ keeps
/// Mega MoE too), and the releases that read `SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE` (0.5.12 to 0.5.17)
/// take Mega MoE when it is on, whatever Waterfill asked for.
pub(crate) fn forced(args: &SglangArgs, env: &Env, named: Option<&str>) -> Option<&'static str> {
    // The variable first: the release's registry is read only when it is set.
    let mega = env
        .get(MEGA_MOE_VAR)
        .is_some_and(|v| envs::bool_on(v.trim()))
        && envs::for_version(args.flags.release())
            .0
            .knows(MEGA_MOE_VAR);
    if mega {
        return (named != Some("megamoe")).then_some("megamoe");
    }
    let waterfill = [opt::ENABLE_DEEPEP_WATERFILL, opt::ENABLE_WATERFILL]
        .iter()
        .any(|o| args.knows(o) && args.flag(o));
    let keeps = |a: &str| a == "deepep" || (a == "megamoe" && args.knows(opt::ENABLE_WATERFILL));
    (waterfill && !named.is_some_and(keeps)).then_some("deepep")
}

/// The variable that turns Mega MoE on in the releases that read it.
pub(crate) const MEGA_MOE_VAR: &str = "SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE";
