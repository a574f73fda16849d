//! The launcher's command line: one clap definition drives parsing, help, the man page and
//! shell completions. Every launcher option is also read from `SGLANG_LAUNCH_<NAME>`; the
//! settings among them are layered with config files by `crate::settings`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::builder::FalseyValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum, ValueHint};

#[derive(Debug, Parser)]
#[command(
    name = "sglang-launch",
    version,
    about = "Drop-in launcher for the SGLang server: checks the arguments against the GPUs, plans memory, then execs SGLang",
    long_about = "Drop-in launcher for the SGLang server.\n\n\
        `sglang-launch <SGLang arguments>` takes exactly the arguments of `python -m sglang.launch_server`, \
        parses them as SGLang's own parser does for the installed version, checks them against the GPUs and a \
        catalogue of known-bad combinations, applies safe fixes, plans --mem-fraction-static, reports every \
        change on stderr and then execs SGLang in the same process.",
    after_help = "Exit codes: 0 launchable, 1 check/plan: blocked by an error finding (or a warning under --strict), \
        2 usage or input error, 3 wait-ready: not ready in time or the server exited, \
        78 run and the drop-in form: launch refused for its configuration (EX_CONFIG; SGLang's own crash is its exit code, often 1), \
        127 interpreter or SGLang not found.",
    disable_help_subcommand = true,
    override_usage = "sglang-launch [SGLANG_ARGS]...\n       sglang-launch <COMMAND> [OPTIONS] [--] [SGLANG_ARGS]..."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

const SPLIT_HELP: &str = "Launcher options end at `--` or at the first token that is not one of them; \
    everything after belongs to SGLang and reaches it unchanged unless a reported fix changes it.";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan, report, then exec SGLang (what `sglang-launch <SGLang arguments>` does)
    #[command(after_help = SPLIT_HELP)]
    Run(RunArgs),
    /// Check the command line against the GPUs and the rules; never execs
    #[command(after_help = SPLIT_HELP)]
    Check(CheckArgs),
    /// Show the plan: the final command, environment, findings and memory
    #[command(after_help = SPLIT_HELP)]
    Plan(PlanArgs),
    /// Rewrite a command line for another SGLang release and list every option and variable that changes
    #[command(after_help = SPLIT_HELP)]
    Upgrade(UpgradeArgs),
    /// Show this machine's GPU topology (topology/v1 JSON with --json)
    Detect(DetectArgs),
    /// List every rule in the catalogue
    Rules(RulesArgs),
    /// Explain one rule: what it catches, why, how to fix it, sources
    Explain(ExplainArgs),
    /// List, show or rebuild SGLang flag sets (embedded, or read from the installed SGLang)
    #[command(subcommand)]
    Flags(FlagsCommand),
    /// Show the launcher settings merged from defaults, config files, environment and command line
    #[command(subcommand)]
    Config(ConfigCommand),
    /// List the profiles found and how each would run here, or show one merged with its plan
    #[command(subcommand)]
    Profiles(ProfilesCommand),
    /// Print a shell completion script
    Completions(CompletionsArgs),
    /// Print the man page (roff)
    Man,
    /// Print a systemd unit that runs `sglang-launch run --profile NAME` as a service
    SystemdUnit(SystemdUnitArgs),
    /// Wait until SGLang's /health answers 200 (a unit's ExecStartPost=, scripts)
    WaitReady(WaitReadyArgs),
    /// List what started servers really allocated next to what was planned (kept by `run` and `wait-ready --pid`)
    Observed(ObservedArgs),
    /// The completion candidates for a command line (what the completion scripts call)
    #[command(name = COMPLETE, hide = true)]
    Complete(CompleteArgs),
}

/// The hidden subcommand the completion scripts call on every TAB.
pub(crate) const COMPLETE: &str = "__complete";

