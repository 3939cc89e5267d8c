#!/usr/bin/env bash
# Regenerates docs/console.png, the web console screenshot the README
# shows: runs the browser test (headless Chromium, Debian `chromium`),
# which saves every page at 1280x800, and keeps the sending gateway's
# overview. OUT=dir keeps all the screenshots there too.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null || { echo "needs chromium (apt-get install -y chromium)" >&2; exit 1; }
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
WSRKIT_CONSOLE_SCREENSHOTS="$out" go test ./internal/console -run '^TestConsoleInBrowser$' -count=1
cp "$out/overview-sender.png" docs/console.png
echo "docs/console.png ($(wc -c < docs/console.png) bytes); all pages in $out"
