# The Debian package, installed the Debian way (issue 20), offline (a local
# .deb whose dependencies the root already has; not --no-download, which
# keeps apt from copying the local file into its archive). Runs last: it
# replaces the copy that scripts/install put in place for the core checks
# (same paths, not owned by any package), installs, removes, purges and
# installs again, and leaves the packaged daemon running on a fresh state.
deb=$(ls /e2e/deb/localauthd_*.deb 2>/dev/null | head -n1)
if [ -z "$deb" ]; then
  fail "deb: no package in /e2e/deb (prepare.d/40-deb.sh)"
else
  apt_get() { DEBIAN_FRONTEND=noninteractive timeout 300 apt-get -y -q "$@" >/e2e/apt.log 2>&1 || { cat /e2e/apt.log; return 1; }; }
  systemctl stop localauthd.socket localauthd.service
  systemctl disable localauthd.socket >/dev/null 2>&1
  rm -f /usr/libexec/localauthd /usr/bin/localauthctl /usr/lib/systemd/system/localauthd.service \
    /usr/lib/systemd/system/localauthd.socket /usr/lib/systemd/catalog/localauthd.catalog \
    /usr/lib/sysusers.d/localauthd.conf /etc/localauthd/localauthd.conf
  rm -rf /usr/share/doc/localauthd
  systemctl daemon-reload
  before=$(ls /var/lib/localauthd/log | wc -l)
  # Whatever backends earlier checks configured, these checks use the
  # builtin passcodes and the simulated sensor (the file stays: the daemon
  # left running at the end uses them too).
  printf '[Biometry]\nBackend=simulated\n[Passcode]\nBackend=builtin\n' > /etc/localauthd/localauthd.conf.d/99-deb-e2e.conf

  check "deb: apt-get install ./$(basename "$deb") (offline)" apt_get install "$deb"
  check "deb: the package is installed" bash -c 'dpkg-query -W -f="\${Status}" localauthd | grep -q "install ok installed"'
  check "deb: the socket is listening after install" test "$(systemctl is-active localauthd.socket)" = active
  check "deb: the service is not started by the install" test "$(systemctl is-active localauthd.service)" = inactive
  check "deb: the service has no WantedBy= (socket-activated)" test -z "$(systemctl show -p WantedBy --value localauthd.service)"
  check "deb: the unit documents man:localauthd(8)" bash -c 'systemctl show -p Documentation --value localauthd.service | grep -q "man:localauthd(8)"'
  out=$(nobody localauthctl status -o json 2>&1)
  check "deb: the first 'localauthctl status' as a user is answered ($out)" grep -q "\"uid\":65534" <<<"$out"
  check "deb: that first status started the service" until_ok active
  check "deb: started by localauthd.socket" test "$(prop TriggeredBy)" = localauthd.socket
  check "deb: runs as the localauthd user" test "$(stat -c %U /proc/$(prop MainPID))" = localauthd
  check "deb: localauthctl --version names the package's version" \
    test "$(localauthctl --version | awk '{print $2}')" = "$(dpkg-query -W -f='${Version}' localauthd)"
  check "deb: man localauthctl renders" bash -c 'MANPAGER=cat MANWIDTH=80 man localauthctl 2>/dev/null | grep -q "EXIT STATUS"'
  for page in localauthd.8 localauthd.conf.5; do
    check "deb: man page $page is installed" bash -c "man -w ${page%.*} >/dev/null 2>&1"
  done
  check "deb: the specs are in /usr/share/doc/localauthd/spec" test -f /usr/share/doc/localauthd/spec/PROTOCOL.md.gz
  completion=$(bash -c 'source /usr/share/bash-completion/bash_completion
    _completion_loader localauthctl
    COMP_WORDS=(localauthctl st); COMP_CWORD=1; COMP_LINE="localauthctl st"; COMP_POINT=15
    _localauthctl localauthctl st localauthctl; echo "${COMPREPLY[*]}"' 2>&1)
  check "deb: bash completion completes a verb (st -> $completion)" test "$completion" = status
  check "deb: localauthd --test-config passes on the installed configuration" T /usr/libexec/localauthd --test-config

  # An evaluation's end reaches the journal as authpriv (SYSLOG_FACILITY=10).
  printf 'Deb-Passc0de-2468\n' | nobody localauthctl passcode set --secret-stdin >/dev/null 2>&1
  out=$(printf 'Deb-Passc0de-2468\n' | nobody localauthctl evaluate --policy owner --secret-stdin 2>&1)
  check "deb: a user authenticates with --secret-stdin ($out)" test "$out" = "Authenticated (passcode)"
  out=$(printf '\n' | nobody localauthctl evaluate --policy owner --secret-stdin 2>&1)
  check "deb: an empty answer cancels (exit 1)" grep -q userCancel <<<"$out"
  journal_has() {  # MESSAGE_ID FIELD=VALUE...
    journalctl --sync 2>/dev/null
    local entries; entries=$(journalctl -t localauthd -o json --no-pager MESSAGE_ID="$1" LOCALAUTH_UID=65534)
    shift
    local field; for field in "$@"; do entries=$(grep -F "\"${field%%=*}\":\"${field#*=}\"" <<<"$entries"); done
    [ -n "$entries" ]
  }
  check "deb: the success is in journalctl -t localauthd, SYSLOG_FACILITY=10, method passcode" \
    until_ok journal_has b7e2c4a9d1f34e6a8c5b0d9e3f7a1c26 SYSLOG_FACILITY=10 LOCALAUTH_RESULT=success LOCALAUTH_METHOD=passcode
  check "deb: the failure is there too, with its LAError" \
    until_ok journal_has d3f8a1c6e9b24d7a8e0c5b1f6a2d9e47 SYSLOG_FACILITY=10 LOCALAUTH_RESULT=userCancel
  check "deb: the passcode change is there, with who made it" \
    until_ok journal_has f1a6d3c8b2e94f7a9d0c4e8b5a3f6d12 SYSLOG_FACILITY=10 LOCALAUTH_BY=65534 LOCALAUTH_CHANGE=passcode-set
  check "deb: no secret in the journal" bash -c '! journalctl -t localauthd --no-pager -o verbose | grep -q Deb-Passc0de-2468'
  check "deb: journalctl -x explains the entry (catalog installed)" \
    bash -c 'journalctl -x -t localauthd --no-pager MESSAGE_ID=d3f8a1c6e9b24d7a8e0c5b1f6a2d9e47 | grep -q "Many failures for one user"'

  # remove keeps the state; purge removes it.
  check "deb: apt-get remove" apt_get remove localauthd
  check "deb: remove stopped the socket" bash -c '[ "$(systemctl is-active localauthd.socket)" != active ]'
  check "deb: remove stopped the daemon" bash -c '[ "$(systemctl is-active localauthd.service)" != active ]'
  check "deb: remove kept the state directory and its log" test "$(ls /var/lib/localauthd/log 2>/dev/null | wc -l)" -ge "$before"
  check "deb: remove kept the configuration (a conffile)" test -f /etc/localauthd/localauthd.conf
  check "deb: apt-get purge" apt_get purge localauthd
  check "deb: purge removed the state directory" test ! -e /var/lib/localauthd
  check "deb: purge removed the configuration" test ! -e /etc/localauthd/localauthd.conf
  check "deb: purge removed the sealed secrets key and its drop-in" \
    bash -c '[ ! -e /etc/credstore.encrypted/localauthd.key ] && [ ! -e /etc/systemd/system/localauthd.service.d/50-credential.conf ]'

  # Installed again over a state directory that has a plaintext secrets
  # key (what the daemon makes without a credential, and what an earlier
  # postinst left beside the sealed copy: issue 27 item 11).
  install -d -m 0700 /var/lib/localauthd
  head -c 32 /dev/urandom > /var/lib/localauthd/secrets.key
  cp /var/lib/localauthd/secrets.key /root/old-secrets.key
  # Installed again, and left running and healthy for whatever comes next.
  check "deb: apt-get install again" apt_get install "$deb"
  check "deb: serving again from a fresh state" test "$(T localauthctl call ping)" = "c1 OK"
  check "deb: the fresh log verifies" T localauthctl verify
  if command -v systemd-creds >/dev/null; then
    check "deb: the install sealed a secrets key (systemd-creds) and the unit loads it" \
      bash -c '[ -s /etc/credstore.encrypted/localauthd.key ] && systemctl cat localauthd.service | grep -q "^LoadCredentialEncrypted=localauthd.key:"'
    check "deb: the sealed key is the state directory's, and its plaintext is gone" \
      bash -c '[ ! -e /var/lib/localauthd/secrets.key ] && systemd-creds decrypt --name=localauthd.key /etc/credstore.encrypted/localauthd.key - | cmp -s - /root/old-secrets.key'
  fi

  # libpam-localauth, when the tree had the module.
  pam=$(ls /e2e/deb/libpam-localauth_*.deb 2>/dev/null | head -n1)
  if [ -n "$pam" ]; then
    rm -f /lib/*/security/pam_localauth.so /usr/share/pam-configs/localauthd   # scripts/install's copies
    check "pam: apt-get install ./$(basename "$pam")" apt_get install "$pam"
    check "pam: the module is installed" bash -c 'ls /lib/*/security/pam_localauth.so >/dev/null'
    check "pam: man pam_localauth renders" bash -c 'MANPAGER=cat man pam_localauth 2>/dev/null | grep -q PAM_AUTHINFO_UNAVAIL'
    check "pam: the profile is not enabled by the install (Default: no)" bash -c '! grep -q pam_localauth /etc/pam.d/common-auth'
    check "pam: pam-auth-update --enable localauthd adds it to common-auth" \
      bash -c 'DEBIAN_FRONTEND=noninteractive pam-auth-update --enable localauthd && grep -q pam_localauth /etc/pam.d/common-auth'
    printf 'auth required pam_localauth.so\naccount required pam_permit.so\n' > /etc/pam.d/localauth-e2e
    printf '1357\n' | nobody localauthctl passcode set --secret-stdin >/dev/null 2>&1
    # S-52, S-57: with the package's defaults (the simulated sensor, builtin
    # passcodes) neither the daemon nor the module serves PAM.
    out=$(printf '1357\n' | T pamtester -v localauth-e2e nobody authenticate 2>&1)
    check "pam: the package's default backends are not served to PAM (S-52)" grep -q "cannot retrieve authentication info" <<<"$out"
    # Then with both test-only switches.
    printf 'auth required pam_localauth.so insecure_test_backends\naccount required pam_permit.so\n' > /etc/pam.d/localauth-e2e
    printf '[Daemon]\nInsecureTestBackendsForPAM=yes\n' > /etc/localauthd/localauthd.conf.d/98-deb-pam-e2e.conf
    restart_daemon
    out=$(printf '1357\n' | T pamtester -v localauth-e2e nobody authenticate 2>&1)
    rm -f /etc/localauthd/localauthd.conf.d/98-deb-pam-e2e.conf
    check "pam: pamtester authenticates nobody through the packaged module" grep -q "successfully authenticated" <<<"$out"
    check "pam: the journal names the PAM service of that authentication" \
      until_ok journal_has b7e2c4a9d1f34e6a8c5b0d9e3f7a1c26 SYSLOG_FACILITY=10 LOCALAUTH_SERVICE=localauth-e2e LOCALAUTH_CALLER=0
    check "pam: apt-get remove libpam-localauth" apt_get remove libpam-localauth
    check "pam: removing it took it out of common-auth" bash -c '! grep -q pam_localauth /etc/pam.d/common-auth'
    rm -f /etc/pam.d/localauth-e2e
    # Installed again: earlier checks' /etc/pam.d/sudo names the module.
    check "pam: apt-get install it again" apt_get install "$pam"
  else
    info "pam: no libpam-localauth package (the tree has no Sources/pam_localauth)"
  fi
fi