/// Options shared by `run`, `check` and `plan`. They end at `--` or at the first token that is
/// not one of them; everything after belongs to SGLang.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct PlanOptions {
    #[command(flatten)]
    pub(crate) settings: SettingArgs,

    #[command(flatten)]
    pub(crate) profile: ProfileArg,

    /// Print the plan as JSON (plan/v1): on stdout for check and plan, on stderr for run (stdout is SGLang's)
    #[arg(long, env = "SGLANG_LAUNCH_JSON", hide_env_values = true, value_parser = FalseyValueParser::new())]
    pub(crate) json: bool,

    /// Write the plan as JSON (plan/v1) to this file; the report stays where it goes
    #[arg(
        long,
        env = "SGLANG_LAUNCH_JSON_FILE",
        hide_env_values = true,
        value_name = "PATH",
        value_hint = ValueHint::FilePath
    )]
    pub(crate) json_file: Option<PathBuf>,

    /// SGLang's arguments, exactly as `python -m sglang.launch_server` takes them
    #[arg(
        value_name = "SGLANG_ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub(crate) sglang_args: Vec<OsString>,
}

/// The layered settings (docs/config.md): also read from config files, a profile and
/// `SGLANG_LAUNCH_*`; only the ones typed here override those. Their options come from the
/// settings registry, and their values are read through the settings' command-line layer.
#[derive(Debug, Clone, Default)]
pub(crate) struct SettingArgs;

impl clap::FromArgMatches for SettingArgs {
    fn from_arg_matches(_: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(SettingArgs)
    }

    fn update_from_arg_matches(&mut self, _: &clap::ArgMatches) -> Result<(), clap::Error> {
        Ok(())
    }
}

impl Args for SettingArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.args(crate::settings::registry::options())
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// Some of the layered settings, for a command that reads only those: [`Pick::SETTINGS`] names
/// them, each defined by the settings registry as `run` has it (the name, the variable, the
/// value, whether it is shown), with the help that says what it means for that command.
#[derive(Debug, Clone, Default)]
pub(crate) struct Picked<P>(std::marker::PhantomData<P>);

/// The settings a command's options set ([`Picked`]).
pub(crate) trait Pick {
    const SETTINGS: &'static [crate::settings::registry::Picked];
}

impl<P> clap::FromArgMatches for Picked<P> {
    fn from_arg_matches(_: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(Picked(std::marker::PhantomData))
    }

    fn update_from_arg_matches(&mut self, _: &clap::ArgMatches) -> Result<(), clap::Error> {
        Ok(())
    }
}

impl<P: Pick> Args for Picked<P> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.args(crate::settings::registry::options_of(P::SETTINGS))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// `[default: …]` of the interpreter, as the registry's help for `python` says it.
macro_rules! default_python {
    () => {
        "[default: the python3 beside the launcher in a venv or conda env, else python3 on PATH]"
    };
}

#[derive(Debug, Clone, Default)]
pub(crate) struct UpgradeSettings;

impl Pick for UpgradeSettings {
    const SETTINGS: &'static [crate::settings::registry::Picked] = &[
        (
            "sglang-version",
            Some("The release in use [default: the installed one]"),
        ),
        (
            "python",
            Some(concat!(
                "Python interpreter whose SGLang is the release in use ",
                default_python!()
            )),
        ),
    ];
}

#[derive(Debug, Clone, Default)]
pub(crate) struct DetectSettings;

impl Pick for DetectSettings {
    const SETTINGS: &'static [crate::settings::registry::Picked] = &[
        (
            "python",
            Some(concat!(
                "Python interpreter whose packages to record ",
                default_python!()
            )),
        ),
        ("nvml-lib", None),
        ("device-root", None),
    ];
}

#[derive(Debug, Clone, Default)]
pub(crate) struct FlagsRefreshSettings;

impl Pick for FlagsRefreshSettings {
    const SETTINGS: &'static [crate::settings::registry::Picked] = &[("python", None)];
}

#[derive(Debug, Clone, Default)]
pub(crate) struct FlagsShowSettings;

