#!/usr/bin/env bash
# One-step set-up on a fresh machine: dependencies, a build, and a Chromium when none is found.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n==> %s\n' "$*"; }
# dist/ is missing or older than a source it is built from.
dist_stale() {
  [ ! -f dist/cli.js ] || [ -n "$(find src package.json tsconfig.json tsconfig.build.json -newer dist/cli.js -print -quit)" ]
}

# Run again (the README's two set-up lines both start with it), it redoes only what is out of date.
if [ -f node_modules/.package-lock.json ] &&
  [ -z "$(find package.json package-lock.json -newer node_modules/.package-lock.json -print -quit)" ]; then
  say "npm dependencies: node_modules matches package-lock.json"
else
  say "Installing npm dependencies (npm ci; its prepare step builds dist/)"
  npm ci --no-audit --no-fund --loglevel=error
fi

# npm ci's prepare step built dist/ unless scripts are off (ignore-scripts) or src/ changed since.
if dist_stale; then
  say "Building (tsc)"
  npm run build --silent
fi

# apt-get install as root or with password-less sudo, after an update when the package lists are stale or missing.
# Fails (1) where there is no apt-get or no way to be root.
apt_install() {
  command -v apt-get >/dev/null 2>&1 || return 1
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || return 1
    sudo=(sudo)
  fi
  say "${sudo[*]:+sudo }apt-get install -y $*"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 ||
    { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; }
}

say "Looking for a browser"
install_browser() {
  echo "No Chromium or Chrome found; installing one."
  if ! apt_install chromium chromium-headless-shell; then
    say "node dist/cli.js install-browser (Playwright's own download, with its headless shell)"
    node dist/cli.js install-browser
  fi
}
if ! node dist/cli.js --check-browser >/dev/null 2>&1; then
  install_browser
  if ! node dist/cli.js --check-browser >/dev/null; then
    echo "Could not install a browser; see the message above." >&2
    exit 1
  fi
fi
# Headless sessions run in Chromium's headless shell where there is one: about half the CPU of the full browser.
found=$(node dist/cli.js --check-browser)
case "$found" in
  *headless*shell*) ;;
  *)
    if [ -z "${BROWSER_EXECUTABLE_PATH:-}" ] && apt_install chromium-headless-shell; then
      found=$(node dist/cli.js --check-browser)
    fi
    ;;
esac
echo "Using $found"
case "$found" in
  *headless*shell*)
    # The full browser of the same install: what --headed runs, and npm test's second pass.
    full=$(node -e "import('./dist/core/browser.js').then((m) => console.log(m.findBrowserExecutable(undefined, process.env, false)?.path ?? ''))" || true)
    if [ -n "$full" ]; then
      echo "Full browser: $(node dist/cli.js --check-browser --executable-path "$full" 2>&1 || true)"
    fi
    ;;
  *) echo "(No Chromium headless shell: headless sessions run in the full browser, at about twice the CPU per session.)" ;;
esac

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
  command -v ffmpeg >/dev/null 2>&1 || apt_install --no-install-recommends ffmpeg || true
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
