import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UnauthorizedError, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
// @ts-expect-error oidc-provider ships no type declarations
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, connectMcpHttp } from './fixtures/mcp-http.js';
import { api, startHttp, type TestHttp } from './http-fixture.js';

const KEY = 'key-oauth-0123456789abcdef';
const SCOPE = 'browser';
const KID = 'test-signing-key';
/** Where the authorization server sends the browser back; the scripted user agent stops there and never opens it. */
const REDIRECT_URL = 'http://127.0.0.1:9/callback';
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'oauth-test', version: '1' } },
};

/** A real OpenID provider (oidc-provider) on 127.0.0.1 issuing JWT access tokens for the resource a client names. */
interface AuthorizationServer {
  issuer: string;
  /** Signs claims with the provider's own key (the one its JWKS publishes), for tokens it would not issue: expired ones. */
  sign(claims: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

async function startAuthorizationServer(): Promise<AuthorizationServer> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: KID, alg: 'RS256', use: 'sig' }] },
    clients: [
      // A machine client of another resource server: its tokens are for another audience.
      {
        client_id: 'elsewhere',
        client_secret: 'elsewhere-secret',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      },
    ],
    features: {
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: SCOPE, accessTokenFormat: 'jwt', accessTokenTTL: 300 }),
      },
    },
    // Clients register with the scope the metadata advertises: it must be one the provider knows.
    scopes: ['openid', SCOPE],
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    ttl: { AccessToken: 300, ClientCredentials: 300, Grant: 300, Interaction: 300, Session: 300 },
    cookies: { keys: ['oauth-test-cookie-key'] },
  });
  http.on('request', provider.callback());
  return {
    issuer,
    sign: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'at+jwt' }).sign(privateKey as CryptoKey),
    close: () => new Promise((resolve) => (http.closeAllConnections(), http.close(() => resolve()))),
  };
}

/**
 * An MCP client's OAuth side as a hosted client runs it (authorization code with PKCE, dynamic registration), with
 * a scripted person: the "browser" it redirects follows the provider's sign-in and consent pages over HTTP.
 */
class ScriptedUser implements OAuthClientProvider {
  code?: string;
  discovery?: OAuthDiscoveryState;
  private registered?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier = '';

  constructor(private readonly login: string) {}

  get redirectUrl(): string {
    return REDIRECT_URL;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: `oauth-test ${this.login}`,
      redirect_uris: [REDIRECT_URL],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.registered;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.registered = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  async redirectToAuthorization(url: URL) {
    this.code = await signIn(url, this.login);
  }
}

/** Follows the authorization request to the redirect URI: signs in as `login` and consents; answers the code. */
async function signIn(start: URL, login: string): Promise<string> {
  const cookies = new Map<string, string>();
  let request: { url: string; form?: URLSearchParams } = { url: start.href };
  for (let step = 0; step < 12; step++) {
    const res = await fetch(request.url, {
      method: request.form ? 'POST' : 'GET',
      body: request.form,
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (value) cookies.set(name, value);
      else cookies.delete(name);
    }
    const location = res.headers.get('location');
    if (location) {
      await res.body?.cancel();
      const next = new URL(location, request.url);
      if (next.href.startsWith(REDIRECT_URL)) {
        const code = next.searchParams.get('code');
        if (!code) throw new Error(`The authorization server answered ${next.search}`);
        return code;
      }
      request = { url: next.href };
      continue;
    }
    // A sign-in or consent page: its one form, filled as a person would.
    const page = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
    if (!action || !prompt) throw new Error(`No form at ${request.url} (${res.status}): ${page.slice(0, 300)}`);
    const fields: Record<string, string> = prompt === 'login' ? { prompt, login, password: 'any' } : { prompt };
    request = { url: new URL(action.replaceAll('&amp;', '&'), request.url).href, form: new URLSearchParams(fields) };
  }
  throw new Error('The sign-in never reached the redirect URI.');
}

describe('OAuth access tokens at /mcp and /v1', () => {
  let as: AuthorizationServer;
  let server: TestHttp;
  let metadataUrl: string;

  beforeAll(async () => {
    as = await startAuthorizationServer();
    server = await startHttp({ apiKeys: [KEY], oauth: { issuer: as.issuer, scopes: [SCOPE] } });
    metadataUrl = `${server.url}/.well-known/oauth-protected-resource/mcp`;
  });
  afterAll(async () => {
    await server?.close();
    await as?.close();
  });

  /** The whole sign-in an MCP client makes on its first 401; answers the access token it got. */
  async function signInOverMcp(login: string): Promise<{ token: string; user: ScriptedUser }> {
    const user = new ScriptedUser(login);
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { authProvider: user });
    const client = new Client({ name: `oauth-${login}`, version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    await transport.finishAuth(user.code!);
    return { token: user.tokens()!.access_token, user };
  }

  /** A POST of initialize to /mcp with these headers, as a client without the SDK sends it. */
  function initialize(headers: Record<string, string>): Promise<Response> {
    return fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(INITIALIZE),
    });
  }

  it('serves the protected resource metadata (RFC 9728) at the /mcp-suffixed and the root well-known paths', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const res = await api(server.url, 'GET', path);
      expect([path, res.status, res.json]).toEqual([
        path,
        200,
        {
          resource: `${server.url}/mcp`,
          authorization_servers: [as.issuer],
          bearer_methods_supported: ['header'],
          scopes_supported: [SCOPE],
          resource_name: 'browser-session-mcp',
        },
      ]);
    }
  });

