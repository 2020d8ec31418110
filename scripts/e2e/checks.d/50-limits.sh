# S-48 under systemd with the shipped defaults (issue #15 item 2), sourced
# by /e2e/check: an unprivileged flood of can-evaluate is cut at the per-uid
# budget (UserEventRate=20, UserEventBurst=200) with limit-exceeded, root's
# identical flood is not, and the daemon goes on answering. Leaves it running.

# PREFIX... -> "answered refused" for `new` and 300 pipelined can-evaluates
# on one connection opened through PREFIX (e.g. setpriv as another uid).
limits_flood() {
  local line ctx answered=0 refused=0 i
  coproc F { exec "$@" socat - UNIX-CONNECT:/run/localauthd/socket; }
  echo "n new" >&"${F[1]}"
  if IFS= read -r -t 20 line <&"${F[0]}" && [[ $line == "n OK ctx="* ]]; then
    ctx=${line##*ctx=}
    for i in $(seq 300); do echo "c$i can-evaluate ctx=$ctx policy=owner"; done >&"${F[1]}"
    for i in $(seq 300); do
      IFS= read -r -t 20 line <&"${F[0]}" || break
      case $line in *name=limit-exceeded*) refused=$((refused + 1)) ;; *) answered=$((answered + 1)) ;; esac
    done
  else
    info "limits: new got: $line"
  fi
  eval "exec ${F[1]}>&-"
  wait "$F_PID" 2>/dev/null
  echo "$answered $refused"
}

T localauthctl call ping >/dev/null
read -r answered refused < <(limits_flood setpriv --reuid=65534 --regid=65534 --clear-groups)
info "limits: uid 65534's 300 pipelined can-evaluates: $answered answered, $refused refused"
check "limits: an unprivileged can-evaluate flood is cut at the budget (limit-exceeded)" \
  test "$refused" -gt 0 -a "$answered" -le 260 -a "$((answered + refused))" = 300
read -r answered refused < <(limits_flood env)
check "limits: root's identical flood is not limited ($answered answered, $refused refused)" \
  test "$refused" = 0 -a "$answered" = 300
check "limits: the daemon still answers (ping)" T localauthctl call ping
check "limits: stats counts the refusals" bash -c \
  'localauthctl call stats 2>/dev/null | grep -Eq "rate-refusals=[1-9]"'
