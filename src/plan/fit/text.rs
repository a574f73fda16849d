//! The words of `--fit`: why it acted, each change with its reason, and the suggestion.

use super::search::{CONTEXT_FLOOR, Fitted, Knob};
use crate::rules::Code;
use crate::sglang::SglangArgs;
use crate::sglang::opt;

/// The option that sets this knob in the flag set in use.
pub(crate) fn option(knob: Knob, f: &Fitted) -> &'static str {
    match knob {
        Knob::Context => opt::CONTEXT_LENGTH,
        Knob::Requests => opt::MAX_RUNNING_REQUESTS,
        Knob::Graphs => f.graph_flag,
    }
}

/// Why this knob was lowered.
pub(crate) fn why(knob: Knob, f: &Fitted) -> String {
    let ctx = f.to.context_length.unwrap_or(0);
    match knob {
        Knob::Context => trigger(f),
        Knob::Requests => match f.from.max_running_requests {
            Some(asked) => format!(
                "--max-running-requests {asked} at {} needs KV cache for {} tokens{}; it holds \
                 about {}",
                typical(f, ctx),
                thousands(asked.saturating_mul(ctx.min(f.request_tokens)) / f.pools.max(1)),
                if f.pools > 1 { " per DP rank" } else { "" },
                thousands(f.after.kv_tokens)
            ),
            None => format!(
                "a shorter context alone does not make it fit with SGLang's estimate of {} requests",
                f.before.requests
            ),
        },
        Knob::Graphs => "a shorter context and fewer requests alone do not make it fit".into(),
    }
}

/// "4,096 tokens a request (assumed; --fit-request-tokens)", or the context when shorter.
fn typical(f: &Fitted, ctx: u64) -> String {
    if ctx <= f.request_tokens {
        return format!("the context length {}", thousands(ctx));
    }
    format!(
        "{} tokens a request (assumed; set --fit-request-tokens to your traffic)",
        thousands(f.request_tokens)
    )
}

/// What did not fit, as the line was.
fn trigger(f: &Fitted) -> String {
    let b = &f.before;
    let ctx = f.from.context_length.unwrap_or(0);
    if let Some(top) = f.ceiling.filter(|&top| ctx > top) {
        return format!(
            "SGLang refuses --context-length {ctx} above the model's {top} unless \
             SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 ({})",
            Code::ENV006
        );
    }
    if !b.fits {
        return format!(
            "the model does not fit at the context length {ctx} ({})",
            Code::MEM005
        );
    }
    format!(
        "the KV cache holds about {} tokens, less than one request at the context length {ctx} \
         ({})",
        thousands(b.kv_tokens),
        Code::MEM007
    )
}

/// "set --context-length 32768 (was 131072 from the model config): <why this value>".
pub(crate) fn change(knob: Knob, f: &Fitted, args: &SglangArgs) -> String {
    let option = option(knob, f);
    let to = knob.get(&f.to).unwrap_or(0);
    let was = knob.get(&f.from).unwrap_or(f.before.requests);
    let whose = if args.is_set(option) {
        " (yours)"
    } else {
        match knob {
            Knob::Context => " from the model config",
            Knob::Requests => " from SGLang's estimate",
            Knob::Graphs => " from SGLang's defaults",
        }
    };
    format!(
        "set {option} {to} (was {was}{whose}): {}",
        reason(knob, f, args)
    )
}

fn reason(knob: Knob, f: &Fitted, args: &SglangArgs) -> String {
    let kv = thousands(f.after.kv_tokens);
    let ctx = f.to.context_length.unwrap_or(0);
    match knob {
        Knob::Context if f.ceiling.is_some() && f.ceiling == f.to.context_length => {
            "the longest context SGLang accepts for this model without \
             SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
                .to_owned()
        }
        Knob::Context => {
            let fraction = if args.is_set(opt::MEM_FRACTION_STATIC) {
                "your --mem-fraction-static"
            } else {
                "the planned fraction"
            };
            format!("the KV cache holds {kv} tokens at {fraction}")
        }
        Knob::Requests => {
            let per_pool = (f.to.max_running_requests.unwrap_or(1) / f.pools.max(1)).max(1);
            let requests = if per_pool == 1 { "request" } else { "requests" };
            format!(
                "{per_pool} {requests} of {} tokens fit the KV cache of {kv} tokens{}",
                thousands(ctx.min(f.request_tokens)),
                if ctx > f.request_tokens {
                    " (a typical request assumed; --fit-request-tokens)"
                } else {
                    ""
                }
            )
        }
        Knob::Graphs => {
            format!("fewer CUDA graphs leave the KV cache {kv} tokens at --context-length {ctx}")
        }
    }
}

/// What MEM005/MEM007 suggest without `--fit`.
pub(crate) fn suggestion(f: &Fitted) -> String {
    let values: Vec<String> = Knob::ORDER
        .into_iter()
        .filter_map(|knob| {
            let v = knob.get(&f.to).filter(|v| knob.get(&f.from) != Some(*v))?;
            Some(format!("{} {v}", option(knob, f)))
        })
        .collect();
    format!("with --fit: {}", values.join(", "))
}

/// Why `--fit` changed nothing.
pub(crate) fn nothing_fits() -> String {
    format!(
        "--fit changed nothing: no context length down to {CONTEXT_FLOOR}, request count or \
         CUDA-graph batch makes it fit"
    )
}

/// 41000 → "41,000".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_groups_by_three() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(41000), "41,000");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }
}
