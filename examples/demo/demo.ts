/**
 * The newcomer demo behind `npm start`: the whole loop on this machine, with nothing to sign up
 * for. It starts the local Sess runtime (the answer page included), mounts the HTTP handler in a
 * `node:http` server on 127.0.0.1, and plays an agent that speaks real MCP (the v2 client over
 * Streamable HTTP): ask → show the link → wait → read the verified answer → publish a follow-up →
 * wait → complete.
 *
 * A demo, not a template for production: the handle store is in memory, `authenticate` checks one
 * random bearer token made up at start, and the Sess runtime keeps everything in memory. Links and
 * answers go to the person's own terminal on purpose; nothing is sent to a diagnostics sink or a
 * log, and the bearer token and the Sess API key are never printed.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createSessMcpHttpHandler, type SessHttpPrincipal } from '../../src/http/index.js';
import {
  type AskArgs,
  createMemoryHandleStore,
  type InteractionResult,
  type ResponseResult,
  type Surface,
} from '../../src/index.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { qrLines } from './qr.js';

/** Where the demo writes its lines (the terminal, or a test's buffer). */
export interface DemoOutput {
  line(text?: string): void;
}

/** Answers the questions in place of the person (the `--auto` browser). */
export interface DemoPerson {
  /** Answer the first question at `link`, then the follow-up once it shows. */
  answer(link: string): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /**
   * Interface the local Sess runtime (and so the answer page) listens on. `0.0.0.0` or `::` make
   * the link work from a phone on the same network; the MCP endpoint always stays on 127.0.0.1.
   * @default '127.0.0.1'
   */
  host?: string;
  /** Someone who answers by themselves; without one, the person at the terminal answers. */
  person?: DemoPerson;
  /** Milliseconds each `sess_response` call waits. @default 25000 */
  waitMs?: number;
  /** Called when the host would ask the person to say "continue" (after four calls without an answer). */
  askToContinue?: () => Promise<void>;
  /** Ends the demo early (Ctrl+C). */
  signal?: AbortSignal;
}

/** The question the demo agent asks. */
export const DEMO_QUESTION = 'What time works for a call tomorrow?';
/** The title of the follow-up the agent publishes once the first answer is in. */
export const FOLLOW_UP_TITLE = 'Shall I send the invite?';

/** The `sess_ask` arguments of the first question: a choice, a multi-line note and a rating. */
export const DEMO_ASK: AskArgs = {
  question: DEMO_QUESTION,
  details:
    'I am setting up a 30-minute call with the design team. Pick a slot and tell me anything I should know.',
  fields: [
    {
      type: 'choice',
      name: 'slot',
      label: 'Time',
      required: true,
      options: [
        { id: '09:30', label: '09:30 – 10:00' },
        { id: '13:00', label: '13:00 – 13:30' },
        { id: '16:30', label: '16:30 – 17:00' },
      ],
    },
    {
      type: 'text',
      name: 'note',
      label: 'Anything to prepare?',
      description: 'Optional: an agenda point, a document to share.',
      multiline: true,
      max: 500,
    },
    { type: 'rating', name: 'urgency', label: 'How urgent is it?', min: 1, max: 5, required: true },
  ],
  submit_label: 'Send',
};

/** The follow-up the agent publishes on the same link: the call it is about to book. */
export function followUpSurface(slot: string, note: string): Surface {
  const fields: Record<string, string> = { When: `Tomorrow ${slot}`, Length: '30 minutes' };
  // Record values are limited to 200 code points; cut by code point so no emoji is split.
  const points = Array.from(note);
  if (note !== '') fields.Note = points.length > 200 ? `${points.slice(0, 199).join('')}…` : note;
  return {
    mode: 'interactive',
    title: FOLLOW_UP_TITLE,
    description: 'I will invite the design team and attach your note.',
    source: { kind: 'sess_surface', components: [{ type: 'record', label: 'The call', fields }] },
    actions: [
      { id: 'send', label: 'Send invite', intent: 'approve' },
      { id: 'hold', label: 'Not yet', intent: 'reject' },
    ],
  };
}

/** A tool call that came back as a tool error, or a result that is not what the tools promise. */
export class DemoError extends Error {
  override name = 'DemoError';
}

type ToolArgs = Record<string, unknown>;

/** The interfaces the demo can listen on, and what to bind for each. */
const BIND: Readonly<Record<string, string>> = {
  '127.0.0.1': '127.0.0.1',
  localhost: '127.0.0.1',
  '0.0.0.0': '0.0.0.0',
  '::': '::',
  '[::]': '::',
};

function isWildcard(bind: string): boolean {
  return bind === '0.0.0.0' || bind === '::';
}

/**
 * Why `host` cannot be used, or `undefined` when it can. The MCP server reaches the runtime over
 * loopback, so the runtime listens on loopback or on every interface, never on one other address.
 */
export function checkDemoHost(host: string): string | undefined {
  return Object.hasOwn(BIND, host)
    ? undefined
    : `--host ${host}: use 0.0.0.0 (every interface, so a phone on the same network can open the link) or 127.0.0.1.`;
}

