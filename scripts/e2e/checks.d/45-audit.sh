# Read-only auditors (issue 20, AuditGroup=) with the installed package: a
# member of the configured group runs localauthctl log/replay/verify without
# root; anyone else is told which group to join; the secrets stay 0600 and
# closed to the member; a restart without the group takes the access away.
# Runs after 40-deb.sh (the packaged daemon) and leaves it running as it was.
if ! dpkg-query -W -f='${Status}' localauthd 2>/dev/null | grep -q "install ok installed"; then
  fail "audit: the package is not installed (40-deb.sh)"
else
  state=/var/lib/localauthd
  dropin=/etc/localauthd/localauthd.conf.d/50-audit-e2e.conf
  getent group localauthd-audit >/dev/null || groupadd --system localauthd-audit
  id auditor >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin -G localauthd-audit auditor
  # runuser sets the member's groups from NSS, as a login does.
  auditor() { T runuser -u auditor -- "$@"; }
  restarted() { restart_daemon && until_ok active; }

  printf '[Daemon]\nAuditGroup=localauthd-audit\n' > "$dropin"
  check "audit: the daemon restarts with AuditGroup=localauthd-audit" restarted
  journalctl --sync 2>/dev/null
  check "audit: the daemon says the group may read the log" until_ok bash -c \
    'journalctl -t localauthd -b --no-pager -o cat | grep -q "The event log is readable by the members of localauthd-audit"'
  check "audit: and no failure to set it (the unit's system call filter allows ACLs)" \
    bash -c '! journalctl -t localauthd -b --no-pager -o cat | grep -q "Failed to set who may read the event log\|has no POSIX ACLs"'
  check "audit: the state directory is 0710 (traverse for the group via its ACL)" test "$(stat -c %a $state)" = 710
  check "audit: log/ is 0750" test "$(stat -c %a $state/log)" = 750
  check "audit: the segments are 0640" bash -c "[ -z \"\$(find $state/log -name '*.seg' ! -perm 0640)\" ]"

  out=$(auditor localauthctl log -n 3 --no-pager 2>&1)
  check "audit: 'localauthctl log' works as a member, without root ($out)" grep -q "daemon-started\|rules-applied" <<<"$out"
  out=$(auditor localauthctl log -o json -n 1 --no-pager 2>&1)
  check "audit: -o json too" grep -q '"seq":' <<<"$out"
  check "audit: 'localauthctl replay' works as a member" auditor localauthctl replay
  out=$(auditor localauthctl verify 2>&1)
  check "audit: 'localauthctl verify' works as a member ($out)" grep -q "^OK:" <<<"$out"
  check "audit: but the member cannot list the state directory" bash -c '! runuser -u auditor -- ls /var/lib/localauthd >/dev/null 2>&1'
  for name in passcodes secrets.key rights lock; do
    [ -e "$state/$name" ] || continue
    check "audit: $state/$name stays 0600" test "$(stat -c %a "$state/$name")" = 600
    check "audit: and the member cannot read it" bash -c "! runuser -u auditor -- cat '$state/$name' >/dev/null 2>&1"
  done

  out=$(nobody localauthctl log --no-pager 2>&1); code=$?
  check "audit: a non-member is refused (exit 1)" test "$code" = 1
  check "audit: and told which group to join ($out)" bash -c \
    'grep -q "permission denied" <<<"$1" && grep -q "localauthd-audit" <<<"$1" && grep -q "join it" <<<"$1"' _ "$out"

  # Taken away again: the daemon is left as 40-deb.sh left it.
  rm -f "$dropin"
  check "audit: the daemon restarts without AuditGroup=" restarted
  check "audit: the state directory is 0700 again" test "$(stat -c %a $state)" = 700
  out=$(auditor localauthctl log --no-pager 2>&1)
  check "audit: the former member is refused after that restart ($out)" grep -q "permission denied" <<<"$out"
  check "audit: serving afterwards" test "$(T localauthctl call ping)" = "c1 OK"
  userdel auditor 2>/dev/null
  groupdel localauthd-audit 2>/dev/null
fi
