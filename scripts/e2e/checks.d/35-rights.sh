# LARight's secrets under real systemd (PROTOCOL.md v1.1), sourced by
# /e2e/check: the embedded default key (STATE/secrets.key, 0600), then the
# same key sealed by systemd-creds and loaded with LoadCredentialEncrypted=
# (the drop-in scripts/install writes on a live system). The state key is
# removed first, so a secret saved before still opening after the restart
# proves the key came from the credential. Leaves the daemon running with the
# credential, and no rights.
rights_key=/var/lib/localauthd/secrets.key
open_session
out=$(req 'r1 right-save identifier=e2e.login requirement=biometry secret="ZTJlLXNlY3JldC0xOQ=="')
check "rights: right-save answers OK ($out)" test "$out" = "r1 OK"
check "rights: the embedded default key is STATE/secrets.key, localauthd's, 0600" \
  test "$(stat -c '%U %a %s' "$rights_key")" = "localauthd 600 32"
check "rights: the store is a file of its own, 0600" test "$(stat -c '%U %a' /var/lib/localauthd/rights)" = "localauthd 600"
check "rights: the secret is not in the store in the clear" bash -c '! grep -qa "e2e-secret-19\|ZTJlLXNlY3JldC0xOQ" /var/lib/localauthd/rights'
close_session

install -d -m 0700 /etc/credstore.encrypted
if T systemd-creds encrypt --name=localauthd.key "$rights_key" /etc/credstore.encrypted/localauthd.key 2>/tmp/creds.err; then
  chmod 0400 /etc/credstore.encrypted/localauthd.key
  mkdir -p /etc/systemd/system/localauthd.service.d
  printf '[Service]\nLoadCredentialEncrypted=localauthd.key:/etc/credstore.encrypted/localauthd.key\n' \
    > /etc/systemd/system/localauthd.service.d/50-credential.conf
  rm -f "$rights_key"
  systemctl daemon-reload
  restart_daemon
  check "rights: the daemon starts with the sealed credential" until_ok active
  check "rights: it says the key came from its credentials directory" until_ok bash -c \
    'journalctl -b -u localauthd.service --no-pager | grep -q "key from /run/credentials/localauthd.service/localauthd.key"'
  check "rights: no new state-directory key was made" test ! -e "$rights_key"
  T localauthctl call reset uid=0 >/dev/null 2>&1 || true
  T localauthctl call set-passcode secret=e2e-rights-1 >/dev/null 2>&1 || true
  T localauthctl call enroll uid=0 >/dev/null 2>&1 || true
  open_session
  created=$(req 'n1 new')
  if [[ $created != "n1 OK ctx="* ]]; then  # once more on a fresh session (safety net)
    info "rights: new said \"$created\"; retrying on a new session"
    close_session; open_session
    created=$(req 'n1 new')
  fi
  ctx=$(sed -n 's/.*ctx=\([0-9a-f]*\).*/\1/p' <<<"$created")
  check "rights: a context for the authorization ($created)" test -n "$ctx"
  echo "a1 right-authorize ctx=$ctx identifier=e2e.login reason=e2e" >&"${S[1]}"
  until_ok bash -c 'localauthctl sensor --uid 0 match >/dev/null 2>&1'
  out=$(final_reply a1)
  check "rights: right-authorize succeeds on a simulated match ($out)" bash -c '[[ $1 == "a1 OK method=biometric"* ]]' _ "$out"
  out=$(req "s1 right-secret ctx=$ctx identifier=e2e.login")
  check "rights: the secret saved under the state key opens with the credential ($out)" \
    bash -c '[[ $1 == *"secret=\"ZTJlLXNlY3JldC0xOQ==\""* || $1 == *"secret=ZTJlLXNlY3JldC0xOQ=="* ]]' _ "$out"
  out=$(req 'x1 right-remove all=true')
  check "rights: right-remove all=true ($out)" test "$out" = "x1 OK"
  close_session
  T localauthctl call unenroll uid=0 >/dev/null 2>&1 || true
  T localauthctl call clear-passcode uid=0 >/dev/null 2>&1 || true
else
  info "rights: systemd-creds encrypt failed here: $(tr '\n' '|' < /tmp/creds.err)"
  fail "rights: systemd-creds can seal the key"
fi
check "rights: the daemon is left running" active
