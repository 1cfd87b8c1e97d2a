#!/usr/bin/env bash
# The last step of a device command: only about eight files under $OUT come back from a call
# (the rest are listed as left out), so everything there is packed into one logs.tar.gz
# (unpack it here with tar -xzf) and the loose files are removed.
set -euo pipefail
out=${OUT:-/tmp/pagoda-out}
cd "$out"
tar -czf /tmp/pagoda-logs.tar.gz --exclude=logs.tar.gz .
find . -mindepth 1 -delete
mv /tmp/pagoda-logs.tar.gz logs.tar.gz
ls -la logs.tar.gz
