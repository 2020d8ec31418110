# pam_localauth in the container (S-45), host side. scripts/install already
# put the module in /lib/MULTIARCH/security and the pam-auth-update profile
# in /usr/share/pam-configs. Here: a test user with a real password
# (chpasswd), allowed to use sudo, and /etc/pam.d/sudo asking localauthd
# first, with the line the profile puts into common-auth (so only sudo is
# affected; checks.d/20-pam.sh switches the daemon to Backend=shadow).
set -euo pipefail
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
test -f "$run/lib/$multiarch/security/pam_localauth.so"
test -f "$run/usr/share/pam-configs/localauthd"
chroot "$run" useradd --create-home --uid 1500 --shell /bin/bash pamtest
echo 'pamtest:e2e-login-password' | chroot "$run" chpasswd
printf 'pamtest ALL=(ALL:ALL) ALL\n' > "$run/etc/sudoers.d/pamtest"
chmod 0440 "$run/etc/sudoers.d/pamtest"
# insecure_test_backends: the checks drive PAM with the simulated sensor (S-57).
line=$(sed -n 's/^\t\[success=end \(.*\)\]\t\(pam_localauth.so.*\)$/auth [success=done \1] \2 timeout=30 insecure_test_backends/p' \
  "$run/usr/share/pam-configs/localauthd" | head -n1)
test -n "$line"
sed -i "s|^@include common-auth|$line\n@include common-auth|" "$run/etc/pam.d/sudo"
grep -q '^auth \[success=done authinfo_unavail=ignore default=die\] pam_localauth.so' "$run/etc/pam.d/sudo"
