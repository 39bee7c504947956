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
install_browser() {
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
}
if found=$(node dist/cli.js --check-browser 2>/dev/null); then
  echo "Using $found"
else
  install_browser
  if found=$(node dist/cli.js --check-browser); then
    echo "Using $found"
  else
    echo "Could not install a browser; see the message above." >&2
    exit 1
  fi
fi

# Session video (record: {video: true}) needs an ffmpeg where Playwright looks for its own build. Optional: without
# it, a session asking for video is refused with recording_unavailable and everything else works.
say "Looking for ffmpeg (session video)"
ffmpeg_target=$(node -e '
  const { join } = require("node:path");
  const { homedir } = require("node:os");
  const { browsers } = JSON.parse(require("node:fs").readFileSync("node_modules/playwright-core/browsers.json", "utf8"));
  const { revision } = browsers.find((b) => b.name === "ffmpeg");
  const root = process.env.PLAYWRIGHT_BROWSERS_PATH || join(homedir(), ".cache", "ms-playwright");
  console.log(join(root, `ffmpeg-${revision}`, "ffmpeg-linux"));
' 2>/dev/null || true)
if [ -z "$ffmpeg_target" ]; then
  echo "Could not tell where Playwright looks for ffmpeg; session video stays off."
elif [ -x "$ffmpeg_target" ]; then
  echo "Using $ffmpeg_target"
elif [ "$(uname -s)" != Linux ]; then
  echo "Not linking a system ffmpeg here; run 'npx playwright-core install ffmpeg' for session video."
else
  if ! command -v ffmpeg >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    say "apt-get install -y --no-install-recommends ffmpeg"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ffmpeg >/dev/null ||
      { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ffmpeg >/dev/null; } ||
      true
  fi
  if command -v ffmpeg >/dev/null 2>&1; then
    if mkdir -p "$(dirname "$ffmpeg_target")" && ln -sf "$(command -v ffmpeg)" "$ffmpeg_target"; then
      echo "Linked $(command -v ffmpeg) as $ffmpeg_target"
    else
      echo "Could not link ffmpeg as $ffmpeg_target; session video stays off."
    fi
  else
    echo "No ffmpeg: session video is refused with recording_unavailable (install ffmpeg and run this again to enable it)."
  fi
fi
