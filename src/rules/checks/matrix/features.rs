//! The features the matrix combines, as the table spells them, and whether a server has them.
//!
//! Spellings: a named feature (`pp`, `dp-attention`, …, see [`NAMED`]); `--flag` (a boolean
//! option that is on); `!--option` (a boolean that is off, or an option left unset);
//! `--option=value` (given or default); `$NAME` (an environment variable set true);
//! `spec=ALGO` (the speculative algorithm); `cc>=10`, `cc<9`, `cc==12` (a used GPU's compute
//! capability major).

use super::super::*;
use crate::sglang::opt;

/// Named features: what the resolved server does, beyond one option's value.
pub(crate) const NAMED: &[&str] = &[
    "pp",
    "dp-attention",
    "ep",
    "a2a",
    "no-a2a",
    "spec",
    "spec-eagle",
    "overlap-schedule",
    "chunked-prefill",
    "pd-disaggregation",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Feature {
    Named(&'static str),
    On(String),
    Off(String),
    Value(String, String),
    Env(String),
    Spec(String),
    Cc(Cmp, u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Ge,
    Lt,
    Eq,
}

impl Feature {
    pub(crate) fn parse(s: &str) -> Result<Feature, String> {
        if let Some(n) = NAMED.iter().find(|n| **n == s) {
            return Ok(Feature::Named(n));
        }
        if let Some(rest) = s.strip_prefix("cc") {
            return cc(rest).ok_or_else(|| format!("bad compute-capability feature `{s}`"));
        }
        if let Some(algo) = s.strip_prefix("spec=").filter(|a| !a.is_empty()) {
            return Ok(Feature::Spec(algo.to_ascii_uppercase()));
        }
        if let Some(name) = s.strip_prefix('$').filter(|n| !n.is_empty()) {
            return Ok(Feature::Env(name.to_owned()));
        }
        if let Some(opt) = s.strip_prefix('!').filter(|o| o.starts_with("--")) {
            return Ok(Feature::Off(opt.to_owned()));
        }
        if s.starts_with("--") && s.len() > 2 {
            return Ok(match s.split_once('=') {
                Some((o, v)) => Feature::Value(o.to_owned(), v.to_owned()),
                None => Feature::On(s.to_owned()),
            });
        }
        Err(format!("unknown feature `{s}`"))
    }

    /// The feature as the table spells it.
    pub(crate) fn spelling(&self) -> String {
        match self {
            Feature::Named(n) => (*n).to_string(),
            Feature::On(o) => o.clone(),
            Feature::Off(o) => format!("!{o}"),
            Feature::Value(o, v) => format!("{o}={v}"),
            Feature::Env(n) => format!("${n}"),
            Feature::Spec(a) => format!("spec={a}"),
            Feature::Cc(c, m) => format!(
                "cc{}{m}",
                match c {
                    Cmp::Ge => ">=",
                    Cmp::Lt => "<",
                    Cmp::Eq => "==",
                }
            ),
        }
    }

    /// The SGLang option the feature reads, if it reads one.
    #[cfg(test)]
    pub(crate) fn option(&self) -> Option<&str> {
        match self {
            Feature::On(o) | Feature::Off(o) | Feature::Value(o, _) => Some(o),
            _ => None,
        }
    }

    /// How this server has the feature, in a few words; `None` when it does not.
    pub(crate) fn holds(&self, ctx: &Context) -> Option<String> {
        match self {
            Feature::Named(n) => named(ctx, n),
            Feature::On(o) => ctx.user().flag(o).then(|| o.clone()),
            Feature::Off(o) => (ctx.user().knows(o) && off(ctx, o)).then(|| format!("no {o}")),
            Feature::Value(o, v) => {
                (ctx.user().sval(o).as_deref() == Some(v.as_str())).then(|| {
                    if ctx.user().given(o) {
                        format!("{o} {v}")
                    } else {
                        format!("{o} {v} (the default)")
                    }
                })
            }
            Feature::Env(n) => ctx
                .env
                .get(n)
                .filter(|v| env_true(v))
                .map(|v| format!("{n}={v}")),
            Feature::Spec(a) => (ctx.spec_algo().as_deref() == Some(a.as_str()))
                .then(|| format!("--speculative-algorithm {a}")),
            Feature::Cc(cmp, major) => {
                let gpus = ctx.gpus_where(|(m, _)| match cmp {
                    Cmp::Ge => m >= *major,
                    Cmp::Lt => m < *major,
                    Cmp::Eq => m == *major,
                });
                (!gpus.is_empty()).then(|| Context::describe(&gpus))
            }
        }
    }
}

/// A boolean that is off, or any other option left unset (null).
fn off(ctx: &Context, o: &str) -> bool {
    match ctx.user().get_or_default(o) {
        Some(serde_json::Value::Bool(b)) => !b,
        Some(serde_json::Value::Null) | None => true,
        Some(_) => false,
    }
}

fn cc(rest: &str) -> Option<Feature> {
    let (cmp, n) = if let Some(n) = rest.strip_prefix(">=") {
        (Cmp::Ge, n)
    } else if let Some(n) = rest.strip_prefix("==") {
        (Cmp::Eq, n)
    } else {
        (Cmp::Lt, rest.strip_prefix('<')?)
    };
    Some(Feature::Cc(cmp, n.parse().ok()?))
}

fn named(ctx: &Context, name: &str) -> Option<String> {
    match name {
        "pp" => (ctx.pp() > 1).then(|| format!("--pp-size {}", ctx.pp())),
        "dp-attention" => ctx
            .dp_attention()
            .then(|| format!("DP attention (attention DP {})", ctx.attn_dp())),
        "ep" => (ctx.ep() > 1).then(|| format!("EP {}", ctx.ep())),
        "a2a" => ctx.moe_a2a().map(|a| format!("--moe-a2a-backend {a}")),
        "no-a2a" => ctx
            .moe_a2a()
            .is_none()
            .then(|| "no MoE all-to-all backend".to_string()),
        "spec" => ctx
            .spec_algo()
            .map(|a| format!("--speculative-algorithm {a}")),
        "spec-eagle" => ctx.spec_eagle().then(|| {
            format!(
                "{} speculative decoding",
                ctx.spec_algo().unwrap_or_default()
            )
        }),
        "overlap-schedule" => overlap_schedule(ctx),
        "chunked-prefill" => chunked_prefill(ctx),
        "pd-disaggregation" => ctx
            .user()
            .sval(opt::DISAGGREGATION_MODE)
            .filter(|m| m == "prefill" || m == "decode")
            .map(|m| format!("--disaggregation-mode {m}")),
        _ => None,
    }
}

/// The overlap scheduler stays on: not disabled, and neither PP nor speculative decoding
/// (which turn it off on their own) is in use.
fn overlap_schedule(ctx: &Context) -> Option<String> {
    let off =
        ctx.user().flag(opt::DISABLE_OVERLAP_SCHEDULE) || ctx.pp() > 1 || ctx.spec_algo().is_some();
    (!off && ctx.user().knows(opt::DISABLE_OVERLAP_SCHEDULE))
        .then(|| "the overlap scheduler (on by default)".to_string())
}

/// Chunked prefill is on unless `--chunked-prefill-size -1` (SGLang sizes it when unset).
fn chunked_prefill(ctx: &Context) -> Option<String> {
    if !ctx.user().knows(opt::CHUNKED_PREFILL_SIZE) {
        return None;
    }
    match ctx
        .args
        .get(opt::CHUNKED_PREFILL_SIZE)
        .and_then(|v| v.as_i64())
    {
        Some(-1) => None,
        Some(n) => Some(format!("--chunked-prefill-size {n}")),
        None => Some("chunked prefill (on by default)".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_parse() {
        assert_eq!(Feature::parse("pp"), Ok(Feature::Named("pp")));
        assert_eq!(
            Feature::parse("--enable-pdmux"),
            Ok(Feature::On("--enable-pdmux".into()))
        );
        assert_eq!(
            Feature::parse("--deepep-mode=auto"),
            Ok(Feature::Value("--deepep-mode".into(), "auto".into()))
        );
        assert_eq!(
            Feature::parse("!--enable-dp-lm-head"),
            Ok(Feature::Off("--enable-dp-lm-head".into()))
        );
        assert_eq!(
            Feature::parse("spec=dflash"),
            Ok(Feature::Spec("DFLASH".into()))
        );
        assert_eq!(Feature::parse("cc>=10"), Ok(Feature::Cc(Cmp::Ge, 10)));
        assert_eq!(Feature::parse("cc<9"), Ok(Feature::Cc(Cmp::Lt, 9)));
        for bad in ["", "--", "!pp", "cc>x", "spec=", "$", "tbo"] {
            assert!(Feature::parse(bad).is_err(), "{bad}");
        }
    }
}
