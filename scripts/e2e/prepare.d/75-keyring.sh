# Host side of the keyring check (checks.d/75-keyring.sh): the scripts of
# Tests/keyring (collection.py: the login collection's state on a session
# bus; hostile.py: the release's hostile cases on the protocol), run in the
# container as they run on the host (scripts/test-keyring).
set -euo pipefail
install -d "$run/e2e/keyring"
install -m 0755 "$root"/Tests/keyring/collection.py "$root"/Tests/keyring/hostile.py "$run/e2e/keyring/"
