/**
 * A webhook attempt on Node: one `node:https` (or, for a testing loopback URL, `node:http`)
 * request on a connection of its own, whose `lookup` resolves the host and refuses the connection
 * when any address it returns is forbidden. Node connects only to an address that lookup
 * returned, so a name that resolves to a public address when checked and to a private one when
 * connected (DNS rebinding) cannot slip between the two: there is one resolution, and it is
 * checked.
 *
 * It reads at most {@link WEBHOOK_RESPONSE_READ_BYTES} of the response and then destroys the
 * socket, follows no redirect, and ends at the attempt's time whatever the receiver does (a
 * receiver that accepts and never answers, or dribbles bytes, holds nothing past it).
 *
 * Node's modules come from the runtime's `process.getBuiltinModule`, as in
 * `src/sess/node-transport.ts`, never from an import (nor their types), so a bundle for an edge
 * runtime that loads this file stays free of `node:`; there {@link nodeWebhookTransport} answers
 * `undefined` and the sender uses `fetch`.
 */
import type { AddressPolicy } from './webhook-destination.js';
import { isForbiddenAddress } from './webhook-destination.js';
import {
  FORBIDDEN_ADDRESS_CODE,
  outcomeOfStatus,
  retryReasonOf,
  WEBHOOK_RESPONSE_READ_BYTES,
  type WebhookAttempt,
  type WebhookOutcome,
  type WebhookTransport,
} from './webhook-send.js';

/** One address as `dns.lookup` answers with `all: true`. */
interface LookupAddress {
  address: string;
  family: number;
}

/** The `lookup` callback in both of its forms. */
type LookupCallback = (error: Error | null, address?: string | LookupAddress[], family?: number) => void;

interface NodeDns {
  lookup(
    hostname: string,
    options: Record<string, unknown>,
    callback: (error: Error | null, addresses: LookupAddress[]) => void,
  ): void;
}

interface NodeIncoming {
  statusCode?: number | undefined;
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  destroy(): unknown;
}

interface NodeOutgoing {
  on(event: 'error', listener: (error: unknown) => void): unknown;
  on(event: 'response', listener: (message: NodeIncoming) => void): unknown;
  end(body?: string): unknown;
  destroy(): unknown;
}

interface NodeHttp {
  request(url: URL, options: Record<string, unknown>): NodeOutgoing;
}

interface NodeModules {
  http: NodeHttp;
  https: NodeHttp;
  dns: NodeDns;
}

interface RuntimeGlobals {
  process?: { release?: { name?: unknown }; getBuiltinModule?: (id: string) => unknown };
  navigator?: { userAgent?: unknown };
  Deno?: unknown;
  Bun?: unknown;
}

let modules: NodeModules | null | undefined;

/** Node's modules, or `null` on any runtime that is not Node itself (Deno, Bun, workerd). */
function nodeModules(): NodeModules | null {
  if (modules !== undefined) return modules;
  modules = null;
  const g = globalThis as RuntimeGlobals;
  const proc = g.process;
  if (proc?.release?.name !== 'node' || typeof proc.getBuiltinModule !== 'function') return modules;
  if (g.Deno !== undefined || g.Bun !== undefined) return modules;
  const agent = g.navigator?.userAgent;
  if (typeof agent === 'string' && !agent.startsWith('Node.js')) return modules;
  const http = proc.getBuiltinModule('node:http') as NodeHttp | undefined;
  const https = proc.getBuiltinModule('node:https') as NodeHttp | undefined;
  const dns = proc.getBuiltinModule('node:dns') as NodeDns | undefined;
  if (http === undefined || https === undefined || dns === undefined) return modules;
  modules = { http, https, dns };
  return modules;
}

/** Node-only settings of the transport. */
export interface NodeWebhookTransportOptions {
  /** PEM certificates trusted instead of Node's default certificate authorities. */
  readonly ca?: readonly string[];
}

/**
 * The Node transport, or `undefined` when this runtime is not Node itself (then the runtime
 * cannot see the addresses it connects to, and the sender must use `fetch` with an allowlist).
 */
export function nodeWebhookTransport(
  options: NodeWebhookTransportOptions = {},
): WebhookTransport | undefined {
  const node = nodeModules();
  if (node === null) return undefined;
  return (attempt) => attemptOverNode(node, attempt, options);
}

/**
 * `dns.lookup` with every answer checked: a forbidden address fails the whole lookup, so the
 * socket is never opened, whichever address Node would have tried first.
 */
function checkedLookup(dns: NodeDns, policy: AddressPolicy) {
  return (hostname: string, options: Record<string, unknown>, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error);
      if (addresses.length === 0 || addresses.some((a) => isForbiddenAddress(a.address, policy))) {
        const refused = Object.assign(new Error('the webhook host resolves to a forbidden address'), {
          code: FORBIDDEN_ADDRESS_CODE,
        });
        return callback(refused);
      }
      if (options.all === true) return callback(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };
}

function attemptOverNode(
  node: NodeModules,
  attempt: WebhookAttempt,
  options: NodeWebhookTransportOptions,
): Promise<WebhookOutcome> {
  return new Promise((resolve) => {
    const scheme = attempt.url.protocol === 'https:' ? node.https : node.http;
    let incoming: NodeIncoming | undefined;
    let status: number | undefined;
    let settled = false;
    const request = scheme.request(attempt.url, {
      method: 'POST',
      headers: {
        ...attempt.headers,
        'content-length': String(new TextEncoder().encode(attempt.body).length),
      },
      // A connection of its own, closed after the attempt: nothing is kept between attempts.
      agent: false,
      lookup: checkedLookup(node.dns, attempt.policy),
      ...(options.ca === undefined ? {} : { ca: [...options.ca] }),
    });
    const finish = (outcome: WebhookOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      incoming?.destroy();
      request.destroy();
      resolve(outcome);
    };
    // The outcome is the status's once one arrived: the attempt's time then only bounds the read.
    const timer = setTimeout(
      () => finish(status === undefined ? { kind: 'retry', reason: 'timeout' } : outcomeOfStatus(status)),
      attempt.timeoutMs,
    );
    request.on('error', (error) => {
      if ((error as { code?: unknown }).code === FORBIDDEN_ADDRESS_CODE) {
        finish({ kind: 'refused', reason: 'forbidden_address' });
      } else {
        finish(
          status === undefined ? { kind: 'retry', reason: retryReasonOf(error) } : outcomeOfStatus(status),
        );
      }
    });
    request.on('response', (message) => {
      incoming = message;
      status = message.statusCode ?? 0;
      const outcome = outcomeOfStatus(status);
      let read = 0;
      message.on('data', (chunk) => {
        read += chunk.byteLength;
        if (read >= WEBHOOK_RESPONSE_READ_BYTES) finish(outcome);
      });
      message.on('end', () => finish(outcome));
      message.on('close', () => finish(outcome));
      message.on('error', () => finish(outcome));
    });
    request.end(attempt.body);
  });
}
