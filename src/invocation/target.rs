//! Which machine the server is for. The launcher checks servers for NVIDIA GPUs; a server for
//! anything else (an explicit `--device` other than cuda, `SGLANG_USE_CPU_ENGINE=1`, or no
//! NVIDIA driver on a host with another accelerator) passes through to SGLang unchanged.

use crate::sglang::opt;
use std::ffi::OsString;
use std::path::Path;

use super::context::Context;
use crate::facts::{Env, Topology, accelerators};
use crate::plan::{self, Fatal};
use crate::sglang;

pub(crate) enum Target {
    /// An NVIDIA GPU server: the GPUs read through NVML, or `None` when a topology file
    /// describes them (the plan reads it).
    Nvidia(Option<Box<Topology>>),
    /// Not for an NVIDIA GPU: why, for the one info line.
    Other(String),
    /// For CUDA (asked, or nothing else found) but the NVIDIA driver cannot be read.
    NoDriver(Fatal),
}

/// Decides the target, reading NVML at most once (the plan reuses what was read).
pub(crate) fn decide(ctx: &Context, tokens: &[OsString], env: &Env) -> Target {
    let s = ctx.settings();
    let device = explicit_device(ctx, tokens);
    match device.as_deref() {
        Some(d) if !is_cuda(d) => {
            return Target::Other(format!("--device {d}: not an NVIDIA GPU server"));
        }
        None if env
            .get("SGLANG_USE_CPU_ENGINE")
            .is_some_and(|v| v.trim() == "1") =>
        {
            return Target::Other("SGLANG_USE_CPU_ENGINE=1: SGLang runs on the CPU".into());
        }
        _ => {}
    }
    if let Some(path) = &s.topology {
        return from_file(path);
    }
    let nvml = plan::load_topology(None, s.nvml_lib.as_deref());
    let no_gpu = nvml.as_ref().map_or(true, |t| t.gpus.is_empty());
    if no_gpu && device.is_none() {
        let root = s.device_root.as_deref().unwrap_or(Path::new("/"));
        let found = accelerators::other(root);
        if !found.is_empty() {
            let names: Vec<String> = found
                .iter()
                .map(|f| format!("{} ({})", f.name, f.evidence))
                .collect();
            return Target::Other(format!(
                "no NVIDIA GPU, and {} found: SGLang picks its device itself",
                names.join(", ")
            ));
        }
    }
    match nvml {
        Ok(t) => Target::Nvidia(Some(Box::new(t))),
        Err(e) => Target::NoDriver(e.into()),
    }
}

/// A topology file: read once here (the plan reuses it); one that lists no NVIDIA GPU but
/// other accelerators describes a host the drop-in passes through. A file that cannot be read
/// is the plan's to report.
fn from_file(path: &Path) -> Target {
    match crate::facts::Topology::load(path) {
        Ok(t) if t.gpus.is_empty() && !t.accelerators.is_empty() => {
            let names: Vec<String> = t
                .accelerators
                .iter()
                .map(|a| format!("{}× {}", a.count, a.name))
                .collect();
            Target::Other(format!(
                "{} lists no NVIDIA GPU but {}",
                path.display(),
                names.join(", ")
            ))
        }
        Ok(t) => Target::Nvidia(Some(Box::new(t))),
        Err(_) => Target::Nvidia(None),
    }
}

/// `cuda` or `cuda:N`.
fn is_cuda(device: &str) -> bool {
    let d = device.trim().to_ascii_lowercase();
    d == "cuda" || d.starts_with("cuda:")
}

/// `--device` as SGLang's parser reads it (abbreviations and `--config` files included); the
/// parse is skipped when no token can name it.
fn explicit_device(ctx: &Context, tokens: &[OsString]) -> Option<String> {
    let may_name = tokens.iter().any(|t| {
        t.to_str()
            .is_some_and(|t| t.starts_with("--de") || t.starts_with("--co"))
    });
    if !may_name {
        return None;
    }
    let args = sglang::parse(ctx.flags(), tokens.to_vec());
    args.get(opt::DEVICE)?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    fn offline() -> Context {
        Context::of(crate::settings::Settings {
            sglang_version: Some("0.5.23".into()),
            topology: Some("unused.json".into()),
            ..Default::default()
        })
    }

    #[test]
    fn an_explicit_device_other_than_cuda_passes_through() {
        let env = Env::default();
        for line in [
            &["--model-path", "m", "--device", "npu"][..],
            &["--device=cpu", "--model-path", "m"][..],
            &["--devic", "xpu"][..],
        ] {
            assert!(
                matches!(decide(&offline(), &toks(line), &env), Target::Other(_)),
                "{line:?}"
            );
        }
        for line in [
            &["--model-path", "m", "--device", "cuda"][..],
            &["--device", "cuda:1"][..],
            &["--model-path", "m"][..],
        ] {
            assert!(
                matches!(decide(&offline(), &toks(line), &env), Target::Nvidia(_)),
                "{line:?}"
            );
        }
    }

    #[test]
    fn the_cpu_engine_variable_passes_through() {
        let mut env = Env::default();
        env.vars.insert("SGLANG_USE_CPU_ENGINE".into(), "1".into());
        assert!(matches!(
            decide(&offline(), &toks(&["--model-path", "m"]), &env),
            Target::Other(_)
        ));
    }
}
