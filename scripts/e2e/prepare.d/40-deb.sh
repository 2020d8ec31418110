# Host side of the Debian package check (checks.d/40-deb.sh): puts
# localauthd_*.deb (and libpam-localauth_*.deb, localauth-agent_*.deb:
# checks.d/65-agent.sh) into the container's /e2e/deb/. scripts/test builds the
# package (and runs lintian) before the e2e run; a package older than the
# release binaries is built again from them (scripts/build-deb --bin-dir).
set -euo pipefail
deb=$(ls "$root"/build/deb/localauthd_*.deb 2>/dev/null | head -n1 || true)
# The C parts (the PAM module, the agent) and debian/ are built by the
# package itself: a change there makes the package stale too.
if [ -z "$deb" ] || [ "$bindir/localauthctl" -nt "$deb" ] || [ "$bindir/localauthd" -nt "$deb" ] \
   || [ -n "$(find "$root/Sources/pam_localauth" "$root/Sources/localauth-agent" "$root/debian" -newer "$deb" -type f \
        ! -name '*.so' ! -name '*.o' ! -name '*.mo' ! -name localauth-agent -print -quit)" ]; then
  echo "40-deb: building the package from $bindir" >&2
  bash "$root/scripts/build-deb" --bin-dir "$bindir"
  deb=$(ls "$root"/build/deb/localauthd_*.deb | head -n1)
fi
mkdir -p "$run/e2e/deb"
cp "$root"/build/deb/*.deb "$run/e2e/deb/"
echo "40-deb: $(cd "$run/e2e/deb" && echo *.deb) copied into the container" >&2
