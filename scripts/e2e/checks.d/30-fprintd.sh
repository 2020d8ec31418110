# A real fingerprint stack through Backend=fprintd (S-43), sourced by
# /e2e/check: fprintd (D-Bus activated by systemd) with libfprint's virtual
# device, polkitd with the shipped rule, one match and one lockout for the
# user fptest. The daemon's configuration is restored afterwards.
fp_uid=$(id -u fptest)
fp_socket=/run/fprintd-e2e/virtual-device
fp_reader() { busctl call net.reactivated.Fprint /net/reactivated/Fprint/Manager net.reactivated.Fprint.Manager GetDefaultDevice >/dev/null 2>&1; }
fp_finger_needed() {
  busctl get-property net.reactivated.Fprint /net/reactivated/Fprint/Device/0 net.reactivated.Fprint.Device \
    finger-needed 2>/dev/null | grep -q '^b true'
}
fp_device() { printf '%s\n' "$1" | T socat - UNIX-CONNECT:"$fp_socket"; }
# A SCAN only once fprintd waits for a finger (an earlier one may be lost).
fp_scan() { until_ok fp_finger_needed && fp_device "SCAN $1"; }
fp_enroll() {  # FINGER PRINT-ID: fprintd-enroll as root for fptest, every stage scanning PRINT-ID
  local out=/tmp/fp-enroll.out sent=0
  stdbuf -oL fprintd-enroll -f "$1" fptest > "$out" 2>&1 &
  local pid=$!
  while ! grep -q 'enroll-completed\|enroll-failed\|Failed' "$out" && [ "$sent" -lt 10 ]; do
    until_ok fp_finger_needed || break
    fp_device "SCAN $2"
    sent=$((sent + 1))
    until_ok bash -c '[ "$(grep -c "Enroll result" "$1")" -ge "$2" ]' _ "$out" "$sent" || break
  done
  wait "$pid"
  info "fprintd: fprintd-enroll said: $(tr '\n' '|' < "$out")"
  grep -q enroll-completed "$out"
}
open_session_as() { coproc S { exec setpriv --reuid="$1" --regid="$1" --clear-groups socat - UNIX-CONNECT:/run/localauthd/socket; }; }
next_reply() {  # TAG -> the next line with TAG (a PROMPT or the final answer)
  local line
  while IFS= read -r -t 20 line <&"${S[0]}"; do
    case $line in "$1 "*) echo "$line"; return 0 ;; esac
  done
  return 1
}

check "fprintd: D-Bus activation starts fprintd with the virtual reader" until_ok fp_reader
check "fprintd: the polkit rule is installed" test -f /usr/share/polkit-1/rules.d/localauthd-fprintd.rules
check "fprintd: fptest's right index finger is enrolled with fprintd-enroll" fp_enroll right-index-finger e2e-print

printf '[Biometry]\nBackend=fprintd\n' > /etc/localauthd/localauthd.conf.d/70-e2e-fprintd.conf
restart_daemon
check "fprintd: the daemon runs with Backend=fprintd" until_ok active
out=$(T localauthctl call set-passcode uid="$fp_uid" secret=2468 2>&1)
check "fprintd: fptest has a passcode ($out)" grep -q "OK" <<<"$out"
out=$(T localauthctl call enroll uid="$fp_uid" 2>&1)
check "fprintd: enroll is unavailable, naming fprintd-enroll" grep -q 'name=unavailable.*fprintd-enroll' <<<"$out"

