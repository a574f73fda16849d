//! The completion scripts: for bash, zsh and fish a thin script that asks
//! `sglang-launch __complete` (so the three give the same candidates, SGLang's options
//! included); elvish and PowerShell get clap_complete's static scripts (launcher part only).

use clap_complete::Shell as S;

use crate::invocation::cli::{self, Shell};

pub(crate) fn script(shell: Shell) -> String {
    let fixed = match shell {
        Shell::Bash => include_str!("scripts/sglang-launch.bash"),
        Shell::Zsh => include_str!("scripts/_sglang-launch"),
        Shell::Fish => include_str!("scripts/sglang-launch.fish"),
        Shell::Elvish => return generated(S::Elvish),
        Shell::Powershell => return generated(S::PowerShell),
    };
    fixed.to_owned()
}

fn generated(shell: S) -> String {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cli::command(), "sglang-launch", &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}
