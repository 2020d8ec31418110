# sudo through localauthd (S-42, S-44, S-45), sourced by /e2e/check. The
# daemon is switched to `[Passcode] Backend=shadow` with the unit drop-in
# scripts/install writes for it (SupplementaryGroups=shadow), then restored.
pam_uid=$(id -u pamtest)
pam_sudo() {  # STDIN-TEXT -> runs `sudo -k -S true` as pamtest in the background
  printf '%b' "$1" | setpriv --reuid="$pam_uid" --regid="$pam_uid" --init-groups \
    timeout 60 sudo -k -S true > /tmp/pam-sudo.out 2>&1 &
  pam_sudo_pid=$!
}
pam_feed() {  # RESULT: once pamtest's biometric prompt waits
  until_ok bash -c 'localauthctl sensor --uid "$1" "$2" >/dev/null 2>&1' _ "$pam_uid" "$1"
}
pam_done() { wait "$pam_sudo_pid"; }
pam_refused() { ! wait "$pam_sudo_pid"; }

mkdir -p /run/systemd/system/localauthd.service.d
printf '[Service]\nSupplementaryGroups=shadow\n' > /run/systemd/system/localauthd.service.d/60-e2e-shadow.conf
# The simulated sensor under PAM: the daemon's test-only switch (S-52); the
# module's own (insecure_test_backends) is on sudo's line (prepare.d).
printf '[Daemon]\nInsecureTestBackendsForPAM=yes\n[Passcode]\nBackend=shadow\n' > /etc/localauthd/localauthd.conf.d/60-e2e-pam.conf
systemctl daemon-reload
restart_daemon
check "pam: the daemon runs with Backend=shadow and the shadow group" until_ok active
check "pam: the profile is installed with Default: no" grep -qx 'Default: no' /usr/share/pam-configs/localauthd
check "pam: pamtest's login password is its passcode" bash -c 'localauthctl call status uid="$1" | grep -q "passcode-set=true"' _ "$pam_uid"
out=$(localauthctl call set-passcode secret=12345678 uid="$pam_uid" 2>&1)
check "pam: set-passcode is unavailable, naming passwd" grep -q 'name=unavailable.*passwd' <<<"$out"
T localauthctl enroll --uid "$pam_uid" >/dev/null

pam_sudo ''
pam_feed match
check "pam: sudo -S true as pamtest succeeds with a simulated match" pam_done
info "pam: sudo said: $(tr '\n' '|' < /tmp/pam-sudo.out)"

pam_sudo 'e2e-login-password\n'
pam_feed nomatch; pam_feed nomatch; pam_feed nomatch
check "pam: sudo -S true as pamtest succeeds with the password after misses" pam_done
info "pam: sudo said: $(tr '\n' '|' < /tmp/pam-sudo.out)"
check "pam: the password lifted the lockout (S-4)" bash -c 'localauthctl call status uid="$1" | grep -q "biometric-failures=0 locked-out=false"' _ "$pam_uid"

pam_sudo 'not-the-password\n\n'
pam_feed nomatch; pam_feed nomatch; pam_feed nomatch
check "pam: a wrong password, then an empty answer: sudo fails" pam_refused

pam_log=$(localauthctl log -D /var/lib/localauthd --no-pager | grep context-created | grep "uid=$pam_uid")
info "pam: $(head -n1 <<<"$pam_log")"
check "pam: the log shows service=sudo and caller=0" bash -c 'grep "service=sudo" <<<"$1" | grep -q "caller=0"' _ "$pam_log"
check "pam: sudo's authentications reached the journal (pam_syslog)" bash -c 'journalctl --no-pager -t sudo | grep -q "localauthd: user=pamtest"'

# Restore the configuration for later checks.
rm -f /run/systemd/system/localauthd.service.d/60-e2e-shadow.conf /etc/localauthd/localauthd.conf.d/60-e2e-pam.conf
systemctl daemon-reload
restart_daemon
check "pam: the daemon is back on the builtin backend" until_ok active
check "pam: serving again" test "$(T localauthctl call ping)" = "c1 OK"
