# bash completion for localauthctl                         -*- shell-script -*-
#
# Verbs, options, their values and operands are read from localauthctl's own
# help (`localauthctl --help`, `localauthctl VERB --help`), so the completion
# covers every verb and option of the installed binary and cannot go stale.
# Installed as /usr/share/bash-completion/completions/localauthctl.

_localauthctl_verbs() {
    "$1" --help 2>/dev/null | awk '/^  [a-z][a-z-]* +[A-Z]/ { print $1 }'
}

# "SPELLINGS<TAB>VALUE" per option, from the Options: section.
_localauthctl_options() {
    "$1" "$2" --help 2>/dev/null | awk '
        /^Options:/ { on = 1; next }
        on && /^  -/ {
            line = substr($0, 3); names = ""; value = ""
            n = split(line, words, " ")
            for (i = 1; i <= n; i++) {
                w = words[i]
                if (w ~ /^-/) { sub(/,$/, "", w); names = names (names == "" ? "" : " ") w; continue }
                if (words[i - 1] ~ /^-.*[^,]$/ && value == "" && w != "") { value = w }
                break
            }
            print names "\t" value
        }'
}

_localauthctl() {
    local cur prev words cword
    _init_completion -n = || return
    local ctl=${words[0]}
    local verb="" i
    for (( i = 1; i < cword; i++ )); do
        case ${words[i]} in
            -*) ;;
            *) verb=${words[i]}; break ;;
        esac
    done

    if [[ -z $verb ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '--help --version' -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(_localauthctl_verbs "$ctl") help" -- "$cur"))
        fi
        return
    fi
    if [[ $verb == help ]]; then
        COMPREPLY=($(compgen -W "$(_localauthctl_verbs "$ctl")" -- "$cur"))
        return
    fi

    local table names value spelling
    table=$(_localauthctl_options "$ctl" "$verb")
    # The value of the option before the cursor.
    if [[ $prev == -* ]]; then
        while IFS=$'\t' read -r names value; do
            for spelling in $names; do
                [[ $spelling == "$prev" ]] || continue
                case $value in
                    "") break 2 ;;
                    *'|'*) COMPREPLY=($(compgen -W "${value//|/ }" -- "$cur")) ;;
                    DIR) _filedir -d ;;
                    PATH|FILE) _filedir ;;
                    N) [[ $prev == --uid ]] && COMPREPLY=($(compgen -u -- "$cur")) ;;
                    P) COMPREPLY=($(compgen -W 'biometrics owner companion biometrics-or-companion wrist' -- "$cur")) ;;
                    T) COMPREPLY=($(compgen -W 'today yesterday now -1h -1d' -- "$cur")) ;;
                esac
                return
            done
        done <<<"$table"
    fi
    if [[ $cur == -* ]]; then
        local all=""
        while IFS=$'\t' read -r names value; do all+=" $names"; done <<<"$table"
        COMPREPLY=($(compgen -W "$all" -- "$cur"))
        return
    fi
    # Operands such as set|clear or match|nomatch|retry|disconnect.
    local operands
    operands=$("$ctl" "$verb" --help 2>/dev/null | awk 'NR == 1 { print $NF }')
    [[ $operands == *'|'* ]] && COMPREPLY=($(compgen -W "${operands//|/ }" -- "$cur"))
}
complete -F _localauthctl localauthctl