/** The first non-internal IPv4 address of this machine: what a phone on the same network reaches. */
export function lanAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const info of list ?? []) {
      if (info.family === 'IPv4' && !info.internal) return info.address;
    }
  }
  return undefined;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The MCP endpoint: `createSessMcpHttpHandler` mounted with `handler.node` at `/mcp` on 127.0.0.1. */
async function startMcpServer(sess: LocalSess, bearer: string, sessOrigin: string) {
  const stores = createMemoryHandleStore();
  const principal: SessHttpPrincipal = {
    workspaceId: sess.workspaceId,
    principalId: 'you',
    clientId: 'demo-agent',
    grantId: 'demo-grant',
    grantGeneration: '1',
    scopes: ['sess'],
    credential: () => sess.apiKey,
  };
  const handler = createSessMcpHttpHandler({
    authenticate(request) {
      const header = request.headers.get('authorization') ?? '';
      return sameSecret(header, `Bearer ${bearer}`) ? principal : undefined;
    },
    handleStore: (binding) => stores.forBinding(binding),
    allowedHosts: ['127.0.0.1', 'localhost'],
    requiredScopes: ['sess'],
    sessOrigin,
    allowInsecureLocalhost: true,
    // Receipts name the runtime's own origin, which differs from `sessOrigin` when it listens on 0.0.0.0.
    receiptIssuer: sess.origin,
  });
  const server = http.createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname === '/mcp') return handler.node(req, res);
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs one tool and returns `structuredContent.interaction`; a tool error becomes a {@link DemoError}. */
async function callTool(
  client: Client,
  name: string,
  args: ToolArgs,
  signal: AbortSignal | undefined,
): Promise<InteractionResult> {
  const result = await client.callTool(
    { name, arguments: args },
    // A wait takes up to 45 s; the client's own default timeout must not cut it.
    { timeout: 120_000, ...(signal === undefined ? {} : { signal }) },
  );
  const structured = result.structuredContent as
    | { interaction?: InteractionResult; error?: { code: string; message: string } }
    | undefined;
  if (result.isError === true || structured?.interaction === undefined) {
    const error = structured?.error;
    throw new DemoError(
      error === undefined
        ? `${name} returned no interaction`
        : `${name} failed: ${error.code}: ${error.message}`,
    );
  }
  return structured.interaction;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

function showAnswer(out: DemoOutput, response: ResponseResult): void {
  out.line(`  ✓ Verified answer (signed receipt checked, revision ${response.revision})`);
  out.line(`    action: ${response.action}`);
  for (const [key, value] of Object.entries(response.values)) {
    const shown = typeof value === 'string' ? value.replace(/\n/g, ' ⏎ ') : JSON.stringify(value);
    out.line(`    ${key}: ${shown === '' ? '(empty)' : shown}`);
  }
}

/**
 * Run the demo once, from start to `sess_complete`, and close everything it started. Resolves
 * when the follow-up is answered and the interaction is completed; rejects on a tool error, an
 * expired link, or `signal`.
 */
export async function runDemo(out: DemoOutput, options: DemoOptions = {}): Promise<void> {
  const host = options.host ?? '127.0.0.1';
  const problem = checkDemoHost(host);
  if (problem !== undefined) throw new DemoError(problem);
  const bind = BIND[host]!;
  const waitMs = options.waitMs ?? 25_000;
  const closers: Array<() => Promise<unknown>> = [];
  try {
    out.line('Starting the local Sess runtime and the MCP endpoint…');
    const sess = await startLocalSess({ host: bind });
    closers.push(() => sess.close());
    const port = new URL(sess.origin).port;
    // The MCP server always reaches the runtime over loopback; only the links use the LAN address.
    const sessOrigin = `http://127.0.0.1:${port}`;
    let linkOrigin = sessOrigin;
    if (isWildcard(bind)) {
      const lan = lanAddress();
      if (lan === undefined) out.line('  ! No network address found; the link works on this machine only.');
      else linkOrigin = `http://${lan}:${port}`;
    }
    const bearer = randomBytes(24).toString('base64url');
    const mcp = await startMcpServer(sess, bearer, sessOrigin);
    closers.push(() => mcp.close());
    out.line(`  Sess runtime: ${sess.origin}${isWildcard(bind) ? ` (reachable at ${linkOrigin})` : ''}`);
    out.line(`  MCP endpoint: ${mcp.url}`);

    const client = new Client(
      { name: 'sess-demo-agent', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(mcp.url), {
        requestInit: { headers: { authorization: `Bearer ${bearer}` } },
      }),
    );
    closers.push(() => client.close());
    const { tools } = await client.listTools();
    out.line(`  Agent connected over MCP: ${tools.map((t) => t.name).join(', ')}`);
    out.line();

    const signal = options.signal;
    const call = (name: string, args: ToolArgs) => callTool(client, name, args, signal);

    out.line(`Agent → sess_ask: "${DEMO_QUESTION}" (a choice, a note, a rating)`);
    const asked = await call('sess_ask', { ...DEMO_ASK });
    const handle = asked.handle;
    if (asked.humanUrl === undefined) throw new DemoError('sess_ask returned no link');
    const sessLink = new URL(asked.humanUrl);
    const link = new URL(sessLink.pathname + sessLink.search, linkOrigin).href;
    out.line();
    // A loopback link opens on this computer only: say so, and keep "phone" for a link that a
    // phone on the same network can open.
    out.line(`  Open this ${isWildcard(bind) ? 'on your phone' : 'in your browser'}: ${link}`);
    if (isWildcard(bind)) {
      out.line('  or scan it:');
      for (const row of await qrLines(link)) out.line(`  ${row}`);
    }
    if (!isWildcard(bind) && options.person === undefined) {
      out.line(
        '  (This link works on this computer. For a phone on your network: npm start -- --host 0.0.0.0)',
      );
    }
    out.line();

    let answering: Promise<void> | undefined;
    if (options.person !== undefined) {
      out.line('  --auto: a headless Chromium opens the link and answers in your place.');
      // The person answers while the agent waits; a failure there ends the demo.
      answering = options.person.answer(link);
      answering.catch(() => {});
    }

    const waitFor = async (revision: number): Promise<ResponseResult> => {
      let calls = 0;
      const started = Date.now();
      for (;;) {
        out.line(`Agent → sess_response (revision ${revision}, waits up to ${seconds(waitMs)})…`);
        const pending = call('sess_response', { handle, revision, wait_ms: waitMs });
        const got = answering === undefined ? await pending : await firstOf(pending, answering);
        calls += 1;
        switch (got.state) {
          case 'answered':
            if (got.response === undefined) throw new DemoError('sess_response: answered without a response');
            out.line(`  answered after ${seconds(Date.now() - started)}`);
            return got.response;
          case 'waiting':
          case 'needs_resume':
            out.line(
              `  ${got.state === 'waiting' ? 'still waiting' : 'the wait was cut; resuming'} (${seconds(Date.now() - started)})`,
            );
            // A host calls again up to three times after the first, then asks the person to say continue.
            if (calls >= 4 && options.askToContinue !== undefined) {
              await options.askToContinue();
              calls = 0;
            }
            break;
          default:
            throw new DemoError(`The interaction ended as "${got.state}" before an answer came.`);
        }
      }
    };

    const first = await waitFor(1);
    showAnswer(out, first);
    out.line();

    const slot = String(first.values.slot ?? '');
    const note = typeof first.values.note === 'string' ? first.values.note : '';
    out.line(`Agent → sess_publish: a follow-up on the same link ("${FOLLOW_UP_TITLE}")`);
    const published = await call('sess_publish', {
      handle,
      expected_revision: first.revision,
      response_event_id: first.eventId,
      interaction: followUpSurface(slot, note),
    });
    out.line(`  published revision ${published.revision}; the open page shows it by itself.`);
    const second = await waitFor(published.revision);
    showAnswer(out, second);
    out.line();

    out.line('Agent → sess_complete');
    const pageRequests = sess.stats.requests.page ?? 0;
    const completed = await call('sess_complete', {
      handle,
      expected_revision: second.revision,
      response_event_id: second.eventId,
    });
    if (completed.state !== 'completed') throw new DemoError(`sess_complete returned "${completed.state}"`);
    out.line(
      `  completed: ${second.action === 'send' ? 'the invite is on its way' : 'no invite sent'}; the page now says "Done".`,
    );
    if (answering !== undefined) await answering;
    else await finalPageShown(sess, pageRequests, out, signal);
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}

/** How long the runtime stays up after `sess_complete` for an open page to show "Done". */
export const FINAL_PAGE_GRACE_MS = 10_000;

/**
 * Keep the runtime (and so the answer page) up until the person's open page has fetched its final
 * state, or for {@link FINAL_PAGE_GRACE_MS}: the page learns of the completion from its watch and
 * then fetches itself again, so the demo must not take the page's server away first.
 */
async function finalPageShown(
  sess: LocalSess,
  pageRequestsBefore: number,
  out: DemoOutput,
  signal: AbortSignal | undefined,
): Promise<void> {
  out.line(`  (keeping the page up until it shows "Done", at most ${seconds(FINAL_PAGE_GRACE_MS)})`);
  const until = Date.now() + FINAL_PAGE_GRACE_MS;
  let seen = pageRequestsBefore;
  let quietSince: number | undefined;
  while (Date.now() < until && signal?.aborted !== true) {
    const now = sess.stats.requests.page ?? 0;
    if (now > seen) {
      // The page asked again (its watch ended, it fetched itself): wait until it is quiet.
      seen = now;
      quietSince = Date.now();
    } else if (quietSince !== undefined && Date.now() - quietSince >= PAGE_QUIET_MS) {
      return;
    }
    await sleep(50);
  }
}

/** How long the page must stay quiet after its last request before the demo takes it down. */
const PAGE_QUIET_MS = 500;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The first of `pending` and a failure of `person`: the person's success alone never wins. */
function firstOf<T>(pending: Promise<T>, person: Promise<void>): Promise<T> {
  return Promise.race([pending, person.then(() => pending)]);
}