  it("an MCP client signs in from the 401's resource_metadata (code with PKCE) and uses /mcp and /v1 with the token", async () => {
    const { token, user } = await signInOverMcp('alice');
    // The client found the authorization server through the 401's link, and asked for a token for /mcp.
    expect(user.discovery).toMatchObject({ resourceMetadataUrl: metadataUrl, authorizationServerUrl: as.issuer });
    expect(decodeJwt(token)).toMatchObject({ iss: as.issuer, aud: `${server.url}/mcp`, sub: 'alice', scope: SCOPE });

    const { client } = await connectMcpHttp(server.url, { name: 'oauth-alice', headers: bearer(token) });
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(['session_start', 'session_end', 'navigate']));
    const started = (await client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult;
    const id = (started.structuredContent as { id: string }).id;
    // The same subject over REST holds the same session.
    const listed = await api(server.url, 'GET', '/v1/sessions', { headers: bearer(token) });
    expect(listed.json.data.sessions.map((session: { id: string }) => session.id)).toEqual([id]);
    const ended = (await client.callTool({ name: 'session_end', arguments: { sessionId: id } })) as CallToolResult;
    expect(ended.isError).toBeFalsy();
    expect((await api(server.url, 'GET', '/v1/sessions', { headers: bearer(token) })).json.data.sessions).toEqual([]);
    await client.close();
  });

  it("hides one subject's sessions from another: session_not_found, as between keys", async () => {
    const alice = (await signInOverMcp('alice')).token;
    const bob = (await signInOverMcp('bob')).token;
    const id = (await api(server.url, 'POST', '/v1/sessions/start', { headers: bearer(alice) })).json.data.id as string;

    const { client } = await connectMcpHttp(server.url, { name: 'oauth-bob', headers: bearer(bob) });
    const navigated = (await client.callTool({ name: 'navigate', arguments: { sessionId: id, url: 'about:blank' } })) as CallToolResult;
    expect(navigated.isError).toBe(true);
    expect((navigated._meta?.error as { code: string }).code).toBe('session_not_found');
    await client.close();
    const rest = await api(server.url, 'GET', `/v1/sessions/${id}`, { headers: bearer(bob) });
    expect([rest.status, rest.json.error.code]).toEqual([404, 'session_not_found']);
    expect((await api(server.url, 'GET', '/v1/sessions', { headers: bearer(bob) })).json.data.sessions).toEqual([]);
    // Nor does an API key see it.
    expect((await api(server.url, 'GET', `/v1/sessions/${id}`, { key: KEY })).status).toBe(404);
    expect((await api(server.url, 'POST', `/v1/sessions/${id}/end`, { headers: bearer(alice) })).status).toBe(200);
  });

  it('answers 401 with the resource_metadata link without credentials, and adds invalid_token for a token of another audience', async () => {
    const none = await initialize({});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe(
      `Bearer realm="browser-session-mcp", scope="${SCOPE}", resource_metadata="${metadataUrl}"`,
    );
    expect((await none.json()).error.code).toBe('unauthorized');
    const restNone = await api(server.url, 'GET', '/v1/sessions');
    expect(restNone.status).toBe(401);
    expect(restNone.headers.get('www-authenticate')).toContain(`resource_metadata="${metadataUrl}"`);

    // A real token from the same authorization server, for another resource server.
    const issued = await fetch(`${as.issuer}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from('elsewhere:elsewhere-secret').toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: SCOPE, resource: 'https://elsewhere.example/api' }),
    });
    const elsewhere = ((await issued.json()) as { access_token: string }).access_token;
    expect(decodeJwt(elsewhere).aud).toBe('https://elsewhere.example/api');
    for (const res of [await initialize(bearer(elsewhere)), await fetch(`${server.url}/v1/sessions`, { headers: bearer(elsewhere) })]) {
      expect(res.status).toBe(401);
      const challenge = res.headers.get('www-authenticate')!;
      expect(challenge).toContain('error="invalid_token"');
      expect(challenge).toContain(`resource_metadata="${metadataUrl}"`);
      const body = await res.json();
      expect(body).toMatchObject({ success: false, error: { code: 'unauthorized' } });
      expect(body.error.message).toMatch(/audience/);
    }
  });

  it('refuses an expired token (401 invalid_token) and one without the required scope (403 insufficient_scope)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: as.issuer, aud: `${server.url}/mcp`, sub: 'alice', scope: SCOPE, iat: now - 600 };
    const expired = await initialize(bearer(await as.sign({ ...claims, exp: now - 120 })));
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect((await expired.json()).error.message).toMatch(/expired/);

    const unscoped = await initialize(bearer(await as.sign({ ...claims, scope: 'other', exp: now + 300 })));
    expect(unscoped.status).toBe(403);
    expect(unscoped.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect((await unscoped.json()).error.code).toBe('forbidden');
  });

  it('answers 401 without invalid_token when the authorization server cannot be reached (the token may be good)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const cut = await startHttp({ oauth: { issuer } });
    try {
      const now = Math.floor(Date.now() / 1000);
      const token = await as.sign({ iss: issuer, aud: `${cut.url}/mcp`, sub: 'alice', exp: now + 300 });
      const res = await api(cut.url, 'GET', '/v1/sessions', { headers: bearer(token) });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).not.toContain('error=');
      expect(res.json.error.message).toMatch(/authorization server's keys could not be read/);
    } finally {
      await cut.close();
    }
  });

  it('still takes an API key beside OAuth, at /mcp and /v1', async () => {
    const { client } = await connectMcpHttp(server.url, { name: 'oauth-key', headers: bearer(KEY) });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
    expect((await api(server.url, 'GET', '/v1/sessions', { key: KEY })).status).toBe(200);
    // A bearer that is neither a key nor a JWT is refused as a token.
    const neither = await initialize(bearer('not-a-key'));
    expect(neither.status).toBe(401);
    expect(neither.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});