open_session_as "$fp_uid"
line=$(req "f1 new"); fp_ctx=${line#f1 OK ctx=}
# (Not a pipeline: bash closes the coprocess's fds in a pipeline's subshell.)
fp_can() { local reply; reply=$(req "f2 can-evaluate ctx=$fp_ctx policy=biometrics"); [[ $reply == "f2 OK"* ]]; }
# S-43: the first check waits for fprintd's answer (D-Bus activation
# included), so it already sees the finger enrolled before the daemon ran.
if fp_can; then pass "fprintd: the first can-evaluate sees fptest's finger"; else
  fail "fprintd: the first can-evaluate sees fptest's finger"
  info "fprintd: $(req "f2 can-evaluate ctx=$fp_ctx policy=biometrics")"
  info "fprintd: root asks fprintd: $(busctl call net.reactivated.Fprint /net/reactivated/Fprint/Device/0 net.reactivated.Fprint.Device ListEnrolledFingers s fptest 2>&1)"
  info "fprintd: journal: $(journalctl --no-pager -o cat -u localauthd.service -u fprintd.service -u polkit.service | tail -n 40 | tr '\n' '|')"
fi
status=$(T localauthctl status --uid "$fp_uid")
info "fprintd: $(tr -s ' ' <<<"$status" | tr '\n' '|')"
check "fprintd: status shows the backend and the reader" bash -c 'grep -q "Sensor backend: fprintd" <<<"$1" && grep -q "Reader present: true" <<<"$1"' _ "$status"

prompt=$(req "f3 evaluate ctx=$fp_ctx policy=biometrics reason=e2e")
check "fprintd: biometric prompt once the reader verifies ($prompt)" grep -q "PROMPT kind=biometric" <<<"$prompt"
fp_scan e2e-print
final=$(final_reply f3)
check "fprintd: the enrolled print matches ($final)" grep -q '^f3 OK method=biometric' <<<"$final"

# LockoutThreshold=3 (50-e2e.conf): three other prints lock biometry out.
line=$(req "f4 new"); fp_ctx=${line#f4 OK ctx=}
prompt=$(req "f5 evaluate ctx=$fp_ctx policy=biometrics reason=e2e")
check "fprintd: second evaluation prompts ($prompt)" grep -q "PROMPT kind=biometric" <<<"$prompt"
fp_scan other-print; reply=$(next_reply f5)
fp_scan other-print; reply=$(next_reply f5)
fp_scan other-print; final=$(next_reply f5)
check "fprintd: three other prints lock biometry out (${final%% message=*})" grep -q '^f5 ERR domain=la code=-8 name=biometryLockout' <<<"$final"
check "fprintd: fptest is locked out" grep -q '"biometric_failures":3,"biometry_locked_out":true' <<<"$(status_json "$fp_uid")"
close_session
log=$(localauthctl log -D /var/lib/localauthd --no-pager | grep enrollment-changed | grep "uid=$fp_uid")
info "fprintd: $(tail -n1 <<<"$log")"
check "fprintd: the log names the finger, by fprintd" bash -c 'grep -q "right-index-finger" <<<"$1" && grep -q "by=fprintd" <<<"$1"' _ "$log"
check "fprintd: the reader was released (root can claim it)" until_ok bash -c 'busctl call net.reactivated.Fprint /net/reactivated/Fprint/Device/0 net.reactivated.Fprint.Device Claim s fptest >/dev/null 2>&1'

# fprintd-delete while a context exists: the very next check says so (S-43).
T localauthctl reset --uid "$fp_uid" >/dev/null
open_session_as "$fp_uid"
line=$(req "f6 new"); fp_ctx=${line#f6 OK ctx=}
reply=$(req "f7 can-evaluate ctx=$fp_ctx policy=biometrics")
check "fprintd: can-evaluate before fprintd-delete is OK ($reply)" grep -q '^f7 OK' <<<"$reply"
T fprintd-delete fptest >/dev/null 2>&1
reply=$(req "f8 can-evaluate ctx=$fp_ctx policy=biometrics")
check "fprintd: the next can-evaluate after fprintd-delete is biometryNotEnrolled (${reply%% message=*})" \
  grep -q '^f8 ERR domain=la code=-7 name=biometryNotEnrolled' <<<"$reply"
close_session

# Restore the configuration for later checks.
rm -f /etc/localauthd/localauthd.conf.d/70-e2e-fprintd.conf
restart_daemon
check "fprintd: the daemon is back on the simulated sensor" until_ok active
check "fprintd: serving again" test "$(T localauthctl call ping)" = "c1 OK"
