# S-52 under systemd with real su (issue 27 item 1), sourced by /e2e/check:
# an AdminGroup member who is not root tries every way to act on root, and
# to answer root's `su` prompt with a sensor reading. The daemon runs with
# the test-only InsecureTestBackendsForPAM=yes (the simulated sensor), the
# worst case; its configuration is restored afterwards.
ro_uid=$(id -u pamadmin)
as_pamadmin() { T setpriv --reuid="$ro_uid" --regid="$ro_uid" --init-groups "$@"; }
printf '[Daemon]\nAdminGroup=localauth-admins\nInsecureTestBackendsForPAM=yes\n' \
  > /etc/localauthd/localauthd.conf.d/65-e2e-root-only.conf
restart_daemon
check "root-only: the daemon runs with AdminGroup=localauth-admins" until_ok active
out=$(as_pamadmin localauthctl call status uid=0 2>&1)
check "root-only: pamadmin is an administrator (status uid=0: ${out%% *} OK)" grep -q "^c1 OK uid=0 " <<<"$out"
for request in "enroll uid=0" "unenroll uid=0" "reset uid=0" "unlocked uid=0" "set-passcode uid=0 secret=98765" \
               "clear-passcode uid=0" "sensor uid=0 result=match"; do
  out=$(as_pamadmin localauthctl call $request 2>&1)
  check "root-only: pamadmin's $request is permission-denied" grep -q "name=permission-denied" <<<"$out"
done
out=$(as_pamadmin localauthctl call enroll uid="$pam_uid" 2>&1)
check "root-only: pamadmin still enrolls another user" grep -q "^c1 OK templates=" <<<"$out"

# The attack: root is enrolled and has a passcode (40-deb.sh left a fresh
# state); pamadmin runs `su root` under a pty and feeds root's prompt a match.
T localauthctl call enroll uid=0 >/dev/null 2>&1 || true
T localauthctl call set-passcode secret=55555 >/dev/null 2>&1 || true
check "root-only: root has a passcode and a finger" bash -c \
  'localauthctl call status uid=0 | grep "passcode-set=true" | grep -Eq "enrolled=[1-9]"'
ro_successes() { localauthctl log -D /var/lib/localauthd --no-pager -o json | grep -c '"type":"evaluation-succeeded"'; }
ro_before=$(ro_successes)
# Its terminal stays open (stdin a sleep): with /dev/null, su read EOF at
# "Password or touch the sensor:" and ended before the reading (S-60).
as_pamadmin script -qec "su root -c 'touch /tmp/root-only-su-ran'" /dev/null < <(sleep 60) > /tmp/root-only-su.out 2>&1 &
ro_su=$!
# root's prompt waits once a harmless retry reading (root's) is taken.
check "root-only: pamadmin's su root reached root's biometric prompt" \
  until_ok bash -c 'localauthctl call sensor uid=0 result=retry 2>/dev/null | grep -q "^c1 OK"'
out=$(as_pamadmin localauthctl call sensor uid=0 result=match 2>&1)
check "root-only: pamadmin's match for su's prompt is permission-denied" grep -q "name=permission-denied" <<<"$out"
kill "$ro_su" 2>/dev/null; pkill -P "$ro_su" 2>/dev/null; wait "$ro_su" 2>/dev/null
info "root-only: su said: $(tr '\n' '|' < /tmp/root-only-su.out)"
check "root-only: su root did not run its command" test ! -e /tmp/root-only-su-ran
check "root-only: no new success in the log" test "$(ro_successes)" = "$ro_before"

rm -f /etc/localauthd/localauthd.conf.d/65-e2e-root-only.conf
restart_daemon
check "root-only: the daemon is back on its configuration" until_ok active
