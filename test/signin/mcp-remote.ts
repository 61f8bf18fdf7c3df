/**
 * mcp-remote 0.15.1 as desktop hosts run it for a remote server: a stdio proxy the MCP v1 SDK's
 * `Client` spawns over `StdioClientTransport`, with a config directory of its own and `BROWSER` set
 * to a small script that hands the authorization URL to this process, where headless Chromium
 * signs in and consents. Shared by the reconnect test (`reconnect.test.ts`) and the host matrix's
 * mcp-remote row (`test/hosts/mcp-remote.test.ts`).
 */
import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Browser } from 'playwright-core';
import { requireHost } from '../hosts/matrix.js';
import { HAVE_CHROMIUM } from '../support/chromium.js';
import { signInAndConsent } from './sign-in.js';

/** The install `.ci/run` runs (`reconnect_proxy`). */
export const MCP_REMOTE_INSTALL =
  'npm install --prefix .tmp/mcp-remote --no-audit --no-fund mcp-remote@0.15.1';

/** The version installed there. */
export const MCP_REMOTE_VERSION = '0.15.1';

/**
 * The installed proxy's entry, or undefined (the suite skips; under `CI` it fails) when Chromium or
 * the install is missing.
 */
export function mcpRemoteProxy(): string | undefined {
  return HAVE_CHROMIUM
    ? requireHost(
        `mcp-remote ${MCP_REMOTE_VERSION}`,
        '.tmp/mcp-remote/node_modules/mcp-remote/dist/proxy.js',
        MCP_REMOTE_INSTALL,
      )
    : undefined;
}

/** Where mcp-remote's `BROWSER` hands authorization URLs: each launch signs in as its person. */
export interface BrowserDesk {
  /** The `BROWSER` script for a launch that signs in as `user`. */
  script(user: string): Promise<string>;
  /** The sign-ins started, for `await`ing their end and failing on theirs. */
  signIns: Promise<unknown>[];
  close(): Promise<void>;
}

/** Open a desk; its scripts are written into folders `dir` makes. */
export async function openDesk(browser: Browser, dir: () => Promise<string>): Promise<BrowserDesk> {
  const users = new Map<string, string>();
  const signIns: Promise<unknown>[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      const user = users.get(new URL(req.url ?? '/', 'http://x').pathname.slice(1));
      if (req.method !== 'POST' || user === undefined) return void res.writeHead(404).end();
      res.writeHead(204).end();
      // mcp-remote's callback listens on localhost: consent ends once the browser is sent there.
      signIns.push(signInAndConsent(browser, new URL(body), user, (u) => u.pathname === '/oauth/callback'));
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const desk = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let launches = 0;
  return {
    signIns,
    async script(user) {
      const launch = `launch${++launches}`;
      users.set(launch, user);
      const path = join(await dir(), `browser-${launch}.sh`);
      const send = `fetch(process.argv[1], { method: 'POST', body: process.argv[2] }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
      await writeFile(path, `#!/bin/sh\nexec "${process.execPath}" -e "${send}" "${desk}/${launch}" "$1"\n`);
      await chmod(path, 0o700);
      return path;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The one file of mcp-remote's config directory whose name ends with `suffix`, parsed. */
export async function configFile(
  configDir: string,
  suffix: string,
): Promise<{ path: string; json: Record<string, string> }> {
  const dir = join(configDir, 'mcp-remote-v1');
  const name = (await readdir(dir)).find((entry) => entry.endsWith(suffix));
  if (name === undefined) throw new Error(`mcp-remote kept no ${suffix}`);
  const path = join(dir, name);
  return { path, json: JSON.parse(await readFile(path, 'utf8')) as Record<string, string> };
}

/**
 * A v1 SDK `Client` connected through mcp-remote (`proxy`) to `url`, with `configDir` as its config
 * directory and home, signing in as `user` when it opens the browser. The client's name is
 * `clientName`; mcp-remote's stderr is kept in `stderr()`.
 */
export async function connectThroughMcpRemote(options: {
  proxy: string;
  url: string;
  configDir: string;
  desk: BrowserDesk;
  user: string;
  clientName?: string;
}): Promise<{ client: Client; stderr(): string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [options.proxy, options.url, '--allow-http'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: options.configDir,
      MCP_REMOTE_CONFIG_DIR: options.configDir,
      BROWSER: await options.desk.script(options.user),
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: options.clientName ?? 'reconnect-test', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (error) {
    await client.close().catch(() => {});
    throw new Error(`mcp-remote did not connect: ${String(error)}\n${stderr}`);
  }
  return { client, stderr: () => stderr };
}
