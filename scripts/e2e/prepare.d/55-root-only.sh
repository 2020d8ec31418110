# S-52 in the container (issue 27 item 1), host side: an administrator who
# is not root (pamadmin, in the AdminGroup localauth-admins) and `su`
# asking localauthd first, with the line 20-pam.sh gave sudo.
set -euo pipefail
chroot "$run" groupadd --system localauth-admins
chroot "$run" useradd --create-home --uid 1501 --groups localauth-admins --shell /bin/bash pamadmin
line=$(grep -m1 '^auth \[success=done authinfo_unavail=ignore default=die\] pam_localauth.so' "$run/etc/pam.d/sudo")
test -n "$line"
sed -i "s|^@include common-auth|$line\n@include common-auth|" "$run/etc/pam.d/su"
grep -q '^auth \[success=done authinfo_unavail=ignore default=die\] pam_localauth.so' "$run/etc/pam.d/su"
