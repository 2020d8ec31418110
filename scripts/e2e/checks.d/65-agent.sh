# The desktop agent (issue 31, S-65..S-69) the Debian way: localauth-agent's
# package installed offline (checks.d/40-deb.sh left the packaged daemon
# running, simulated sensor, builtin passcodes), a user with a logind
# session (su, through pam_systemd), an X display (Xvfb), and the agent
# started by its systemd user unit in that user's manager, where it belongs
# to no session: it registers for the user's display session. An app of the
# user, also in no session, asks for the system's prompt: the agent's dialog
# shows it, a finger (simulated) matches, the app hears success.
agent_deb=$(ls /e2e/deb/localauth-agent_*.deb 2>/dev/null | head -n1)
if [ -z "$agent_deb" ] || ! command -v Xvfb >/dev/null; then
  fail "agent: no localauth-agent package in /e2e/deb, or no Xvfb in the root"
else
  apt_get() { DEBIAN_FRONTEND=noninteractive timeout 300 apt-get -y -q "$@" >/e2e/apt.log 2>&1 || { cat /e2e/apt.log; return 1; }; }
  check "agent: apt-get install ./$(basename "$agent_deb") (offline)" apt_get install "$agent_deb"
  check "agent: its user unit is enabled for every graphical session" \
    test -L /etc/systemd/user/graphical-session.target.wants/localauth-agent.service
  check "agent: man localauth-agent renders" bash -c 'MANPAGER=cat man localauth-agent 2>/dev/null | grep -q "EXIT STATUS"'

  id agentuser >/dev/null 2>&1 || useradd --create-home --shell /bin/bash agentuser
  auid=$(id -u agentuser)
  printf 'Agent-E2E-Passcode\n' | T localauthctl passcode set --uid "$auid" --secret-stdin >/dev/null 2>&1
  T localauthctl enroll --uid "$auid" >/dev/null 2>&1
  Xvfb :7 -ac -nolisten tcp >/e2e/xvfb.log 2>&1 &
  xvfb=$!
  check "agent: an X display (Xvfb :7)" until_ok test -S /tmp/.X11-unix/X7
  # Its graphical login: a logind session of type x11 on that display
  # (pam_systemd takes the type and class from the environment of the
  # program that opens the session, as a display manager sets them; without
  # them a session with no terminal is class "background", which logind
  # never makes a user's Display). It also starts the user's manager.
  XDG_SESSION_TYPE=x11 XDG_SESSION_CLASS=user DISPLAY=:7 su -l agentuser -c 'exec sleep 600' </dev/null >/dev/null 2>&1 &
  login=$!
  check "agent: the user has a display session (logind)" \
    until_ok bash -c '[ -n "$(loginctl show-user agentuser -p Display --value 2>/dev/null)" ]'
  [ -n "$(loginctl show-user agentuser -p Display --value 2>/dev/null)" ] \
    || info "agent: logind's sessions: $(loginctl list-sessions --no-legend 2>&1 | tr '\n' ';') $(loginctl show-user agentuser 2>&1 | tr '\n' ' ')"
  check "agent: the user's manager runs" until_ok test -S "/run/user/$auid/systemd/private"
  as_user() { runuser -u agentuser -- env XDG_RUNTIME_DIR="/run/user/$auid" "$@"; }
  as_user systemctl --user set-environment DISPLAY=:7 GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1 \
    LOCALAUTH_AGENT_TRACE=1 >/dev/null 2>&1
  # What a graphical session's start does: graphical-session.target pulls it in.
  as_user systemctl --user start localauth-agent.service >/dev/null 2>&1
  check "agent: started by its user unit" until_ok as_user systemctl --user is-active --quiet localauth-agent.service
  registered() { localauthctl log -D /var/lib/localauthd -o json --no-pager 2>/dev/null | grep '"type":"agent-registered"' | grep -q "\"uid\":$auid"; }
  check "agent: it registered for the user's display session" until_ok registered
  registered || info "agent: its journal: $(journalctl --no-pager -o cat _SYSTEMD_USER_UNIT=localauth-agent.service 2>&1 | tail -n 5 | tr '\n' ';')"
  session=$(loginctl show-user agentuser -p Display --value)
  check "agent: the session recorded is that display session ($session)" bash -c \
    "localauthctl log -D /var/lib/localauthd -o json --no-pager | grep agent-registered | grep -q '\"session\":\"$session\"'"

  # The app: a process of the user in no session (as a desktop's apps are in their scopes).
  as_user python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect("/run/localauthd/socket"); f = s.makefile("rw")
def send(line): f.write(line + "\n"); f.flush()
send("n new"); ctx = f.readline().split("ctx=")[1].strip()
send("s set ctx=%s prompt=agent" % ctx); f.readline()
send("e evaluate ctx=%s policy=biometrics reason=\"Open the e2e vault\"" % ctx)
for line in f:
    print(line.strip(), flush=True)
    if line.startswith("e OK") or line.startswith("e ERR"): break
' >/e2e/agent-app.out 2>&1 &
  app=$!
  check "agent: the app hears that the system prompts" until_ok grep -q '^e PROMPT kind=agent$' /e2e/agent-app.out
  dialog() { journalctl --no-pager -o cat _SYSTEMD_USER_UNIT=localauth-agent.service 2>/dev/null | grep '^dialog '; }
  check "agent: its dialog shows the app's reason" until_ok bash -c "$(declare -f dialog); dialog | grep -q 'reason=\"Open the e2e vault\"'"
  check "agent: its dialog names the app's program (python3)" until_ok bash -c "$(declare -f dialog); dialog | grep -q 'program=\"/usr/bin/python3'"
  T localauthctl sensor --uid "$auid" match >/dev/null 2>&1
  check "agent: a finger match ends the app's evaluation with success" until_ok grep -q '^e OK method=biometric' /e2e/agent-app.out
  wait "$app" 2>/dev/null
  as_user systemctl --user stop localauth-agent.service >/dev/null 2>&1
  check "agent: stopping the unit unregisters it" until_ok bash -c \
    "localauthctl log -D /var/lib/localauthd -o json --no-pager | grep agent-unregistered | grep -q '\"uid\":$auid'"
  kill "$xvfb" "$login" 2>/dev/null
  wait "$xvfb" "$login" 2>/dev/null
fi
