# Touch or type (S-60), sourced by /e2e/check: `sudo -k -v` as pamtest on a
# real pty driven by python3-pexpect, under sudo's defaults (pam_silent),
# with /etc/pam.d/sudo as prepare.d/20-pam.sh left it (pam_localauth,
# prompt=auto) and the daemon on Backend=shadow (the login password).
touch_uid=$(id -u pamtest)
mkdir -p /run/systemd/system/localauthd.service.d
printf '[Service]\nSupplementaryGroups=shadow\n' > /run/systemd/system/localauthd.service.d/60-e2e-shadow.conf
printf '[Daemon]\nInsecureTestBackendsForPAM=yes\n[Passcode]\nBackend=shadow\n' > /etc/localauthd/localauthd.conf.d/60-e2e-pam.conf
systemctl daemon-reload
restart_daemon
check "touch: the daemon runs with Backend=shadow" until_ok active
T localauthctl reset --uid "$touch_uid" >/dev/null 2>&1
localauthctl enroll --uid "$touch_uid" >/dev/null 2>&1 || true

cat > /tmp/e2e-touch.py <<'PY'
import subprocess, sys, time
import pexpect
uid, password = sys.argv[1], sys.argv[2]
def ctl(*args):
    return subprocess.run(["localauthctl", *args], capture_output=True, text=True).stdout
def feed(result):
    for _ in range(300):
        if subprocess.run(["localauthctl", "sensor", "--uid", uid, result], capture_output=True).returncode == 0:
            return
        time.sleep(0.1)
    print("FAIL touch: no prompt waited for the sensor (%s)" % result)
def field(name):
    for word in ctl("call", "status", "uid=" + uid).split():
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
def sudo():
    child = pexpect.spawn("setpriv", ["--reuid=" + uid, "--regid=" + uid, "--init-groups", "sudo", "-k", "-v"],
                          encoding="utf-8", timeout=60)
    child.expect("Password or touch the sensor: ")
    return child
def done(child, what):
    child.expect(pexpect.EOF)
    child.close()
    ok = child.exitstatus == 0
    print("%s %s (exit %s; the terminal: %r)" % ("PASS" if ok else "FAIL", what, child.exitstatus, child.before[-160:]))
    return child.before

# 1. The prompt is on the screen under sudo's default pam_silent, and a
#    match with no key pressed completes sudo.
child = sudo()
print("PASS touch: sudo -v shows \"Password or touch the sensor:\" under pam_silent")
feed("match")
done(child, "touch: a match with no key pressed, sudo -v exits 0")

# 2. The password typed while the scan runs.
child = sudo()
child.sendline(password)
out = done(child, "touch: the password typed during the scan, sudo -v exits 0")
print("%s touch: the password was not echoed" % ("FAIL" if password in out else "PASS"))

# 3. Three misses arrive while half the password is typed: nothing typed is lost.
half = len(password) // 2
child = sudo()
child.send(password[:half])
for _ in range(3):
    feed("nomatch")
print("%s touch: the three misses were counted (biometric-failures=%s)"
      % ("PASS" if field("biometric-failures") == "3" else "FAIL", field("biometric-failures")))
child.sendline(password[half:])
done(child, "touch: three misses while half typed, then the rest: sudo -v exits 0")

# 4. A wrong password during a scan is counted once; a match then completes sudo.
child = sudo()
child.sendline("not-" + password)
child.expect("Wrong password. Password or touch the sensor: ")
print("%s touch: a wrong password during the scan is counted once (passcode-failures=%s)"
      % ("PASS" if field("passcode-failures") == "1" else "FAIL", field("passcode-failures")))
feed("match")
done(child, "touch: then a match, sudo -v exits 0")
PY
if /usr/bin/python3 -c 'import pexpect' 2>/dev/null; then
  touch_results=0
  while IFS= read -r line; do
    case $line in
      PASS\ *) pass "${line#PASS }"; touch_results=$((touch_results + 1)) ;;
      FAIL\ *) fail "${line#FAIL }"; touch_results=$((touch_results + 1)) ;;
      *) info "touch: $line" ;;
    esac
  done < <(/usr/bin/python3 /tmp/e2e-touch.py "$touch_uid" e2e-login-password 2>&1)
  check "touch: all eight terminal checks ran ($touch_results)" test "$touch_results" -eq 8
else
  fail "touch: python3-pexpect is not in the container"
fi
check "touch: every pending prompt was ended without Enter (no notice in the journal)" \
  bash -c '! journalctl --no-pager -t sudo | grep -Eq "Failed to end the password prompt early|did not end early"'

T localauthctl reset --uid "$touch_uid" >/dev/null 2>&1
rm -f /run/systemd/system/localauthd.service.d/60-e2e-shadow.conf /etc/localauthd/localauthd.conf.d/60-e2e-pam.conf
systemctl daemon-reload
restart_daemon
check "touch: the daemon is back on the builtin backend" until_ok active
