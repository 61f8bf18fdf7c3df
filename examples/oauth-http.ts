/**
 * Example: the HTTP handler as an OAuth-protected MCP resource with real sign-in.
 *
 * The server below is a resource server in the sense of the MCP authorization spec: it publishes
 * its RFC 9728 Protected Resource Metadata at `/.well-known/oauth-protected-resource/mcp` (the
 * well-known path plus the resource path), the handler's `401` points MCP clients at it, and the
 * clients sign in at the authorization server it names. `authenticate` accepts only JWT access
 * tokens (RFC 9068, `typ: at+jwt`) signed with a pinned algorithm by a key of the authorization
 * server's JWKS, issued by that server, for exactly this resource (RFC 8707: `aud` is the resource
 * URL), unexpired, and maps them onto the principal:
 *
 * - `principalId` is the token's `sub`, `clientId` its `client_id`;
 * - `grantId` is a digest of issuer, subject and client: the same for every consent that person
 *   gives that client, so a re-consent is recognised as the same grant;
 * - `grantGeneration` is the authorization server's own grant id, which it is configured to add to
 *   its access tokens as the `grant_id` claim. It survives token refreshes and changes when the
 *   grant is revoked and consented again, which turns older handles into `BINDING_MISMATCH`;
 * - `credential()` reads the person's Sess credential from the host's own store (`accounts`),
 *   keyed by the subject. The MCP access token never goes to Sess.
 *
 * What this example does not do: it issues no tokens and runs no sign-in page (that is the
 * authorization server's job), it does not introspect tokens (a revoked grant's access tokens stay
 * valid until they expire, so keep their lifetime short), and its memory store keeps handles only
 * for the life of the process.
 *
 * It imports the package by its name, as an application does. Run it by itself bundled (npm
 * packages stay external and resolve from `node_modules`), or with a TypeScript runner:
 *
 * ```sh
 * npx esbuild examples/oauth-http.ts --bundle --platform=node --format=esm --packages=external \
 *   --outfile=node_modules/.cache/oauth-http.mjs
 * OAUTH_ISSUER=https://auth.example.com SESS_API_KEY=… SESS_WORKSPACE_ID=… PORT=8080 \
 *   node node_modules/.cache/oauth-http.mjs
 * ```
 *
 * Environment: `OAUTH_ISSUER` (required), `SESS_API_KEY` (required: in this standalone mode every
 * signed-in person acts with this one key), `SESS_WORKSPACE_ID` (required: the workspace that key
 * belongs to, which the handler checks), `PORT`
 * (default 8080), `HOST` (default 127.0.0.1), `MCP_RESOURCE_URL` (the public URL of `/mcp`, when
 * it differs from `http://HOST:PORT/mcp`, e.g. behind a TLS proxy), `SESS_API_ORIGIN`,
 * `SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST=1` (testing only, for the local Sess runtime),
 * `SESS_MCP_DIAGNOSTICS=1` (the handler's diagnostics as JSON lines on stderr) and
 * `SESS_MCP_BINDING=principal` (handles bound to the person rather than to the client and grant:
 * the handler's `binding` option).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createMemoryHandleStore, type DiagnosticsSink } from '@sess.si/mcp';
import { createSessMcpHttpHandler, type SessHttpPrincipal } from '@sess.si/mcp/http';
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';

/** The scope a token must carry to use the Sess tools. */
export const SESS_SCOPE = 'sess';
/** The path the MCP endpoint is mounted at. */
const MCP_PATH = '/mcp';
/** RFC 9728 §3.1: the well-known prefix, followed by the resource's path. */
const METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;

/** A signed-in person's Sess account, as the host keeps it. */
export interface SessAccount {
  /** The Sess workspace the person acts in: the one their key belongs to (the handler checks it). */
  workspaceId: string;
  /** Their Sess API key or token, read from the host's secret store per Sess call. */
  credential(): string | Promise<string>;
}

/** The host's own store of Sess accounts, keyed by the authorization server's subject. */
export interface SessAccountStore {
  /** The account of `subject` at `issuer`, or `undefined` when they have none (`401`). */
  find(issuer: string, subject: string): SessAccount | undefined | Promise<SessAccount | undefined>;
}

