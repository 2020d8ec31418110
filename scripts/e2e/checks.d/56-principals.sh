# S-53 under systemd with real sudo (issue 27 item 4), sourced by
# /e2e/check: pamtest's sudos, waiting at their prompts, fill pamtest's
# connection cap (every sudo is setuid root: before S-53 they filled uid
# 0's); root's localauthctl is still served, and pamtest's next sudo, with
# the right password while pamtest is inside a delay, is refused for the
# limits (PAM_AUTH_ERR) instead of falling through to pam_unix, which
# let it in. The configuration is restored afterwards.
pr_uid=$(id -u pamtest)
mkdir -p /run/systemd/system/localauthd.service.d
printf '[Service]\nSupplementaryGroups=shadow\n' > /run/systemd/system/localauthd.service.d/60-e2e-shadow.conf
# After 40-deb's 99-deb-e2e.conf (builtin passcodes), so that shadow wins.
printf '[Daemon]\nMaxConnectionsPerUser=8\nInsecureTestBackendsForPAM=yes\n[Passcode]\nBackend=shadow\n' \
  > /etc/localauthd/localauthd.conf.d/99-e2e-principals.conf
systemctl daemon-reload
restart_daemon
check "principals: the daemon runs with MaxConnectionsPerUser=8" until_ok active
pr_sudo() {  # STDIN-TEXT: one `sudo -k -S true` as pamtest; its exit status
  printf '%b' "$1" | setpriv --reuid="$pr_uid" --regid="$pr_uid" --init-groups timeout 60 sudo -k -S true > /tmp/pr-sudo.out 2>&1
}

# pamtest into a delay: nothing enrolled (straight to the password), six
# wrong passwords over two sudos (S-5).
T localauthctl unenroll --uid "$pr_uid" >/dev/null 2>&1 || true
pr_sudo 'wrong-1\nwrong-2\nwrong-3\n'
info "principals: the first wrong sudo said: $(tr '\n' '|' < /tmp/pr-sudo.out)"
pr_sudo 'wrong-4\nwrong-5\nwrong-6\n'
info "principals: the second wrong sudo said: $(tr '\n' '|' < /tmp/pr-sudo.out)"
info "principals: pamtest: $(localauthctl call status uid="$pr_uid" 2>&1)"
check "principals: pamtest is inside a delay" bash -c \
  'localauthctl call status uid="$1" | grep -Eq "retry-after=[1-9]"' _ "$pr_uid"
# With a finger enrolled, each sudo waits at the biometric prompt (the
# passcode's delay does not end an evaluation while biometry is usable).
# A newer evaluation of the same user cancels the older one's prompt (S-30),
# so each sudo is stopped (SIGSTOP) once its connection is open, as the
# attack did: a stopped sudo holds its connection however it is answered.
T localauthctl enroll --uid "$pr_uid" >/dev/null
pr_connections() { localauthctl call stats | sed -n 's/.* connections=\([0-9]*\) .*/\1/p'; }
pr_groups=()
for i in 1 2 3 4 5 6 7 8; do
  # On a terminal of its own that stays open (sudo -S on a pipe cancels).
  setsid bash -c 'setpriv --reuid="$1" --regid="$1" --init-groups timeout 110 script -qec "sudo -k true" /dev/null < <(sleep 120) >/dev/null 2>&1' \
    _ "$pr_uid" &
  pr_groups+=($!)
  # Its connection, besides stats' own; then the newest sudo is stopped.
  until_ok bash -c '[ "$(localauthctl call stats | sed -n "s/.* connections=\([0-9]*\) .*/\1/p")" -ge "$1" ]' _ $((i + 1))
  pkill -STOP -n -x sudo
done
check "principals: eight stopped sudos of pamtest hold their connections ($(pr_connections) with stats')" \
  until_ok bash -c '[ "$(localauthctl call stats | sed -n "s/.* connections=\([0-9]*\) .*/\1/p")" -ge 9 ]'
out=$(T localauthctl call ping 2>&1)
check "principals: root's own localauthctl is served ($out)" test "$out" = "c1 OK"
pr_sudo 'e2e-login-password\n'; rc=$?
info "principals: the ninth sudo said: $(tr '\n' '|' < /tmp/pr-sudo.out)"
check "principals: pamtest's ninth sudo, the right password inside a delay, is refused (exit $rc)" test "$rc" -ne 0
check "principals: pam_localauth said the service is busy, not unavailable" \
  bash -c 'journalctl --no-pager -t sudo | grep "localauthd: user=pamtest" | tail -n1 | grep -q "result=refused-load"'
pkill -KILL -x sudo 2>/dev/null
for group in "${pr_groups[@]}"; do kill -- -"$group" 2>/dev/null; done
wait "${pr_groups[@]}" 2>/dev/null
T localauthctl reset --uid "$pr_uid" >/dev/null

rm -f /run/systemd/system/localauthd.service.d/60-e2e-shadow.conf /etc/localauthd/localauthd.conf.d/99-e2e-principals.conf
systemctl daemon-reload
restart_daemon
check "principals: the daemon is back on its configuration" until_ok active
