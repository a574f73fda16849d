//! The launcher binary with the host's own settings kept out, for every test that runs it.

use assert_cmd::Command;

/// A variable of the host that would change what the launcher does: SGLang's and the
/// launcher's own, the schedulers' (Slurm, LeaderWorkerSet), the Hugging Face Hub's, proxies
/// and the terminal width the report wraps to.
fn host_setting(k: &str) -> bool {
    ["SGLANG_", "SGL_", "SLURM_", "LWS_", "HF_", "HUGGING"]
        .iter()
        .any(|p| k.starts_with(p))
        || k.to_ascii_uppercase().ends_with("_PROXY")
        || k == "MASTER_PORT"
        || k == "CUDA_VISIBLE_DEVICES"
        || k == "COLUMNS"
}

/// `sglang-launch` run from the repository root, without colour, the host's settings, its
/// config files (the system one is overridden, the user one absent) or its device nodes.
pub fn launcher() -> Command {
    launcher_at(&assert_cmd::cargo::cargo_bin("sglang-launch"))
}

/// [`launcher`] run through another path to the binary (a link to it installed in a venv).
#[allow(dead_code)]
pub fn launcher_at(path: &std::path::Path) -> Command {
    let mut c = Command::new(path);
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1");
    for (k, _) in std::env::vars_os() {
        if let Some(k) = k.to_str().filter(|k| host_setting(k)) {
            c.env_remove(k);
        }
    }
    c.env(
        "SGLANG_LAUNCH_SYSTEM_CONFIG",
        "/nonexistent/sglang-launch.toml",
    )
    .env("XDG_CONFIG_HOME", "/nonexistent")
    // The host's own accelerators (an AMD or Ascend test machine) would make it pass through.
    .env("SGLANG_LAUNCH_DEVICE_ROOT", "/nonexistent");
    c
}
