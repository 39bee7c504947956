#!/usr/bin/env bash
# `npm run bundle`: the MCP Bundle (.mcpb) for Claude Desktop and other clients that install bundles. It holds what the
# npm package ships (dist/, package.json, README, LICENSE), manifest.json and the production dependencies; the browser
# is the user's own Chrome, Chromium or Edge (or `install-browser`), found at start.
# Usage: npm run bundle [-- OUTPUT.mcpb]   (default: browser-session-mcp-<version>.mcpb here)
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(node -p 'require("./package.json").version')
out=${1:-"browser-session-mcp-${version}.mcpb"}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

if [ ! -f dist/cli.js ] || [ -n "$(find src package.json tsconfig.json tsconfig.build.json -newer dist/cli.js -print -quit)" ]; then
  npm run build --silent
fi
tarball=$(npm pack --ignore-scripts --silent --pack-destination "$stage")
tar -xzf "$stage/$tarball" -C "$stage" && rm "$stage/$tarball"
cp manifest.json package-lock.json "$stage/package/"
# The dependency tree the tests ran with, without the development ones.
(cd "$stage/package" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error && rm package-lock.json)
npx --no-install mcpb pack "$stage/package" "$out" >/dev/null
echo "$out ($(du -h "$out" | cut -f1))"
