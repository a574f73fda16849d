//! `man/sglang-launch.1`: one page with every command and its options (each with its
//! environment variable), then ENVIRONMENT, EXIT STATUS, FILES and EXAMPLES. clap_mangen writes
//! the title, NAME, SYNOPSIS and DESCRIPTION from the clap definition; the rest is written here
//! from the same definition, the settings registry and the exit codes, so none can drift.

use std::fmt::Write as _;

use clap::{Arg, Command};

use crate::exit;
use crate::invocation::cli;
use crate::settings::files::SYSTEM;
use crate::settings::registry::VARS;

pub fn man_page() -> String {
    let mut root = cli::command();
    root.build();
    let man = clap_mangen::Man::new(root.clone());
    let mut buf = Vec::new();
    // Rendering into memory cannot fail.
    for section in [
        clap_mangen::Man::render_title,
        clap_mangen::Man::render_name_section,
        clap_mangen::Man::render_synopsis_section,
        clap_mangen::Man::render_description_section,
    ] {
        section(&man, &mut buf).expect("man page renders");
    }
    let mut s = String::from_utf8_lossy(&buf).into_owned();
    s.push_str(&options_section(&root));
    s.push_str(&commands_section(&root));
    s.push_str(&environment_section());
    s.push_str(&exit_status_section());
    s.push_str(FILES.replace("{SYSTEM}", &roman(SYSTEM)).as_str());
    s.push_str(EXAMPLES);
    let _ = writeln!(s, ".SH VERSION\nv{}", roman(env!("CARGO_PKG_VERSION")));
    s
}

/// Text for roff: backslashes, dashes (so they copy as ASCII hyphen-minus), non-ASCII as
/// `\[uXXXX]`, and a control character at a line start made literal.
pub(crate) fn roman(text: &str) -> String {
    let mut out = String::new();
    for line in text.split('\n') {
        if !out.is_empty() {
            out.push('\n');
        }
        if line.starts_with(['.', '\'']) {
            out.push_str("\\&");
        }
        for c in line.chars() {
            match c {
                '\\' => out.push_str("\\e"),
                '-' => out.push_str("\\-"),
                c if c.is_ascii() => out.push(c),
                // groff's own names, so the page reads on an ASCII terminal too.
                '\u{2026}' => out.push_str("..."),
                '\u{2014}' => out.push_str("\\(em"),
                '\u{2013}' => out.push_str("\\(en"),
                '\u{2192}' => out.push_str("\\(->"),
                '\u{00D7}' => out.push_str("\\(mu"),
                c => {
                    let _ = write!(out, "\\[u{:04X}]", c as u32);
                }
            }
        }
    }
    out
}

fn bold(text: &str) -> String {
    format!("\\fB{}\\fR", roman(text))
}

fn italic(text: &str) -> String {
    format!("\\fI{}\\fR", roman(text))
}

/// Paragraphs separated by a blank line become `.PP` paragraphs.
fn paragraphs(text: &str) -> String {
    text.trim()
        .split("\n\n")
        .map(|p| roman(&p.split_whitespace().collect::<Vec<_>>().join(" ")))
        .collect::<Vec<_>>()
        .join("\n.PP\n")
}

fn options_section(root: &Command) -> String {
    let mut s = String::from(".SH OPTIONS\n");
    for a in root.get_arguments().filter(|a| !a.is_hide_set()) {
        s.push_str(&arg_item(a));
    }
    s
}

fn commands_section(root: &Command) -> String {
    let mut s = String::from(
        ".SH COMMANDS\nWithout a command name the arguments are SGLang's and the command is \
         \\fBrun\\fR, with its options taken from the environment.\n",
    );
    for sub in root.get_subcommands().filter(|c| !c.is_hide_set()) {
        command_item(&mut s, sub, &format!("sglang-launch {}", sub.get_name()));
    }
    s
}

fn command_item(s: &mut String, cmd: &Command, path: &str) {
    if cmd.has_subcommands() {
        for sub in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
            command_item(s, sub, &format!("{path} {}", sub.get_name()));
        }
        return;
    }
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    let _ = writeln!(s, ".SS {}", bold(path));
    let _ = writeln!(s, "{}\n.PP", bold(usage));
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        let _ = writeln!(s, "{}", paragraphs(&about.to_string()));
    }
    for a in cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_id() != "help")
    {
        s.push_str(&arg_item(a));
    }
    if let Some(after) = cmd.get_after_long_help().or(cmd.get_after_help()) {
        let _ = writeln!(s, ".PP\n{}", paragraphs(&after.to_string()));
    }
}

/// One option or argument as a tagged paragraph: how it is written, then its help, its
/// variable, its default and its choices.
fn arg_item(a: &Arg) -> String {
    let value = a
        .get_value_names()
        .map(|v| {
            v.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| a.get_id().as_str().to_ascii_uppercase());
    let takes = a.get_action().takes_values();
    let mut tag: Vec<String> = Vec::new();
    if let Some(c) = a.get_short() {
        tag.push(bold(&format!("-{c}")));
    }
    if let Some(l) = a.get_long() {
        tag.push(bold(&format!("--{l}")));
    }
    let mut head = tag.join(", ");
    if takes {
        let v = italic(&value);
        head = if head.is_empty() {
            format!("[{v}]...")
        } else {
            format!("{head} {v}")
        };
    }
    let mut body = a
        .get_long_help()
        .or(a.get_help())
        .map(|h| paragraphs(&h.to_string()))
        .unwrap_or_default();
    let mut notes: Vec<String> = Vec::new();
    if let Some(env) = a.get_env().filter(|_| !a.is_hide_env_set()) {
        notes.push(format!("environment: {}", bold(&env.to_string_lossy())));
    }
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|d| roman(&d.to_string_lossy()))
        .collect();
    if takes && !defaults.is_empty() && !a.is_hide_default_value_set() {
        notes.push(format!("default: {}", defaults.join(", ")));
    }
    let choices: Vec<String> = a
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| bold(v.get_name()))
        .collect();
    if takes && !choices.is_empty() {
        notes.push(format!("one of: {}", choices.join(", ")));
    }
    if !notes.is_empty() {
        body.push_str(&format!("\n[{}]", notes.join("; ")));
    }
    format!(".TP\n{head}\n{}\n", body.trim_start())
}

