# fprintd with libfprint's virtual device in the container (S-43), host side.
# scripts/install already put polkit/localauthd-fprintd.rules in
# /usr/share/polkit-1/rules.d (the daemon's user may verify and name users).
# Here: a drop-in that starts the D-Bus-activated fprintd.service with the
# virtual device on a socket the checks can reach, a test-only polkit rule
# letting root enroll for others (polkit would otherwise ask an active
# session's user), and the user whose finger is enrolled.
set -euo pipefail
test -x "$run/usr/libexec/fprintd"
test -f "$run/usr/share/polkit-1/rules.d/localauthd-fprintd.rules"
mkdir -p "$run/etc/systemd/system/fprintd.service.d"
cat > "$run/etc/systemd/system/fprintd.service.d/50-e2e-virtual-device.conf" <<'UNIT'
[Service]
Environment=FP_VIRTUAL_DEVICE=/run/fprintd-e2e/virtual-device FP_DRIVERS_WHITELIST=virtual_device
RuntimeDirectory=fprintd-e2e
UNIT
mkdir -p "$run/etc/polkit-1/rules.d"
cat > "$run/etc/polkit-1/rules.d/50-e2e-root-fprint.rules" <<'RULES'
// e2e only: root enrolls fingers for the test user.
polkit.addRule(function (action, subject) {
    if (subject.user === "root" && action.id.indexOf("net.reactivated.fprint.") === 0) {
        return polkit.Result.YES;
    }
    return polkit.Result.NOT_HANDLED;
});
RULES
chroot "$run" useradd --no-create-home --uid 1600 --shell /usr/sbin/nologin fptest