impl Pick for FlagsShowSettings {
    const SETTINGS: &'static [crate::settings::registry::Picked] = &[
        ("python", None),
        (
            "sglang-version",
            Some("Show this SGLang version's embedded flag set instead of the installed one's"),
        ),
    ];
}

#[derive(Debug, Clone, Default)]
pub(crate) struct ProfilesSettings;

impl Pick for ProfilesSettings {
    const SETTINGS: &'static [crate::settings::registry::Picked] = &[
        (
            "topology",
            Some(
                "Plan for the GPUs of this topology file (topology/v1) instead of NVML; stays offline",
            ),
        ),
        ("nvml-lib", None),
    ];
}

#[derive(Debug, Clone, Default, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub(crate) opts: PlanOptions,

    /// Print the command and environment instead of exec'ing SGLang
    #[arg(long, env = "SGLANG_LAUNCH_DRY_RUN", hide_env_values = true, value_parser = FalseyValueParser::new())]
    pub(crate) dry_run: bool,
}

#[derive(Debug, Clone, Default, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub(crate) opts: PlanOptions,
}

#[derive(Debug, Clone, Default, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub(crate) opts: PlanOptions,

    /// Print only the final command, as one POSIX-shell-quoted line (wins over --json)
    #[arg(long, env = "SGLANG_LAUNCH_PRINT_ARGS", hide_env_values = true, value_parser = FalseyValueParser::new())]
    pub(crate) print_args: bool,

    /// Show secret values (--api-key, tokens) instead of ***
    #[arg(long, env = "SGLANG_LAUNCH_SHOW_SECRETS", hide_env_values = true, value_parser = FalseyValueParser::new())]
    pub(crate) show_secrets: bool,
}

#[derive(Debug, Clone, Args)]
pub struct UpgradeArgs {
    /// The SGLang release to move to (an embedded one, spelled exactly)
    #[arg(long, value_name = "VER")]
    pub(crate) to: String,

    #[command(flatten)]
    pub(crate) settings: Picked<UpgradeSettings>,

    /// Print the advice as JSON
    #[arg(long)]
    pub(crate) json: bool,

    /// Print only the rewritten command line, as one POSIX-shell-quoted line
    #[arg(long)]
    pub(crate) print_args: bool,

    /// Also list every option and environment variable that differs between the two releases
    #[arg(long)]
    pub(crate) all: bool,

    /// Show secret values (--api-key, tokens) instead of ***
    #[arg(long)]
    pub(crate) show_secrets: bool,

    /// SGLang's arguments as the release in use takes them
    #[arg(
        value_name = "SGLANG_ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub(crate) sglang_args: Vec<OsString>,
}

#[derive(Debug, Clone, Args)]
pub struct DetectArgs {
    /// Print topology/v1 JSON (the format --topology reads)
    #[arg(long)]
    pub(crate) json: bool,

    #[command(flatten)]
    pub(crate) settings: Picked<DetectSettings>,
}

#[derive(Debug, Clone, Args)]
pub struct RulesArgs {
    /// Print the catalogue as JSON
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// Rule code (e.g. AR002) or name (e.g. custom-allreduce-pcie)
    #[arg(value_name = "CODE|NAME")]
    pub(crate) rule: String,
}

#[derive(Debug, Clone, Subcommand)]
pub enum FlagsCommand {
    /// List the embedded releases and the flag sets cached from installed ones
    List,
    /// Show the flag set in use for the installed SGLang (or --sglang-version): where it comes
    /// from and every option
    Show(FlagsShowArgs),
    /// Read the installed SGLang's own parser again (a release this build does not embed) and
    /// rewrite its cached flag set
    Refresh(FlagsRefreshArgs),
}

#[derive(Debug, Clone, Default, Args)]
pub struct FlagsRefreshArgs {
    #[command(flatten)]
    pub(crate) settings: Picked<FlagsRefreshSettings>,
}