fn environment_section() -> String {
    let mut s = String::from(
        ".SH ENVIRONMENT\nEach launcher option's variable is read when the option is not typed; \
         an empty value means unset. A variable starting with \\fBSGLANG_LAUNCH_\\fR that the \
         launcher does not know is reported with the nearest known name.\n",
    );
    for v in VARS {
        let key = v
            .key
            .map(|k| format!(" (config file key {})", bold(k)))
            .unwrap_or_default();
        let _ = writeln!(s, ".TP\n{}\n{}{key}", bold(v.name), roman(v.meaning));
    }
    for (name, meaning) in OTHER_ENV {
        let _ = writeln!(s, ".TP\n{}\n{}", bold(name), roman(meaning));
    }
    s
}

/// Variables the launcher reads that are not its own.
const OTHER_ENV: &[(&str, &str)] = &[
    (
        "XDG_CONFIG_HOME",
        "where the user's config.toml and profiles/ are (default ~/.config)",
    ),
    (
        "XDG_CACHE_HOME",
        "where flag sets read from an installed SGLang are cached (default ~/.cache)",
    ),
    (
        "HF_HUB_OFFLINE",
        "1: never ask the Hugging Face Hub (as --offline)",
    ),
    (
        "HF_HUB_CACHE, HF_HOME",
        "the local Hugging Face cache searched for a model's files (default ~/.cache/huggingface/hub)",
    ),
    ("NO_COLOR", "set: no colour in the report"),
];

fn exit_status_section() -> String {
    let codes = [
        (
            exit::OK,
            "launchable (check, plan), or the command succeeded",
        ),
        (
            exit::BLOCKED,
            "check, plan: blocked by an error finding (or a warning under --strict)",
        ),
        (
            exit::USAGE,
            "usage or input error: unknown option, unreadable topology, config or profile file, unknown rule",
        ),
        (
            exit::NOT_READY,
            "wait-ready: the server did not answer in time, or its process exited first",
        ),
        (
            exit::CONFIG,
            "run and the drop-in form: the launch was blocked by the findings above (EX_CONFIG); nothing was started",
        ),
        (
            exit::NOT_FOUND,
            "the Python interpreter or SGLang could not be found; nothing was started",
        ),
    ];
    let mut s = String::from(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in codes {
        let _ = writeln!(s, ".TP\n{}\n{}", bold(&code.to_string()), roman(meaning));
    }
    s.push_str(".PP\nOnce SGLang runs it is the same process, so its exit status is SGLang's.\n");
    s
}

const FILES: &str = r#".SH FILES
.TP
{SYSTEM}
System\-wide launcher settings (\fBSGLANG_LAUNCH_SYSTEM_CONFIG\fR names another file).
.TP
$XDG_CONFIG_HOME/sglang\-launch/config.toml
The user's settings (else ~/.config/sglang\-launch/config.toml); they override the system file.
.TP
$XDG_CONFIG_HOME/sglang\-launch/profiles/NAME.toml
The user's profiles (else ~/.config/sglang\-launch/profiles/), searched after \fB\-\-profiles\-dir\fR and \fBSGLANG_LAUNCH_PROFILES_DIR\fR.
.TP
/etc/sglang\-launch/profiles/NAME.toml
System\-wide profiles, searched next; the profiles built into the binary come last.
.TP
$XDG_CACHE_HOME/sglang\-launch/flags/
Flag sets read from installed SGLang releases this build does not embed (else ~/.cache/sglang\-launch/flags/); \fBflags refresh\fR rewrites them.
"#;

const EXAMPLES: &str = r#".SH EXAMPLES
Launch as \fBpython \-m sglang.launch_server\fR would, after the checks and fixes:
.PP
.RS
.nf
sglang\-launch \-\-model\-path Qwen/Qwen3\-32B \-\-tp 8 \-\-port 30000
.fi
.RE
.PP
Plan for a machine described by a topology file, for a given SGLang release:
.PP
.RS
.nf
sglang\-launch plan \-\-topology box.json \-\-sglang\-version 0.5.23 \-\- \e
    \-\-model\-path Qwen/Qwen3\-32B \-\-tp 8
.fi
.RE
.PP
Check in a script, without launching; the exit status says whether it would launch:
.PP
.RS
.nf
sglang\-launch check \-\-json \-\- \-\-model\-path m \-\-tp 2 > plan.json
.fi
.RE
.PP
Explain a rule, or skip it:
.PP
.RS
.nf
sglang\-launch explain AR002
sglang\-launch run \-\-allow AR002 \-\- \-\-model\-path m \-\-tp 8
.fi
.RE
.PP
Rewrite a command line for another release, and run a profile as a systemd service:
.PP
.RS
.nf
sglang\-launch upgrade \-\-to 0.5.23 \-\- \-\-model\-path m \-\-cuda\-graph\-max\-bs 512
sglang\-launch systemd\-unit \-\-profile h100\-nvlink\-8x > /etc/systemd/system/sglang.service
.fi
.RE
.PP
Install the completions (bash):
.PP
.RS
.nf
sglang\-launch completions bash > ~/.local/share/bash\-completion/completions/sglang\-launch
.fi
.RE
"#;
