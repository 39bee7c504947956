import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSessions } from '../src/client/index.js';
import { silentLogger } from '../src/core/logger.js';
import type { ServiceConfig } from '../src/core/config.js';
import type { PageEvent } from '../src/core/sessions.js';
import { startRunServer, TEST_LAUNCH_OPTIONS, type HostProcess } from './fixtures/browser-hosts.js';
import { startInternalServer, type InternalServer } from './fixtures/egress-sites.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { navigateOperation } from '../src/core/operations/index.js';

const OWNER = 'library';
/** An mDNS name nothing answers; Chromium asks the LAN for it (224.0.0.251:5353) when it resolves a remote candidate. */
const MDNS_NAME = 'bsm-webrtc-probe.local';

/** Datagrams sent to a loopback UDP port (IPv4 and IPv6) and mDNS queries for MDNS_NAME, counted. */
interface UdpListener {
  port: number;
  counts: { loopback: number; mdns: number };
  close(): void;
}

async function listenUdp(): Promise<UdpListener> {
  const counts = { loopback: 0, mdns: 0 };
  const bind = (socket: UdpSocket, port: number, address?: string) =>
    new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, address, () => resolve());
    });
  const v4 = createSocket('udp4').on('message', () => counts.loopback++);
  await bind(v4, 0, '127.0.0.1');
  const port = v4.address().port;
  const v6 = createSocket('udp6').on('message', () => counts.loopback++);
  await bind(v6, port, '::1');
  const mdns = createSocket({ type: 'udp4', reuseAddr: true }).on('message', (message: Buffer) => {
    if (message.includes(MDNS_NAME.split('.')[0]!)) counts.mdns++;
  });
  await bind(mdns, 5353);
  mdns.addMembership('224.0.0.251');
  return { port, counts, close: () => [v4, v6, mdns].forEach((socket) => socket.close()) };
}

/**
 * What a page can try with WebRTC against loopback: STUN by address, by name and over IPv6, TURN over UDP and over TCP,
 * and a remote candidate named by mDNS. Resolves once ICE gathering is over (or after 5 s).
 */
async function tryWebRtc({ udpPort, tcpPort, mdnsName }: { udpPort: number; tcpPort: number; mdnsName: string }): Promise<string[]> {
  {
    const pc = new RTCPeerConnection({
      iceServers: [
        { urls: [`stun:127.0.0.1:${udpPort}`, `stun:localhost:${udpPort}`, `stun:[::1]:${udpPort}`] },
        { urls: [`turn:127.0.0.1:${udpPort}?transport=udp`, `turn:127.0.0.1:${tcpPort}?transport=tcp`], username: 'u', credential: 'p' },
      ],
    });
    const candidates: string[] = [];
    pc.onicecandidate = (event) => event.candidate && candidates.push(event.candidate.candidate);
    pc.createDataChannel('probe');
    await pc.setLocalDescription(await pc.createOffer());
    const remote = new RTCPeerConnection();
    remote.createDataChannel('probe');
    await remote.setLocalDescription(await remote.createOffer());
    await pc.setRemoteDescription({ type: 'answer', sdp: remote.localDescription!.sdp.replace('a=setup:actpass', 'a=setup:active') });
    for (const host of [mdnsName, '127.0.0.1'])
      await pc
        .addIceCandidate({ candidate: `candidate:1 1 udp 2113937151 ${host} ${udpPort} typ host`, sdpMid: '0' })
        .catch(() => undefined);
    const deadline = Date.now() + 5_000;
    while (pc.iceGatheringState !== 'complete' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    // Connectivity checks towards the remote candidates run on for a while: give them a moment to send.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    pc.close();
    remote.close();
    return candidates;
  }
}

describe('WebRTC and the egress policy', () => {
  let site: SiteServer;
  let turnTcp: InternalServer;
  let runServer: HostProcess;

  beforeAll(async () => {
    [site, turnTcp, runServer] = await Promise.all([startSiteServer(), startInternalServer(), startRunServer()]);
  });
  afterAll(async () => {
    await Promise.all([site?.close(), turnTcp?.close(), runServer?.kill()]);
  });

  /** A session on an allowed page tries WebRTC; what reached the listeners, and the session's blocked events. */
  async function probe(config: Partial<ServiceConfig>) {
    const udp = await listenUdp();
    const lib = new BrowserSessions({ logger: silentLogger(), env: {}, egressAllow: [new URL(site.origin).host], ...config });
    try {
      const session = await lib.startSession();
      const outcome = await lib.service.run(navigateOperation, OWNER, session.id, { url: site.url('/index.html') });
      expect(outcome.result?.status).toBe(200);
      const page = lib.service.sessions.get(session.id, OWNER).page;
      const tcpBefore = turnTcp.connections;
      const candidates = await page.evaluate(tryWebRtc, { udpPort: udp.port, tcpPort: turnTcp.port, mdnsName: MDNS_NAME });
      const blocked = lib.service.sessions
        .get(session.id, OWNER)
        .log.takeUnreported()
        .filter((event: PageEvent) => event.type === 'blocked');
      return { ...udp.counts, candidates, blocked, tcp: turnTcp.connections - tcpBefore };
    } finally {
      udp.close();
      await lib.close();
    }
  }

  it('with "all", WebRTC reaches loopback over UDP (the listeners count what a page sends)', async () => {
    const seen = await probe({ egressPolicy: 'all' });
    expect(seen.loopback).toBeGreaterThan(0);
    expect(seen.mdns).toBeGreaterThan(0);
  });

  it.each([
    ['a local browser', () => ({})],
    ['a run-server host', () => ({ playwrightEndpoints: [runServer.url], remoteLaunchOptions: TEST_LAUNCH_OPTIONS })],
  ])('with "public", %s sends no STUN, TURN/UDP or mDNS datagram, and TURN over TCP is refused as blocked', async (_name, hosts) => {
    const seen = await probe({ egressPolicy: 'public', ...hosts() });
    expect({ loopback: seen.loopback, mdns: seen.mdns, tcp: seen.tcp }).toEqual({ loopback: 0, mdns: 0, tcp: 0 });
    // No UDP socket at all: not even a host candidate is gathered.
    expect(seen.candidates).toEqual([]);
    expect(seen.blocked.map((event) => event.message).join('\n')).toContain(`127.0.0.1:${turnTcp.port}`);
  });
});
