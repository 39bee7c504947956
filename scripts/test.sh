#!/usr/bin/env bash
# The vitest part of `npm test`: the whole suite on the browser the server picks by itself (the headless shell where
# there is one), then the files where the two browsers could differ (page text, handles, act and screenshots, session options,
# the proxy and egress, WebRTC) on the full browser of the same install. Each pass prints the Chromium it ran.
# Arguments go to the first pass (`npm test -- test/act.test.ts`); with them, or with BROWSER_EXECUTABLE_PATH set,
# only that pass runs.
set -euo pipefail
cd "$(dirname "$0")/.."

FULL_BROWSER_FILES=(
  test/snapshot.test.ts
  test/act.test.ts
  test/handles.test.ts
  test/session-options.test.ts
  test/session-proxy.test.ts
  test/egress.test.ts
  test/webrtc.test.ts
)

# Tests spawn dist/cli.js and pack the project: dist/ must be built from today's src/.
if [ ! -f dist/cli.js ] || [ -n "$(find src package.json tsconfig.json tsconfig.build.json -newer dist/cli.js -print -quit)" ]; then
  printf '\n==> Building dist/ (src/ changed since the last build)\n'
  npm run build --silent
fi

# What `--check-browser` prints for the browser the server would launch: "<source> <path> (Chromium <version>)".
check_browser() { npx --no-install tsx src/cli.ts --check-browser; }

first=$(check_browser)
printf '\n==> Test suite on %s\n' "$first"
npx --no-install vitest run "$@"

if [ $# -gt 0 ] || [ -n "${BROWSER_EXECUTABLE_PATH:-}" ]; then exit 0; fi
full=$(npx --no-install tsx -e "import('./src/core/browser.ts').then((m) => console.log(m.findBrowserExecutable(undefined, process.env, false)?.path ?? ''))")
case "$first" in
  *" $full ("*)
    printf '\n==> No headless shell beside %s: the suite above ran on the full browser.\n' "$full"
    exit 0
    ;;
esac
if [ -z "$full" ]; then
  printf '\n==> No full Chromium beside the headless shell: the full-browser pass is skipped.\n'
  exit 0
fi
export BROWSER_EXECUTABLE_PATH="$full"
printf '\n==> Browser-sensitive files on %s\n' "$(check_browser)"
npx --no-install vitest run "${FULL_BROWSER_FILES[@]}"
