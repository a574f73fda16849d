# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_sglang_launch_global_optspecs
    string join \n h/help V/version
end

function __fish_sglang_launch_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_sglang_launch_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_sglang_launch_using_subcommand
    set -l cmd (__fish_sglang_launch_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -s V -l version -d 'Print version'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "run" -d 'Plan, report, then exec SGLang (what `sglang-launch <SGLang arguments>` does)'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "check" -d 'Check the command line against the GPUs and the rules; never execs'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "plan" -d 'Show the plan: the final command, environment, findings and memory'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "upgrade" -d 'Rewrite a command line for another SGLang release and list every option and variable that changes'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "detect" -d 'Show this machine\'s GPU topology (topology/v1 JSON with --json)'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "rules" -d 'List every rule in the catalogue'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "explain" -d 'Explain one rule: what it catches, why, how to fix it, sources'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "flags" -d 'List, show or rebuild SGLang flag sets (embedded, or read from the installed SGLang)'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "config" -d 'Show the launcher settings merged from defaults, config files, environment and command line'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "profiles" -d 'List the profiles found and how each would run here, or show one merged with its plan'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "man" -d 'Print the man page (roff)'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "systemd-unit" -d 'Print a systemd unit that runs `sglang-launch run --profile NAME` as a service'
complete -c sglang-launch -n "__fish_sglang_launch_needs_command" -f -a "wait-ready" -d 'Wait until SGLang\'s /health answers 200 (a unit\'s ExecStartPost=, scripts)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l topology -d 'Read the GPUs from a topology file (topology/v1) instead of NVML' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l sglang-version -d 'Use this SGLang version\'s flag set instead of detecting the installed one' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l python -d 'Python interpreter that runs SGLang [default: python3 on PATH]' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l allow -d 'Skip a rule (code or name; repeatable or comma-separated)' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l deny -d 'Make a rule\'s finding an error (code or name; repeatable or comma-separated)' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l nvml-lib -d 'Path of libnvidia-ml to load instead of the system\'s libnvidia-ml.so.1' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l device-root -d 'The root under which dev/ is read for other accelerators (tests)' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l mode -d 'run and the drop-in form: enforce (error findings block, exit 78), warn (report and fix, then launch anyway) or off (exec the command as given, nothing read or changed); check and plan always judge as enforce does' -r -f -a "enforce\t''
warn\t''
off\t''"
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l profile -d 'Start from the named profile (NAME.toml): its SGLang arguments, environment and launcher settings; the command line wins' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l profiles-dir -d 'Look for profiles in this directory first' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l json-file -d 'Write the plan as JSON (plan/v1) to this file; the report stays where it goes' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l strict -d 'Treat warnings as blocking'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l no-fix -d 'Report only: leave the arguments and the environment unchanged'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l offline -d 'Never ask the Hugging Face Hub for a model that is not on disk (HF_HUB_OFFLINE=1 does too)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l online -d 'With --topology, still ask the Hugging Face Hub for a model not on disk (--offline wins)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l fit -d 'When the server does not fit, lower --context-length, then --max-running-requests, then the decode CUDA-graph max batch to the largest values that fit (each change reported)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l json -d 'Print the plan as JSON (plan/v1): on stdout for check and plan, on stderr for run (stdout is SGLang\'s)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -l dry-run -d 'Print the command and environment instead of exec\'ing SGLang'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand run" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l topology -d 'Read the GPUs from a topology file (topology/v1) instead of NVML' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l sglang-version -d 'Use this SGLang version\'s flag set instead of detecting the installed one' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l python -d 'Python interpreter that runs SGLang [default: python3 on PATH]' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l allow -d 'Skip a rule (code or name; repeatable or comma-separated)' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l deny -d 'Make a rule\'s finding an error (code or name; repeatable or comma-separated)' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l nvml-lib -d 'Path of libnvidia-ml to load instead of the system\'s libnvidia-ml.so.1' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l device-root -d 'The root under which dev/ is read for other accelerators (tests)' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l mode -d 'run and the drop-in form: enforce (error findings block, exit 78), warn (report and fix, then launch anyway) or off (exec the command as given, nothing read or changed); check and plan always judge as enforce does' -r -f -a "enforce\t''
warn\t''
off\t''"
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l profile -d 'Start from the named profile (NAME.toml): its SGLang arguments, environment and launcher settings; the command line wins' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l profiles-dir -d 'Look for profiles in this directory first' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l json-file -d 'Write the plan as JSON (plan/v1) to this file; the report stays where it goes' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l strict -d 'Treat warnings as blocking'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l no-fix -d 'Report only: leave the arguments and the environment unchanged'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l offline -d 'Never ask the Hugging Face Hub for a model that is not on disk (HF_HUB_OFFLINE=1 does too)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l online -d 'With --topology, still ask the Hugging Face Hub for a model not on disk (--offline wins)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l fit -d 'When the server does not fit, lower --context-length, then --max-running-requests, then the decode CUDA-graph max batch to the largest values that fit (each change reported)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -l json -d 'Print the plan as JSON (plan/v1): on stdout for check and plan, on stderr for run (stdout is SGLang\'s)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand check" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l topology -d 'Read the GPUs from a topology file (topology/v1) instead of NVML' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l sglang-version -d 'Use this SGLang version\'s flag set instead of detecting the installed one' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l python -d 'Python interpreter that runs SGLang [default: python3 on PATH]' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l allow -d 'Skip a rule (code or name; repeatable or comma-separated)' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l deny -d 'Make a rule\'s finding an error (code or name; repeatable or comma-separated)' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l nvml-lib -d 'Path of libnvidia-ml to load instead of the system\'s libnvidia-ml.so.1' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l device-root -d 'The root under which dev/ is read for other accelerators (tests)' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l mode -d 'run and the drop-in form: enforce (error findings block, exit 78), warn (report and fix, then launch anyway) or off (exec the command as given, nothing read or changed); check and plan always judge as enforce does' -r -f -a "enforce\t''
warn\t''
off\t''"
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l profile -d 'Start from the named profile (NAME.toml): its SGLang arguments, environment and launcher settings; the command line wins' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l profiles-dir -d 'Look for profiles in this directory first' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l json-file -d 'Write the plan as JSON (plan/v1) to this file; the report stays where it goes' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l strict -d 'Treat warnings as blocking'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l no-fix -d 'Report only: leave the arguments and the environment unchanged'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l offline -d 'Never ask the Hugging Face Hub for a model that is not on disk (HF_HUB_OFFLINE=1 does too)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l online -d 'With --topology, still ask the Hugging Face Hub for a model not on disk (--offline wins)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l fit -d 'When the server does not fit, lower --context-length, then --max-running-requests, then the decode CUDA-graph max batch to the largest values that fit (each change reported)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l json -d 'Print the plan as JSON (plan/v1): on stdout for check and plan, on stderr for run (stdout is SGLang\'s)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l print-args -d 'Print only the final command, as one POSIX-shell-quoted line (wins over --json)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -l show-secrets -d 'Show secret values (--api-key, tokens) instead of ***'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand plan" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand upgrade" -l to -d 'The SGLang release to move to (an embedded one, spelled exactly)' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand upgrade" -l sglang-version -d 'The release in use [default: the installed one]' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand upgrade" -l python -d 'Python interpreter whose SGLang is the release in use [default: python3 on PATH]' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand upgrade" -l json -d 'Print the advice as JSON'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand upgrade" -l print-args -d 'Print only the rewritten command line, as one POSIX-shell-quoted line'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand upgrade" -l show-secrets -d 'Show secret values (--api-key, tokens) instead of ***'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand upgrade" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand detect" -l python -d 'Python interpreter whose packages to record [default: python3 on PATH]' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand detect" -l nvml-lib -d 'Path of libnvidia-ml to load instead of the system\'s libnvidia-ml.so.1' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand detect" -l json -d 'Print topology/v1 JSON (the format --topology reads)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand detect" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand rules" -l json -d 'Print the catalogue as JSON'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand rules" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand explain" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand flags; and not __fish_seen_subcommand_from list show refresh" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand flags; and not __fish_seen_subcommand_from list show refresh" -f -a "list" -d 'List the embedded releases and the flag sets cached from installed ones'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand flags; and not __fish_seen_subcommand_from list show refresh" -f -a "show" -d 'Show the flag set in use for the installed SGLang (or --sglang-version): where it comes from and every option'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand flags; and not __fish_seen_subcommand_from list show refresh" -f -a "refresh" -d 'Read the installed SGLang\'s own parser again (a release this build does not embed) and rewrite its cached flag set'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand flags; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand flags; and __fish_seen_subcommand_from show" -l python -d 'Python interpreter that runs SGLang [default: python3 on PATH]' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand flags; and __fish_seen_subcommand_from show" -l sglang-version -d 'Show this SGLang version\'s embedded flag set instead of the installed one\'s' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand flags; and __fish_seen_subcommand_from show" -l json -d 'Print the flag set as JSON (the launcher\'s flag-data format)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand flags; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand flags; and __fish_seen_subcommand_from refresh" -l python -d 'Python interpreter that runs SGLang [default: python3 on PATH]' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand flags; and __fish_seen_subcommand_from refresh" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and not __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and not __fish_seen_subcommand_from show" -f -a "show" -d 'Print each setting\'s merged value and the layer it came from (default, a config file, profile, env VAR, command line); options given here count as the command line'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l topology -d 'Read the GPUs from a topology file (topology/v1) instead of NVML' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l sglang-version -d 'Use this SGLang version\'s flag set instead of detecting the installed one' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l python -d 'Python interpreter that runs SGLang [default: python3 on PATH]' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l allow -d 'Skip a rule (code or name; repeatable or comma-separated)' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l deny -d 'Make a rule\'s finding an error (code or name; repeatable or comma-separated)' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l nvml-lib -d 'Path of libnvidia-ml to load instead of the system\'s libnvidia-ml.so.1' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l device-root -d 'The root under which dev/ is read for other accelerators (tests)' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l mode -d 'run and the drop-in form: enforce (error findings block, exit 78), warn (report and fix, then launch anyway) or off (exec the command as given, nothing read or changed); check and plan always judge as enforce does' -r -f -a "enforce\t''
warn\t''
off\t''"
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l profile -d 'Start from the named profile (NAME.toml): its SGLang arguments, environment and launcher settings; the command line wins' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l profiles-dir -d 'Look for profiles in this directory first' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l strict -d 'Treat warnings as blocking'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l no-fix -d 'Report only: leave the arguments and the environment unchanged'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l offline -d 'Never ask the Hugging Face Hub for a model that is not on disk (HF_HUB_OFFLINE=1 does too)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l online -d 'With --topology, still ask the Hugging Face Hub for a model not on disk (--offline wins)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l fit -d 'When the server does not fit, lower --context-length, then --max-running-requests, then the decode CUDA-graph max batch to the largest values that fit (each change reported)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -l json -d 'Print `{"settings": {KEY: {"value": …, "source": …}}}`'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand config; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and not __fish_seen_subcommand_from list show" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and not __fish_seen_subcommand_from list show" -f -a "list" -d 'Every profile found, planned on this machine (or --topology): runnable, runnable with changes, incompatible'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and not __fish_seen_subcommand_from list show" -f -a "show" -d 'One profile after `extends`, where each part comes from, and its plan here'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and __fish_seen_subcommand_from list" -l topology -d 'Plan for the GPUs of this topology file (topology/v1) instead of NVML; stays offline' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and __fish_seen_subcommand_from list" -l profiles-dir -d 'Look for profiles in this directory first' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and __fish_seen_subcommand_from list" -l nvml-lib -d 'Path of libnvidia-ml to load instead of the system\'s libnvidia-ml.so.1' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and __fish_seen_subcommand_from list" -l json -d 'Print JSON'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and __fish_seen_subcommand_from show" -l topology -d 'Plan for the GPUs of this topology file (topology/v1) instead of NVML; stays offline' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and __fish_seen_subcommand_from show" -l profiles-dir -d 'Look for profiles in this directory first' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and __fish_seen_subcommand_from show" -l nvml-lib -d 'Path of libnvidia-ml to load instead of the system\'s libnvidia-ml.so.1' -r -F
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and __fish_seen_subcommand_from show" -l json -d 'Print JSON'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand profiles; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand completions" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand man" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand systemd-unit" -l profile -d 'The profile the service runs (with --template, the instance name is the profile)' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand systemd-unit" -l name -d 'The unit\'s name, without .service' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand systemd-unit" -l port -d 'The port SGLang listens on: passed to SGLang and polled by wait-ready [default: 30000]' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand systemd-unit" -l user -d 'A unit for the user\'s service manager (systemctl --user)'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand systemd-unit" -l template -d 'A template unit NAME@.service: `systemctl start NAME@PROFILE` runs that profile'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand systemd-unit" -s h -l help -d 'Print help'
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand wait-ready" -l url -d 'The URL to poll, exactly [default: http://HOST:PORT/health]' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand wait-ready" -l host -d 'The server\'s host' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand wait-ready" -l port -d 'The server\'s port' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand wait-ready" -l timeout -d 'Give up after this many seconds (exit 3)' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand wait-ready" -l pid -d 'Give up at once (exit 3) when this process is gone: the server died while loading' -r
complete -c sglang-launch -n "__fish_sglang_launch_using_subcommand wait-ready" -s h -l help -d 'Print help'
