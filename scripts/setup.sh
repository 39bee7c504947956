#!/usr/bin/env bash
# One-step set-up on a fresh machine: dependencies, a build, and a Chromium when none is found.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n==> %s\n' "$*"; }

say "Installing npm dependencies (npm ci)"
npm ci --no-audit --no-fund --loglevel=error

say "Building (tsc)"
npm run build --silent

say "Looking for a browser"
if found=$(node dist/cli.js --check-browser 2>/dev/null); then
  echo "Using $found"
  exit 0
fi

echo "No Chromium or Chrome found; installing one."
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  say "apt-get install -y chromium"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  say "sudo apt-get install -y chromium"
  sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  say "npx playwright-core install chromium (Playwright's own download)"
  npx --no-install playwright-core install chromium
fi

if found=$(node dist/cli.js --check-browser); then
  echo "Using $found"
else
  echo "Could not install a browser; see the message above." >&2
  exit 1
fi
