# A fingerprint sign-in unlocks the login keyring (issue 30, S-74..S-77),
# sourced by /e2e/check. The packaged daemon (checks.d/40-deb.sh) on
# Backend=shadow with [Keyring] ReleaseLoginPassword=yes; pamtest's login
# collection made from its password by a real gnome-keyring-daemon on a
# session bus of pamtest's, then locked; the `login` service's own stack
# (pam_localauth through the package's pam-auth-update profile in
# common-auth, then `auth optional pam_gnome_keyring.so`, as README.Debian
# has a display manager add it) driven by pamtester. A password sign-in
# seals the password, a fingerprint sign-in then unlocks the collection
# (checked with python3-secretstorage: Tests/keyring/collection.py, put in
# /e2e/keyring by prepare.d/75-keyring.sh), `localauthctl keyring disable`
# and the next fingerprint leave it locked. Everything is restored after.
kr_uid=$(id -u pamtest)
kr_password=e2e-login-password
kr_work=$(mktemp -d /tmp/e2e-keyring.XXXXXX)
chmod 0755 "$kr_work"
cp -a /etc/pam.d "$kr_work/pam.d.saved"
mkdir -p /var/lib/pam
cp -a /var/lib/pam "$kr_work/lib-pam.saved"

mkdir -p /run/systemd/system/localauthd.service.d
printf '[Service]\nSupplementaryGroups=shadow\n' > /run/systemd/system/localauthd.service.d/60-e2e-shadow.conf
# After 99-deb-e2e.conf (builtin passcodes), which stays for the checks after this one.
printf '[Daemon]\nInsecureTestBackendsForPAM=yes\n[Passcode]\nBackend=shadow\n[Keyring]\nReleaseLoginPassword=yes\n' \
  > /etc/localauthd/localauthd.conf.d/99-e2e-keyring.conf
systemctl daemon-reload
restart_daemon
check "keyring: the daemon runs with Backend=shadow and the release on" until_ok active
T localauthctl reset --uid "$kr_uid" >/dev/null 2>&1
T localauthctl enroll --uid "$kr_uid" >/dev/null 2>&1
kr_user() { setpriv --reuid="$kr_uid" --regid="$kr_uid" --init-groups "$@"; }
check "keyring: pamtest turns it on (localauthctl keyring enable)" kr_user timeout 20 localauthctl keyring enable

# The stack: the package's profile, then the keyring module after common-auth.
DEBIAN_FRONTEND=noninteractive pam-auth-update --enable localauthd >/dev/null 2>&1
# The simulated sensor drives the finger here: the module's own test-only
# switch beside the daemon's (S-52, S-57; without both it refuses it).
sed -i '/pam_localauth.so/ s/$/ insecure_test_backends/' /etc/pam.d/common-auth
sed -i 's|^@include common-auth$|@include common-auth\nauth       optional   pam_gnome_keyring.so|' /etc/pam.d/login
check "keyring: common-auth asks pam_localauth first (pam-auth-update --enable localauthd)" \
  grep -q '^auth.*\[success=[0-9].*pam_localauth.so' /etc/pam.d/common-auth
check "keyring: the login service runs pam_gnome_keyring after common-auth" \
  bash -c 'grep -v "^#" /etc/pam.d/login | grep -A1 "^@include common-auth" | grep -q "^auth *optional *pam_gnome_keyring.so"'

# pamtest's session bus and keyring daemon, in a runtime directory of its own.
kr_run=$kr_work/run kr_home=$kr_work/home
mkdir -m 0700 "$kr_run" "$kr_home"
chown "$kr_uid:$kr_uid" "$kr_run" "$kr_home"
kr_session() { kr_user env -i PATH=/usr/bin:/bin HOME="$kr_home" XDG_RUNTIME_DIR="$kr_run" \
  DBUS_SESSION_BUS_ADDRESS="unix:path=$kr_run/bus" "$@"; }
kr_bus=$(kr_session dbus-daemon --session --address="unix:path=$kr_run/bus" --fork --print-pid)
printf '%s' "$kr_password" | kr_session timeout 20 gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
kr_collection() { kr_session timeout 20 /usr/bin/python3 /e2e/keyring/collection.py "$@" 2>&1; }
out=$(kr_collection lock)
check "keyring: pamtest's login collection exists and is locked ($out)" grep -q '^locked' <<<"$out"

# pamtester through the login service, with pamtest's runtime directory
# (where pam_gnome_keyring finds the daemon's control socket).
kr_pam() {  # STDIN-TEXT
  printf '%b' "$1" | XDG_RUNTIME_DIR="$kr_run" timeout 60 pamtester -v login pamtest authenticate \
    > "$kr_work/pam.out" 2>&1 &
  kr_pam_pid=$!
}
kr_feed() { until_ok bash -c 'localauthctl sensor --uid "$1" "$2" >/dev/null 2>&1' _ "$kr_uid" "$1"; }
kr_signed_in() { wait "$kr_pam_pid" && grep -q 'successfully authenticated' "$kr_work/pam.out"; }
kr_log() {  # TYPE FIELD...: a record of pamtest's with those JSON fields
  local records field
  records=$(localauthctl log -D /var/lib/localauthd -o json --no-pager 2>/dev/null | grep "\"type\":\"$1\"" | grep "\"uid\":$kr_uid[,}]")
  shift
  for field in "$@"; do records=$(grep -F "$field" <<<"$records"); done
  [ -n "$records" ]
}