/** What the example needs to run. */
export interface OAuthHttpExampleOptions {
  /** The authorization server's issuer URL, exactly as its metadata states it. */
  issuer: string;
  /** Where each signed-in person's Sess credential comes from. */
  accounts: SessAccountStore;
  /**
   * The JWS algorithms access tokens may be signed with; anything else is refused.
   * @default ['ES256', 'RS256']
   */
  algorithms?: readonly string[];
  /** The public URL of the MCP endpoint. @default `http://<hostname>:<port>/mcp` */
  resourceUrl?: string;
  /** @default 'https://api.sess.si' */
  sessOrigin?: string;
  /** Testing only: a local `http://127.0.0.1` Sess runtime. */
  allowInsecureLocalhost?: boolean;
  /** Where the handler's diagnostics go. */
  diagnostics?: DiagnosticsSink;
  /**
   * What handles are bound to (the handler's `binding` option): `'grant'`, the client and grant
   * they were made through; `'principal'`, the person, so a client that registers anew on each
   * connection (dynamic client registration) keeps reaching them.
   * @default 'grant'
   */
  binding?: 'grant' | 'principal';
  /** @default 0 (any free port) */
  port?: number;
  /** @default '127.0.0.1' */
  hostname?: string;
}

/** A running example server. */
export interface RunningOAuthExample {
  /** The MCP endpoint a client adds, e.g. `http://127.0.0.1:8080/mcp`; also the resource URL. */
  url: string;
  /** The Protected Resource Metadata URL the `401` challenge names. */
  resourceMetadataUrl: string;
  close(): Promise<void>;
}

/** Issuer, subject and client identify one person's consent to one client, across re-consents. */
function stableGrantId(issuer: string, subject: string, clientId: string): string {
  return createHash('sha256')
    .update(JSON.stringify([issuer, subject, clientId]))
    .digest('base64url');
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** The authorization server's `jwks_uri`, from its RFC 8414 (or OpenID) metadata. */
async function discoverJwksUri(issuer: string): Promise<URL> {
  const base = new URL(issuer);
  const path = base.pathname === '/' ? '' : base.pathname;
  const candidates = [
    new URL(`/.well-known/oauth-authorization-server${path}`, base),
    new URL(`${path}/.well-known/openid-configuration`, base),
  ];
  for (const url of candidates) {
    const response = await fetch(url, { headers: { accept: 'application/json' } });
    if (!response.ok) continue;
    const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
    // RFC 8414 §3.3: metadata that names another issuer must not be used.
    if (metadata.issuer !== issuer || !nonEmpty(metadata.jwks_uri)) {
      throw new Error('The authorization server metadata does not match the configured issuer.');
    }
    return new URL(metadata.jwks_uri);
  }
  throw new Error('The authorization server publishes no metadata.');
}

/**
 * A verifier for this resource's access tokens: signature (JWKS, pinned algorithms), `typ`,
 * issuer, audience, expiry. The JWKS location is discovered on first use and kept.
 */
function createTokenVerifier(issuer: string, audience: string, algorithms: readonly string[]) {
  let jwks: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  const keySet = () => {
    jwks ??= discoverJwksUri(issuer).then(
      (uri) => createRemoteJWKSet(uri),
      (error: unknown) => {
        jwks = undefined; // try discovery again on the next request
        throw error;
      },
    );
    return jwks;
  };
  return async (token: string): Promise<JWTPayload | undefined> => {
    // An unreachable authorization server is the host's failure, not the caller's: it throws,
    // and the handler answers 500 without the reason.
    const keys = await keySet();
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer,
        audience,
        typ: 'at+jwt',
        algorithms: [...algorithms],
        requiredClaims: ['exp', 'iat', 'sub', 'client_id'],
      });
      return payload;
    } catch {
      // An invalid, expired or foreign token is no principal: the handler answers 401.
      return undefined;
    }
  };
}