#[derive(Debug, Clone, Default, Args)]
pub struct FlagsShowArgs {
    #[command(flatten)]
    pub(crate) settings: Picked<FlagsShowSettings>,

    /// Print the flag set as JSON (the launcher's flag-data format)
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ConfigCommand {
    /// Print each setting's merged value and the layer it came from (default, a config file,
    /// profile, env VAR, command line); options given here count as the command line
    Show(ConfigShowArgs),
}

#[derive(Debug, Clone, Default, Args)]
pub struct ConfigShowArgs {
    #[command(flatten)]
    pub(crate) settings: SettingArgs,

    /// Print `{"settings": {KEY: {"value": …, "source": …}}}`
    #[arg(long)]
    pub(crate) json: bool,

    #[command(flatten)]
    pub(crate) profile: ProfileArg,
}

/// The profile to start from, and where to look for it first.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ProfileArg {
    /// Start from the named profile (NAME.toml): its SGLang arguments, environment and launcher settings; the command line wins
    #[arg(
        long,
        env = "SGLANG_LAUNCH_PROFILE",
        hide_env_values = true,
        value_name = "NAME"
    )]
    pub(crate) profile: Option<String>,

    #[command(flatten)]
    pub(crate) profiles_dir: ProfilesDir,
}

/// Where profiles are looked for before the user's, the system's and the shipped ones.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ProfilesDir {
    /// Look for profiles in this directory first
    #[arg(
        long = "profiles-dir",
        env = "SGLANG_LAUNCH_PROFILES_DIR",
        hide_env_values = true,
        value_name = "DIR",
        value_hint = ValueHint::DirPath
    )]
    pub(crate) dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ProfilesCommand {
    /// Every profile found, planned on this machine (or --topology): runnable, runnable with changes, incompatible
    List(ProfilesListArgs),
    /// One profile after `extends`, where each part comes from, and its plan here
    Show(ProfilesShowArgs),
}

#[derive(Debug, Clone, Default, Args)]
pub struct ProfilesListArgs {
    /// Print JSON
    #[arg(long)]
    pub(crate) json: bool,

    /// The GPUs to plan for (read through the settings, as `check` reads them).
    #[command(flatten)]
    pub(crate) settings: Picked<ProfilesSettings>,

    #[command(flatten)]
    pub(crate) profiles_dir: ProfilesDir,
}

#[derive(Debug, Clone, Args)]
pub struct ProfilesShowArgs {
    /// The profile's name
    pub(crate) name: String,

    #[command(flatten)]
    pub(crate) list: ProfilesListArgs,
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub(crate) shell: Shell,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}

/// Either the line up to the cursor (bash: split here, like the shell would) or the words
/// up to and including the one being completed (zsh, fish: split by the shell).
#[derive(Debug, Clone, Args)]
pub struct CompleteArgs {
    /// The command line up to the cursor
    #[arg(long, value_name = "LINE", allow_hyphen_values = true)]
    pub(crate) line: Option<String>,

