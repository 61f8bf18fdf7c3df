/**
 * The person's and the agent host's side of the sign-in test: an `OAuthClientProvider` for the MCP
 * v2 client that keeps its registration, PKCE verifier, discovery state and tokens in memory, a
 * real loopback redirect endpoint on 127.0.0.1, and headless Chromium that signs in and consents
 * on the authorization server's own pages.
 *
 * It does not decide anything about OAuth: discovery, registration, PKCE, the token exchange and
 * refresh are the MCP client's (`auth()` in `@modelcontextprotocol/client`).
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Client as ClientV2,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import type { Browser } from 'playwright-core';

/** The loopback redirect endpoint: it answers the browser and hands the query to the test. */
export interface RedirectEndpoint {
  url: string;
  /** The next callback's query (code, state, iss). */
  next(): Promise<URLSearchParams>;
  close(): Promise<void>;
}

export async function startRedirectEndpoint(): Promise<RedirectEndpoint> {
  const waiting: Array<(params: URLSearchParams) => void> = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end('Signed in. You can close this window.');
    waiting.shift()?.(url.searchParams);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Who signs in when the client redirects, and the secrets they produced along the way. */
export interface SignInLog {
  /** Every authorization code the redirect endpoint received. */
  codes: string[];
  /** Every authorization URL the client asked the browser to open. */
  authorizationUrls: URL[];
  /** Headings the browser saw, in order (the sign-in page, then the consent page). */
  pages: string[];
}

/**
 * An in-memory `OAuthClientProvider` whose `redirectToAuthorization` opens the authorization URL
 * in a fresh Chromium context and signs in as `user`, consenting to what the client asked for.
 */
export class BrowserSignInProvider implements OAuthClientProvider {
  user: string;
  readonly log: SignInLog = { codes: [], authorizationUrls: [], pages: [] };
  private client: StoredOAuthClientInformation | undefined;
  private saved: StoredOAuthTokens | undefined;
  private verifier = '';
  private discovery: OAuthDiscoveryState | undefined;
  private callback: Promise<URLSearchParams> | undefined;

  constructor(
    private readonly browser: Browser,
    private readonly redirect: RedirectEndpoint,
    user: string,
  ) {
    this.user = user;
  }

  get redirectUrl(): string {
    return this.redirect.url;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'sign-in test agent',
      redirect_uris: [this.redirect.url],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.client;
  }
  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.client = info;
  }
  tokens(): StoredOAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens): void {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }

  /** Forget the tokens (a sign-out on this client): the next request signs in again. */
  forgetTokens(): void {
    this.saved = undefined;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.log.authorizationUrls.push(authorizationUrl);
    const callback = this.redirect.next();
    this.callback = this.signIn(authorizationUrl).then(() => callback);
  }

  /** The callback query of the sign-in `redirectToAuthorization` started. */
  async callbackParams(): Promise<URLSearchParams> {
    if (this.callback === undefined) throw new Error('no sign-in was started');
    const params = await this.callback;
    this.callback = undefined;
    const code = params.get('code');
    if (code === null) throw new Error(`the authorization server answered ${params.get('error')}`);
    this.log.codes.push(code);
    return params;
  }

  private async signIn(url: URL): Promise<void> {
    const pages = await signInAndConsent(this.browser, url, this.user, (u) =>
      u.href.startsWith(this.redirect.url),
    );
    this.log.pages.push(...pages);
  }
}

/**
 * Open `url` (an authorization request) in a fresh Chromium context, sign in as `user` on the
 * authorization server's development pages and consent (unless the server remembers that
 * consent), until the browser is sent to a URL `redirected` accepts. Returns the headings of the
 * pages seen (sign-in, then consent when asked).
 */
export async function signInAndConsent(
  browser: Browser,
  url: URL,
  user: string,
  redirected: (url: URL) => boolean,
): Promise<string[]> {
  const pages: string[] = [];
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url.href);
    pages.push((await page.locator('h1').first().textContent()) ?? '');
    await page.fill('input[name="login"]', user);
    await page.fill('input[name="password"]', 'any password will do');
    // A person who consented to this client before (a grant the server remembers) is sent back
    // at once; anyone else sees the consent page. The wait that loses is dropped.
    const consent = page
      .waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' })
      .then(() => 'consent' as const);
    const back = page.waitForURL(redirected).then(() => 'redirected' as const);
    consent.catch(() => {});
    back.catch(() => {});
    await page.click('button[type="submit"]');
    if ((await Promise.race([consent, back])) === 'consent') {
      pages.push((await page.locator('h1').first().textContent()) ?? '');
      await Promise.all([page.waitForURL(redirected), page.click('button[type="submit"]')]);
    }
  } finally {
    await context.close();
  }
  return pages;
}

/**
 * A provider that asks the authorization server for a token of another resource than the one it
 * talks to (as a confused or malicious client might): the resource must refuse that token.
 */
export class OtherResourceProvider extends BrowserSignInProvider {
  constructor(
    browser: Browser,
    redirect: RedirectEndpoint,
    user: string,
    private readonly resource: string,
  ) {
    super(browser, redirect, user);
  }

  async validateResourceURL(): Promise<URL> {
    return new URL(this.resource);
  }
}

/**
 * An MCP v2 client of `url` signed in through `provider`: when the server asks for sign-in, the
 * browser signs in and the client connects again.
 */
export async function connectSignedIn(provider: BrowserSignInProvider, url: string): Promise<ClientV2> {
  const attempt = () => {
    const transport = new TransportV2(new URL(url), { authProvider: provider });
    const client = new ClientV2(
      { name: 'sign-in-test', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    return { client, transport };
  };
  const first = attempt();
  try {
    await first.client.connect(first.transport);
    return first.client;
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  await first.transport.finishAuth(await provider.callbackParams());
  const second = attempt();
  await second.client.connect(second.transport);
  return second.client;
}
