/**
 * A real OAuth 2.1 authorization server for the sign-in test: `oidc-provider` on 127.0.0.1 with
 * dynamic client registration, PKCE (required for public clients), refresh tokens, revocation and
 * RFC 8707 resource indicators that issue RFC 9068 JWT access tokens (ES256) for one resource.
 * Its development sign-in and consent pages (any login name, any password) are what the browser
 * fills in; each access token carries the server's grant id as `grant_id`.
 *
 * It is started before the resource so its issuer URL is known, and told the resource URL after.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type Configuration, errors as oidcErrors } from 'oidc-provider';

/** A running authorization server. */
export interface AuthorizationServer {
  /** The issuer URL, e.g. `http://127.0.0.1:41234`. */
  issuer: string;
  /**
   * Serve tokens for these resources (resource URL → its scopes); the first is the default.
   * Any other resource indicator is refused (`invalid_target`).
   */
  serve(resources: Readonly<Record<string, readonly string[]>>, options?: ServeOptions): Promise<void>;
  /** Errors the provider reported (a test fails on any). */
  errors: string[];
  /** `METHOD /path` of every request, in order (paths only: queries and bodies hold secrets). */
  requests: string[];
  close(): Promise<void>;
}

/** What the server does besides dynamic registration. */
export interface ServeOptions {
  /**
   * Client ID Metadata Documents the server accepts, by their URL (the client id). The server
   * advertises `client_id_metadata_document_supported` and reads each document from here: these
   * URLs are not fetched from the network (this test has no public HTTPS host).
   */
  clientMetadataDocuments?: Readonly<Record<string, Record<string, unknown>>>;
  /**
   * Keep one grant per person and client across sign-ins (as an authorization server that
   * remembers consent does): a new sign-in of the same person with the same client, from a new
   * browser session, gets that grant again (same grant id, no consent page) until it is revoked.
   * By default a grant belongs to the browser session that consented.
   */
  rememberGrants?: boolean;
}

/** Start the server's listener; the provider is mounted by `serve`. */
export async function startAuthorizationServer(): Promise<AuthorizationServer> {
  let listener: http.RequestListener = (_req, res) => void res.writeHead(503).end();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${new URL(req.url ?? '/', 'http://x').pathname}`);
    listener(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const errors: string[] = [];
  return {
    issuer,
    errors,
    requests,
    async serve(resources, options = {}) {
      const resourceUrls = Object.keys(resources);
      const scopes = [...new Set(Object.values(resources).flat())];
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      const signingKey = { ...(await exportJWK(privateKey)), kid: 'as-es256', alg: 'ES256', use: 'sig' };
      const configuration: Configuration = {
        jwks: { keys: [signingKey] },
        // A fixed cookie key: this server lives for one test file.
        cookies: { keys: ['sign-in-test-cookie-key-0123456789abcdef'] },
        // The resource's scopes are listed too: clients register with the scope they will ask for.
        scopes: ['openid', 'offline_access', ...scopes],
        clientDefaults: {
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          id_token_signed_response_alg: 'ES256',
        },
        features: {
          devInteractions: { enabled: true },
          registration: { enabled: true },
          revocation: { enabled: true },
          resourceIndicators: {
            enabled: true,
            defaultResource: () => resourceUrls[0]!,
            useGrantedResource: () => true,
            getResourceServerInfo: (_ctx, indicator) => {
              const served = resources[indicator];
              if (served === undefined) throw new oidcErrors.InvalidTarget();
              return {
                scope: served.join(' '),
                audience: indicator,
                accessTokenTTL: 300,
                accessTokenFormat: 'jwt',
                jwt: { sign: { alg: 'ES256' } },
              };
            },
          },
        },
        findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
        extraTokenClaims: (_ctx, token) =>
          'grantId' in token && typeof token.grantId === 'string' ? { grant_id: token.grantId } : undefined,
        ttl: { AccessToken: 300, AuthorizationCode: 60, RefreshToken: 3_600, Grant: 3_600, Session: 3_600 },
      };
      const documents = options.clientMetadataDocuments;
      if (documents !== undefined) {
        configuration.features!.clientIdMetadataDocument = { enabled: true, ack: 'draft-02' };
        // The documents' URLs are answered here; anything else goes out as it would.
        configuration.fetch = async (url, init) => {
          const document = documents[String(url)];
          if (document === undefined) return fetch(url, init);
          return new Response(JSON.stringify(document), {
            status: 200,
            headers: { 'content-type': 'application/json' },
          });
        };
      }
      /** Person and client → their grant, while it exists. */
      const remembered = new Map<string, string>();
      const grantKey = (accountId: unknown, clientId: unknown) => JSON.stringify([accountId, clientId]);
      if (options.rememberGrants === true) {
        configuration.loadExistingGrant = async (ctx) => {
          const grantId =
            ctx.oidc.result?.consent?.grantId ??
            ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId) ??
            remembered.get(grantKey(ctx.oidc.session!.accountId, ctx.oidc.client!.clientId));
          return grantId === undefined ? undefined : ctx.oidc.provider.Grant.find(grantId);
        };
      }
      const provider = new Provider(issuer, configuration);
      if (options.rememberGrants === true) {
        provider.on('grant.saved', (grant) => {
          remembered.set(grantKey(grant.accountId, grant.clientId), grant.jti);
        });
      }
      provider.on('server_error', (_ctx, error) => errors.push(`server_error: ${error.name}`));
      provider.on('grant.error', (_ctx, error) => errors.push(`grant.error: ${error.name}`));
      const callback = provider.callback();
      listener = (req, res) => void callback(req, res);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