    /// The words so far, the program's name first and the word being completed last
    #[arg(
        value_name = "WORDS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub(crate) words: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct SystemdUnitArgs {
    /// The profile the service runs (with --template, the instance name is the profile)
    #[arg(
        long,
        value_name = "NAME",
        required_unless_present = "template",
        conflicts_with = "template"
    )]
    pub(crate) profile: Option<String>,

    /// The unit's name, without .service
    #[arg(long, value_name = "NAME", default_value = "sglang")]
    pub(crate) name: String,

    /// The port SGLang listens on: passed to SGLang and polled by wait-ready [default: 30000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) port: Option<u16>,

    /// A unit for the user's service manager (systemctl --user)
    #[arg(long)]
    pub(crate) user: bool,

    /// A template unit NAME@.service: `systemctl start NAME@PROFILE` runs that profile
    #[arg(long)]
    pub(crate) template: bool,

    /// Seconds SGLang gets to answer /health after it starts (loading weights and capturing CUDA graphs) before the start fails
    #[arg(long, value_name = "SECONDS", default_value_t = crate::service::unit::READY_BUDGET_S, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub(crate) timeout: u64,

    /// Also look for the profile in this directory (passed to the service as --profiles-dir)
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    pub(crate) profiles_dir: Option<PathBuf>,

    /// A sandboxed system service: a dynamic user with GPU device access, a read-only system, and writable state and cache directories (plus each --writable PATH)
    #[arg(long, conflicts_with = "user")]
    pub(crate) hardened: bool,

    /// With --hardened: a path the server may write (a model or cache directory); repeatable
    #[arg(long, value_name = "PATH", requires = "hardened", value_hint = ValueHint::AnyPath)]
    pub(crate) writable: Vec<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ObservedArgs {
    /// Print the observations as JSON
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct WaitReadyArgs {
    /// The URL to poll, exactly [default: http://HOST:PORT/health]
    #[arg(long, value_name = "URL", conflicts_with_all = ["host", "port"])]
    pub(crate) url: Option<String>,

    /// The server's host
    #[arg(long, value_name = "H", default_value = "127.0.0.1")]
    pub(crate) host: String,

    /// The server's port
    #[arg(long, value_name = "N", default_value_t = crate::service::unit::DEFAULT_PORT, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) port: u16,

    /// Give up after this many seconds (exit 3)
    #[arg(long, value_name = "SECONDS", default_value_t = crate::service::unit::READY_BUDGET_S, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) timeout: u64,

    /// Give up at once (exit 3) when this process is gone: the server died while loading
    #[arg(long, value_name = "PID", value_parser = clap::value_parser!(i32).range(1..))]
    pub(crate) pid: Option<i32>,
}

/// The clap command (for completions, the man page and option lookups).
pub fn command() -> clap::Command {
    command_ref().clone()
}

/// The definition, built once: a run reads it several times (the split, the environment
/// checks, parsing), and building it costs more than a copy. It holds the `SGLANG_LAUNCH_*`
/// values of its first use, so nothing uses it before the environment is normalised.
pub(crate) fn command_ref() -> &'static clap::Command {
    static CMD: std::sync::OnceLock<clap::Command> = std::sync::OnceLock::new();
    CMD.get_or_init(<Cli as clap::CommandFactory>::command)
}

#[cfg(test)]
mod tests {
    use crate::settings::registry;

    /// Every command's option for a layered setting is the registry's: the same variable,
    /// value, completion hint and visibility as `run`'s (only the help may say what it means
    /// for that command).
    #[test]
    fn every_setting_option_is_the_registrys() {
        let run = super::command();
        let run = run.find_subcommand("run").unwrap();
        let mut seen = 0;
        let mut stack = vec![super::command()];
        while let Some(cmd) = stack.pop() {
            for arg in cmd.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                let Some(var) = registry::by_key(long) else {
                    continue;
                };
                let want = run.get_arguments().find(|a| a.get_long() == Some(long));
                let want = want.unwrap_or_else(|| panic!("run has no --{long}"));
                let what = format!("{} --{long}", cmd.get_name());
                assert_eq!(arg.get_id(), want.get_id(), "{what}");
                let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
                assert_eq!(env.as_deref(), Some(var.name), "{what}");
                assert_eq!(arg.get_value_names(), want.get_value_names(), "{what}");
                assert_eq!(arg.get_value_hint(), want.get_value_hint(), "{what}");
                assert_eq!(arg.is_hide_set(), want.is_hide_set(), "{what}");
                assert_eq!(
                    format!("{:?}", arg.get_action()),
                    format!("{:?}", want.get_action()),
                    "{what}"
                );
                seen += 1;
            }
            stack.extend(cmd.get_subcommands().cloned());
        }
        // run, check, plan and config show have all of them; the others some.
        assert!(seen > 4 * registry::settings().count(), "{seen}");
    }
}