# 1. A password sign-in (three misses, then the password): the daemon seals it (S-74).
kr_pam "$kr_password\n"
kr_feed nomatch; kr_feed nomatch; kr_feed nomatch
check "keyring: a password sign-in through login succeeds" kr_signed_in
info "keyring: pamtester said: $(tr '\n' '|' < "$kr_work/pam.out")"
check "keyring: the daemon sealed the password (login-secret-stored service=login)" \
  until_ok kr_log login-secret-stored '"service":"login"'
out=$(kr_collection show)
check "keyring: the typed password unlocked the collection too (login-secret=typed) ($out)" grep -q '^unlocked' <<<"$out"
out=$(kr_user timeout 20 localauthctl keyring status 2>&1)
check "keyring: keyring status says stored and current" grep -q '^Stored:   yes, current' <<<"$out"

# 2. Locked again; a fingerprint sign-in through the same stack unlocks it (S-75).
out=$(kr_collection lock)
check "keyring: locked again before the fingerprint ($out)" grep -q '^locked' <<<"$out"
kr_pam ''
kr_feed match
check "keyring: a fingerprint sign-in through login succeeds" kr_signed_in
info "keyring: pamtester said: $(tr '\n' '|' < "$kr_work/pam.out")"
check "keyring: the daemon released the password to it (login-secret-released service=login)" \
  until_ok kr_log login-secret-released '"service":"login"'
out=$(kr_collection show)
check "keyring: after the fingerprint, the login collection is unlocked ($out)" grep -q '^unlocked' <<<"$out"

# 3. The protocol's hostile and once-only cases against the packaged daemon.
while IFS= read -r line; do
  case $line in ok\ -\ *) pass "keyring: ${line#ok - }" ;; *) fail "keyring: ${line#not ok - }" ;; esac
done < <(timeout 120 /usr/bin/python3 /e2e/keyring/hostile.py /run/localauthd/socket login "$kr_uid" \
  "$(printf '%s' "$kr_password" | sha256sum | cut -d' ' -f1)" 2>&1 || true)

# 4. Turned off by the user: the copy goes, a fingerprint leaves the keyring locked.
check "keyring: pamtest turns it off (localauthctl keyring disable)" kr_user timeout 20 localauthctl keyring disable
check "keyring: the copy was voided (login-secret-voided reason=disabled)" \
  until_ok kr_log login-secret-voided '"reason":"disabled"'
kr_collection lock >/dev/null
kr_pam ''
kr_feed match
check "keyring: disabled, a fingerprint sign-in through login still succeeds" kr_signed_in
out=$(kr_collection show)
check "keyring: disabled, the fingerprint leaves the collection locked ($out)" grep -q '^locked' <<<"$out"
check "keyring: the password is in no log record, no daemon journal entry, no state file" bash -c \
  '! localauthctl log -D /var/lib/localauthd --no-pager | grep -qF "$1" && ! journalctl --no-pager -o verbose -u localauthd.service | grep -qF "$1" && ! grep -rqF "$1" /var/lib/localauthd' _ "$kr_password"

# Restore: the keyring daemon and bus, the PAM files, the configuration.
for pid in $(pgrep -u "$kr_uid" || true); do
  tr '\0' '\n' 2>/dev/null < "/proc/$pid/environ" | grep -qxF "XDG_RUNTIME_DIR=$kr_run" && kill "$pid" 2>/dev/null
done
[ -n "$kr_bus" ] && kill "$kr_bus" 2>/dev/null
T localauthctl keyring disable --uid "$kr_uid" >/dev/null 2>&1
T localauthctl reset --uid "$kr_uid" >/dev/null 2>&1
rm -rf /etc/pam.d /var/lib/pam
cp -a "$kr_work/pam.d.saved" /etc/pam.d
cp -a "$kr_work/lib-pam.saved" /var/lib/pam
check "keyring: common-auth and login are as they were" bash -c '! grep -q pam_localauth /etc/pam.d/common-auth && ! grep -q pam_gnome_keyring /etc/pam.d/login'
rm -rf "$kr_work"
rm -f /run/systemd/system/localauthd.service.d/60-e2e-shadow.conf /etc/localauthd/localauthd.conf.d/99-e2e-keyring.conf
systemctl daemon-reload
restart_daemon
check "keyring: the daemon is back on the builtin backend" until_ok active
check "keyring: serving again" test "$(T localauthctl call ping)" = "c1 OK"
