# S-49 against the real journal (issue #15 item 6), sourced by /e2e/check:
# the daemon, as user localauthd, records its log's head in the journal and
# reads it back at start (SupplementaryGroups=systemd-journal); a state
# directory rolled back to an older copy is refused; `--accept-log-rollback`
# (through a runtime drop-in, as an administrator would) starts it once and
# is recorded. Leaves the daemon running on the accepted log.
anchor_id=3c6d8f1a2e4b4f79a5d0c2e8b7f1a964
unanchored_id=b72e5d1c8a3f4e96b0d4c7a2e9f15b38
state=/var/lib/localauthd
newest_anchor() { journalctl --no-pager -o cat --output-fields=LOCALAUTH_SEQ MESSAGE_ID="$anchor_id" -n 1 2>/dev/null | tail -n1; }
refused() { [ "$(systemctl is-active localauthd.service)" != active ] \
  && journalctl --no-pager -u localauthd.service -o cat | grep -q "Refusing to start: the event log ends at seq"; }

T localauthctl call ping >/dev/null
check "anchor: the daemon runs" until_ok active
check "anchor: its log head is in the journal (MESSAGE_ID=$anchor_id)" until_ok test -n "$(newest_anchor)"
check "anchor: the daemon could read the journal back (no 'cannot anchor' entry)" \
  test -z "$(journalctl --no-pager -o cat MESSAGE_ID=$unanchored_id 2>/dev/null)"
out=$(T localauthctl verify --journal -D "$state" 2>&1)
check "anchor: verify --journal finds the log holding the journal's head" grep -q "journal: the log holds the head" <<<"$out"

# Roll back: an older copy of the state directory, taken while stopped.
T systemctl stop localauthd.service
rm -rf /root/state-copy && cp -a "$state" /root/state-copy
T localauthctl call ping >/dev/null
for i in 1 2 3; do T localauthctl call new >/dev/null; done
T systemctl stop localauthd.service
after_stop=$(newest_anchor)
info "anchor: newest head after the stop: seq $after_stop"
rm -rf "${state:?}"/* && cp -a /root/state-copy/. "$state"/
T systemctl start localauthd.service
check "anchor: a state directory restored from an older copy is refused" until_ok refused
check "anchor: the refusal names verify --journal and --accept-log-rollback" bash -c \
  'journalctl --no-pager -u localauthd.service -o cat | grep "Refusing to start" | tail -n1 | grep -q "localauthctl verify --journal.*--accept-log-rollback"'
out=$(T localauthctl verify --journal -D "$state" 2>&1); code=$?
check "anchor: verify --journal fails on the rolled-back log (exit $code)" test "$code" = 1
check "anchor: verify --journal says it is behind" grep -q "behind the head recorded in the journal" <<<"$out"

# Accept it once, as an administrator would: a runtime drop-in adds the flag.
T systemctl stop localauthd.service
systemctl reset-failed localauthd.service 2>/dev/null
mkdir -p /run/systemd/system/localauthd.service.d
printf '[Service]\nExecStart=\nExecStart=/usr/libexec/localauthd --accept-log-rollback\n' \
  > /run/systemd/system/localauthd.service.d/10-e2e-accept.conf
systemctl daemon-reload
T systemctl start localauthd.service
check "anchor: --accept-log-rollback starts the daemon on it" until_ok active
check "anchor: the acceptance is recorded as log-rollback-accepted" bash -c \
  'localauthctl log -D /var/lib/localauthd -o json --no-pager | grep -q "\"type\":\"log-rollback-accepted\".*\"journal_seq\":$1" ' _ "$after_stop"
rm -f /run/systemd/system/localauthd.service.d/10-e2e-accept.conf
systemctl daemon-reload
restart_daemon
check "anchor: without the flag again, it starts (the journal's head is now the accepted log's)" until_ok active
out=$(T localauthctl verify --journal -D "$state" 2>&1)
check "anchor: verify --journal agrees again" grep -q "journal: the log holds the head" <<<"$out"
rm -rf /root/state-copy
