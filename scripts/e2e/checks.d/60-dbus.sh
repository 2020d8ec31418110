# The D-Bus API under real systemd and the real system bus (issue 32,
# S-70..S-73), sourced by /e2e/check: with the service stopped, a call from
# an ordinary user to the name starts it (D-Bus activation through
# SystemdService=, the shipped activation file), the answer comes from the
# daemon running as localauthd, the shipped policy keeps the name for that
# user, and the log records the caller's context as made over the bus.
# Leaves the daemon running.
B=io.github.localauthd.LocalAuthentication1
P=/io/github/localauthd/LocalAuthentication1

T systemctl stop localauthd.service
check "dbus: the service is stopped before the call" until_ok bash -c 'test "$(systemctl is-active localauthd.service)" = inactive'
check "dbus: nobody owns $B while it is stopped" bash -c '! busctl status '"$B"' >/dev/null 2>&1'
out=$(nobody gdbus call --system --dest "$B" --object-path "$P" --method "$B.CanEvaluatePolicy" 1 2>&1)
info "dbus: uid 65534's gdbus call: $out"
check "dbus: gdbus call --system as an ordinary user is answered" grep -Eq "^\((true|false), uint32 [0-9]+, -?[0-9]+, '[A-Za-z]*', " <<<"$out"
check "dbus: the call started the service (bus activation)" until_ok active
check "dbus: dbus-daemon activated it through systemd" bash -c \
  'journalctl --no-pager -o cat -u dbus.service | grep -q "Activating via systemd: service name='"'$B'"'"'
owner=$(busctl status "$B" 2>/dev/null | sed -n 's/^PID=//p')
check "dbus: the name's owner is the service's main process ($owner)" test "$owner" = "$(prop MainPID)"
check "dbus: ... running as localauthd" test "$(stat -c %U /proc/"$owner")" = localauthd
check "dbus: BusName= names it" test "$(prop BusName)" = "$B"
out=$(nobody busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus RequestName su "$B" 0 2>&1)
check "dbus: the policy lets no other user own the name" grep -qi "access denied\|AccessDenied" <<<"$out"
check "dbus: uid 65534's context was made over the bus (transport=dbus)" bash -c \
  'localauthctl log -D /var/lib/localauthd -o json --no-pager | grep "\"type\":\"context-created\"" | grep "\"uid\":65534" | grep -q "\"transport\":\"dbus\""'
out=$(nobody busctl get-property "$B" "$P/user/self" "$B.Environment" Uid 2>&1)
check "dbus: user/self is the caller's own environment ($out)" test "$out" = "u 65534"
out=$(T gdbus introspect --system --dest "$B" --object-path "$P" 2>&1)
check "dbus: introspection shows the shipped interface" grep -q "CanEvaluatePolicy(in  u policy" <<<"$out"
check "dbus: the installed interface file is there" test -f /usr/share/dbus-1/interfaces/$B.xml
