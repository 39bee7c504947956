# The server with its own Chromium (Debian's), serving MCP at /mcp and the REST API at /v1 over HTTP.
#   docker build -t browser-session-mcp .
#   docker run --init -p 8931:8931 -e SVC_API_KEYS=your-key browser-session-mcp
# --init: Node as PID 1 does not reap the orphaned children Chromium leaves (zombies pile up); Docker's init does.
# PORT (default 8931) sets the port; other flags go after the image name and replace CMD, e.g.
#   docker run --init -p 8931:8931 -e SVC_API_KEYS=your-key browser-session-mcp --transport http --host 0.0.0.0 --max-sessions 20
# deploy/compose.yaml and deploy/kubernetes/ run this image.
#
# No sandbox flag is needed here: the server launches Chromium with --no-sandbox and --disable-dev-shm-usage already
# (DEFAULT_CHROMIUM_ARGS in src/core/browser.ts). Chromium's own sandbox needs user namespaces (or a setuid helper)
# that a default container does not grant, so the container is the boundary; and a container's /dev/shm is small
# (64 MB), so Chromium keeps its shared memory in /tmp instead.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No scripts yet: package.json's prepare script builds, and the sources are copied after this cached layer.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:20-bookworm-slim
# chromium-headless-shell is what the server runs headless (found at /usr/lib/chromium/chromium-headless-shell);
# chromium is the full browser of the same version (--executable-path /usr/bin/chromium). Fonts for Latin text and emoji.
RUN apt-get update \
  && apt-get install -y --no-install-recommends chromium chromium-headless-shell fonts-liberation fonts-noto-color-emoji \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production PORT=8931
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 8931
# /healthz is readiness: 503 while no session can start (e.g. --max-sessions open), which marks the container unhealthy.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["--transport", "http", "--host", "0.0.0.0"]
