# S-83 (issue 34 item 2) under real systemd, sourced by /e2e/check: with
# ExitOnIdleSec=2 (a drop-in; the other checks run with 0, so that their
# pauses do not restart the daemon under them) the socket-activated daemon
# exits on its own once nobody uses it, cleanly (status 0, its head
# anchored at the stop), the socket still listens, and the next
# `localauthctl status` starts it again and finds the state unchanged: a
# biometric lockout holds across the gap. Every wait is a safety net.
idle_conf=/etc/localauthd/localauthd.conf.d/60-e2e-idle.conf
idle_anchor() { journalctl --no-pager -o cat --output-fields=LOCALAUTH_SEQ MESSAGE_ID=3c6d8f1a2e4b4f79a5d0c2e8b7f1a964 -n 1 2>/dev/null | tail -n1; }
printf '[Daemon]\nExitOnIdleSec=2\n' > "$idle_conf"
restart_daemon
check "idle: the daemon runs with ExitOnIdleSec=2" until_ok active

# uid 0 locked out of biometry: a state that must hold across the gap.
# 40-deb purged the state the core check gave uid 0: enrol it and give it
# a passcode again (biometrics need one, S-18).
T localauthctl enroll --uid 0 >/dev/null 2>&1
open_session
req "i0 set-passcode secret=4321" >/dev/null
line=$(req "i1 new"); ctx=${line#i1 OK ctx=}
info "idle: $(req "i2 evaluate ctx=$ctx policy=biometrics reason=e2e-idle")"
for i in 1 2 3; do until_ok T localauthctl sensor --uid 0 nomatch >/dev/null 2>&1; done
info "idle: $(final_reply i2)"
idle_pid=$(prop MainPID)
# Twice ExitOnIdleSec= with the session open: no exit (a slow machine can
# only make this pass more easily, never fail it).
sleep 4
check "idle: a connected client keeps it (the same process answers)" \
  test "$(req "i3 ping")/$(prop MainPID)" = "i3 OK/$idle_pid"
close_session
before=$(status_json 0)
check "idle: uid 0 is locked out before the gap" grep -q '"biometry_locked_out":true' <<<"$before" \
  || info "idle: uid 0 before the gap: $before"

check "idle: with no client left, the daemon exits on its own" \
  until_ok bash -c '[ "$(systemctl is-active localauthd.service)" = inactive ]'
check "idle: it exited cleanly (Result=success, status 0)" test "$(prop Result)/$(prop ExecMainStatus)" = success/0
check "idle: the socket still listens" test "$(systemctl is-active localauthd.socket)" = active
check "idle: the journal says why" bash -c \
  'journalctl -u localauthd.service --no-pager -o cat _PID=$1 | grep -q "Nothing to do for 2 s (ExitOnIdleSec=): exiting"' _ "$idle_pid"
last_seq=$(localauthctl log -D /var/lib/localauthd -o json --no-pager | tail -n1 | sed -n 's/.*"seq":\([0-9]*\).*/\1/p')
check "idle: the log's head at the stop (seq $last_seq) is anchored in the journal" test "$(idle_anchor)" = "$last_seq"

after=$(status_json 0)
check "idle: the next localauthctl status is answered" test -n "$after"
check "idle: a new process, started by the socket, answered it" bash -c \
  'pid=$(systemctl show -p MainPID --value localauthd.service); [ "$pid" != 0 ] && [ "$pid" != "$1" ]' _ "$idle_pid"
check "idle: the state is unchanged across the gap (lockout held)" test "$before" = "$after"

T localauthctl reset --uid 0 >/dev/null
rm -f "$idle_conf"
restart_daemon
until_ok active
