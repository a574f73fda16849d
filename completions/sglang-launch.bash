_sglang__launch() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="sglang__launch"
                ;;
            sglang__launch,check)
                cmd="sglang__launch__subcmd__check"
                ;;
            sglang__launch,completions)
                cmd="sglang__launch__subcmd__completions"
                ;;
            sglang__launch,config)
                cmd="sglang__launch__subcmd__config"
                ;;
            sglang__launch,detect)
                cmd="sglang__launch__subcmd__detect"
                ;;
            sglang__launch,explain)
                cmd="sglang__launch__subcmd__explain"
                ;;
            sglang__launch,flags)
                cmd="sglang__launch__subcmd__flags"
                ;;
            sglang__launch,man)
                cmd="sglang__launch__subcmd__man"
                ;;
            sglang__launch,plan)
                cmd="sglang__launch__subcmd__plan"
                ;;
            sglang__launch,profiles)
                cmd="sglang__launch__subcmd__profiles"
                ;;
            sglang__launch,rules)
                cmd="sglang__launch__subcmd__rules"
                ;;
            sglang__launch,run)
                cmd="sglang__launch__subcmd__run"
                ;;
            sglang__launch,systemd-unit)
                cmd="sglang__launch__subcmd__systemd__subcmd__unit"
                ;;
            sglang__launch,upgrade)
                cmd="sglang__launch__subcmd__upgrade"
                ;;
            sglang__launch,wait-ready)
                cmd="sglang__launch__subcmd__wait__subcmd__ready"
                ;;
            sglang__launch__subcmd__config,show)
                cmd="sglang__launch__subcmd__config__subcmd__show"
                ;;
            sglang__launch__subcmd__flags,list)
                cmd="sglang__launch__subcmd__flags__subcmd__list"
                ;;
            sglang__launch__subcmd__flags,refresh)
                cmd="sglang__launch__subcmd__flags__subcmd__refresh"
                ;;
            sglang__launch__subcmd__flags,show)
                cmd="sglang__launch__subcmd__flags__subcmd__show"
                ;;
            sglang__launch__subcmd__profiles,list)
                cmd="sglang__launch__subcmd__profiles__subcmd__list"
                ;;
            sglang__launch__subcmd__profiles,show)
                cmd="sglang__launch__subcmd__profiles__subcmd__show"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        sglang__launch)
            opts="-h -V --help --version run check plan upgrade detect rules explain flags config profiles completions man systemd-unit wait-ready"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__check)
            opts="-h --topology --sglang-version --python --strict --no-fix --offline --online --fit --allow --deny --nvml-lib --device-root --mode --profile --profiles-dir --json --json-file --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topology)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sglang-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --allow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --deny)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device-root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "enforce warn off" -- "${cur}"))
                    return 0
                    ;;
                --profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --profiles-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__completions)
            opts="-h --help bash zsh fish elvish powershell"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__config)
            opts="-h --help show"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__config__subcmd__show)
            opts="-h --topology --sglang-version --python --strict --no-fix --offline --online --fit --allow --deny --nvml-lib --device-root --mode --json --profile --profiles-dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topology)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sglang-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --allow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --deny)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device-root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "enforce warn off" -- "${cur}"))
                    return 0
                    ;;
                --profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --profiles-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__detect)
            opts="-h --json --python --nvml-lib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__explain)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__flags)
            opts="-h --help list show refresh"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__flags__subcmd__list)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__flags__subcmd__refresh)
            opts="-h --python --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__flags__subcmd__show)
            opts="-h --python --sglang-version --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sglang-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__man)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__plan)
            opts="-h --topology --sglang-version --python --strict --no-fix --offline --online --fit --allow --deny --nvml-lib --device-root --mode --profile --profiles-dir --json --json-file --print-args --show-secrets --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topology)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sglang-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --allow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --deny)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device-root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "enforce warn off" -- "${cur}"))
                    return 0
                    ;;
                --profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --profiles-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__profiles)
            opts="-h --help list show"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__profiles__subcmd__list)
            opts="-h --json --topology --profiles-dir --nvml-lib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topology)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --profiles-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__profiles__subcmd__show)
            opts="-h --json --topology --profiles-dir --nvml-lib --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topology)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --profiles-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__rules)
            opts="-h --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__run)
            opts="-h --topology --sglang-version --python --strict --no-fix --offline --online --fit --allow --deny --nvml-lib --device-root --mode --profile --profiles-dir --json --json-file --dry-run --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topology)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sglang-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --allow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --deny)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --device-root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "enforce warn off" -- "${cur}"))
                    return 0
                    ;;
                --profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --profiles-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__systemd__subcmd__unit)
            opts="-h --profile --name --port --user --template --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__upgrade)
            opts="-h --to --sglang-version --python --json --print-args --show-secrets --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sglang-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        sglang__subcmd__launch__subcmd__wait__subcmd__ready)
            opts="-h --url --host --port --timeout --pid --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _sglang__launch -o nosort -o bashdefault -o default sglang-launch
else
    complete -F _sglang__launch -o bashdefault -o default sglang-launch
fi