/** Start the example: the resource metadata and the handler at `/mcp` of a `node:http` server. */
export async function startOAuthHttpExample(options: OAuthHttpExampleOptions): Promise<RunningOAuthExample> {
  const hostname = options.hostname ?? '127.0.0.1';
  const stores = createMemoryHandleStore();
  let route: http.RequestListener = (_req, res) => void res.writeHead(503).end();
  const server = http.createServer((req, res) => route(req, res));
  server.listen(options.port ?? 0, hostname);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  // The resource URL is the token audience: fixed by configuration, never taken from a request.
  const resourceUrl = options.resourceUrl ?? `http://${hostname}:${port}${MCP_PATH}`;
  const publicOrigin = new URL(resourceUrl).origin;
  const resourceMetadataUrl = `${publicOrigin}${METADATA_PATH}`;
  const metadata = JSON.stringify({
    resource: resourceUrl,
    authorization_servers: [options.issuer],
    scopes_supported: [SESS_SCOPE],
    bearer_methods_supported: ['header'],
  });
  const verify = createTokenVerifier(options.issuer, resourceUrl, options.algorithms ?? ['ES256', 'RS256']);

  const handler = createSessMcpHttpHandler({
    async authenticate(request): Promise<SessHttpPrincipal | undefined> {
      const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(request.headers.get('authorization') ?? '');
      if (match === null) return undefined;
      const claims = await verify(match[1]!);
      if (claims === undefined) return undefined;
      const { sub, client_id: clientId, grant_id: grantGeneration, scope } = claims;
      if (!nonEmpty(sub) || !nonEmpty(clientId) || !nonEmpty(grantGeneration)) return undefined;
      const account = await options.accounts.find(options.issuer, sub);
      if (account === undefined) return undefined;
      return {
        workspaceId: account.workspaceId,
        principalId: sub,
        clientId,
        grantId: stableGrantId(options.issuer, sub, clientId),
        grantGeneration,
        scopes: typeof scope === 'string' ? scope.split(' ').filter((s) => s !== '') : [],
        credential: () => account.credential(),
      };
    },
    handleStore: (binding) => stores.forBinding(binding),
    allowedHosts: [...new Set([new URL(resourceUrl).host, hostname])],
    requiredScopes: [SESS_SCOPE],
    resourceMetadataUrl,
    ...(options.sessOrigin === undefined ? {} : { sessOrigin: options.sessOrigin }),
    ...(options.allowInsecureLocalhost === true ? { allowInsecureLocalhost: true } : {}),
    ...(options.diagnostics === undefined ? {} : { diagnostics: options.diagnostics }),
    ...(options.binding === undefined ? {} : { binding: options.binding }),
  });

  // A request that says `Expect: 100-continue` comes as `checkContinue`, not `request`. At /mcp
  // the handler's own listener sends `100 Continue` only once the Host, Origin, token and scope
  // checks passed, so a refused client never uploads its body; elsewhere it goes out at once.
  server.on('checkContinue', (req, res) => {
    if (new URL(req.url ?? '/', 'http://x').pathname === MCP_PATH) return handler.checkContinue(req, res);
    res.writeContinue();
    route(req, res);
  });
  route = (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === MCP_PATH) return handler.node(req, res);
    if (path === METADATA_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      // Browser-based clients read the metadata cross-origin.
      res
        .writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' })
        .end(req.method === 'GET' ? metadata : undefined);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  };

  return {
    url: resourceUrl,
    resourceMetadataUrl,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const issuer = process.env.OAUTH_ISSUER ?? '';
  const sessApiKey = process.env.SESS_API_KEY ?? '';
  const workspaceId = process.env.SESS_WORKSPACE_ID ?? '';
  if (issuer === '' || sessApiKey === '' || workspaceId === '') {
    process.stderr.write(
      'Set OAUTH_ISSUER, SESS_API_KEY and SESS_WORKSPACE_ID (the workspace of that key).\n',
    );
    process.exit(1);
  }
  const env = process.env;
  const running = await startOAuthHttpExample({
    issuer,
    // Standalone mode: every signed-in person acts with the one configured key.
    accounts: { find: () => ({ workspaceId, credential: () => sessApiKey }) },
    port: Number(env.PORT ?? 8080),
    ...(env.HOST === undefined ? {} : { hostname: env.HOST }),
    ...(env.MCP_RESOURCE_URL === undefined ? {} : { resourceUrl: env.MCP_RESOURCE_URL }),
    ...(env.SESS_API_ORIGIN === undefined ? {} : { sessOrigin: env.SESS_API_ORIGIN }),
    // Any other value than these two is refused by the handler, naming the option.
    ...(env.SESS_MCP_BINDING === undefined ? {} : { binding: env.SESS_MCP_BINDING as 'grant' | 'principal' }),
    ...(env.SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST === '1' ? { allowInsecureLocalhost: true } : {}),
    ...(env.SESS_MCP_DIAGNOSTICS === '1'
      ? { diagnostics: (event) => void process.stderr.write(`${JSON.stringify(event)}\n`) }
      : {}),
  });
  process.stdout.write(`MCP endpoint: ${running.url}\n`);
  const stop = () => void running.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
