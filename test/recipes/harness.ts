/**
 * What both wake recipe tests share: the local Sess runtime; the real `sess-mcp` bin behind the
 * stdio tap (which logs what the framework sent it and copies the server's stderr to a file); a
 * webhook tap in front of the recipe's receiver, which records every delivery (what the webhook
 * carried) and how many `sess_response` calls the server had received when it came; the
 * recipe's log; and the secrets audit over all of them.
 *
 * It decides nothing about what a recipe must do: each test file asserts its own framework's run.
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import type { SessMcpCommand, WakeRecipeLog } from '../../examples/wake-receiver.js';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { builtBin, ROOT, readStdioTap } from '../hosts/matrix.js';
import type { SecretsAudit } from '../support/audit.js';
import type { Closable } from '../support/cleanup.js';
import { approveStopActions } from '../support/surfaces.js';
import { newSecret } from '../support/webhook-receiver.js';
import { RECIPE_TASK } from './script.js';

/** One delivery as the tap saw it. */
export interface TappedDelivery {
  headers: Record<string, string>;
  body: string;
  /** What the recipe's receiver answered. */
  status: number;
  /** `sess_response` calls the server had received when this delivery arrived. */
  sessResponseCallsBefore: number;
}

/** The action of the sample Surface that is a rejection (intent `reject`). */
export const REJECT_ACTION = approveStopActions.find((a) => a.intent === 'reject')!.id;

/** A distinctive answer value (the audit looks for it). */
export const REJECT_MESSAGE = 'not this week, walrus tusk 7741';

/** A running recipe test's surroundings. */
export interface RecipeRun {
  sess: LocalSess;
  webhookSecret: string;
  /** Where the webhook tap forwards to: the recipe's receiver. */
  forwardTo(receiverUrl: string): void;
  deliveries: TappedDelivery[];
  /** The recipe's log. */
  log: WakeRecipeLog[];
  /** The links the recipe showed the person, in order. */
  links: string[];
  /** The runs the recipe shipped (`ship`), in order. */
  shipped: string[];
  /**
   * The options both recipes take, wired to this run: `sess-mcp` behind the stdio tap, the
   * webhook through the tap, `showLink` recording each link (and registering it with the audit),
   * `ship` recording each run, `log` into {@link log}.
   */
  recipeOptions: {
    sessMcp: SessMcpCommand;
    webhookSecret: string;
    webhookUrl: string;
    stateKey: Uint8Array;
    showLink(humanUrl: string): Promise<void>;
    ship(run: string): Promise<void>;
    log(line: WakeRecipeLog): void;
  };
  /** The tool calls the server received, by name, in order (from the stdio tap). */
  toolCalls(): Promise<string[]>;
  /** Post `body` to the receiver signed with `secret` (the webhook's by default), as `id`. */
  post(receiverUrl: string, id: string, body: string, secret?: string): Promise<number>;
  /** The person rejects at the last link shown, with a message. */
  reject(): Promise<void>;
}

/** Start the surroundings of one recipe test; everything opened goes on `open`. */
export async function startRecipeRun(open: Closable[], audit: SecretsAudit, dir: string): Promise<RecipeRun> {
  const sess = await startLocalSess();
  open.push(sess);
  const webhookSecret = newSecret();
  const stateKey = crypto.getRandomValues(new Uint8Array(32));
  audit.secret(sess.apiKey, 'sess api key');
  audit.secret(webhookSecret, 'webhook secret');
  audit.secret(Buffer.from(stateKey).toString('base64'), 'state key');
  const stdioTap = join(dir, 'tap.jsonl');
  const stderrFile = join(dir, 'sess-mcp.stderr');
  audit.watch(() => (existsSync(stderrFile) ? readFileSync(stderrFile, 'utf8') : ''), 'sess-mcp stderr');
  const log: WakeRecipeLog[] = [];
  audit.watch(log, 'recipe log');
  const links: string[] = [];

  const toolCalls = async () =>
    (await readStdioTap(stdioTap)).filter((m) => m.method === 'tools/call').map((m) => m.params?.name ?? '');

  const deliveries: TappedDelivery[] = [];
  audit.watch(deliveries, 'webhook deliveries');
  const tap = await startWebhookTap(
    deliveries,
    async () => (await toolCalls()).filter((n) => n === 'sess_response').length,
  );
  open.push(tap);

  const shipped: string[] = [];
  const sessMcp: SessMcpCommand = {
    command: process.execPath,
    args: [join(ROOT, 'test/hosts/stdio-tap.mjs'), builtBin()],
    env: {
      SESS_API_KEY: sess.apiKey,
      SESS_API_ORIGIN: sess.origin,
      SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST: '1',
      SESS_MCP_STATE_DIR: join(dir, 'sess-state'),
      HOST_MATRIX_TAP: stdioTap,
      HOST_MATRIX_STDERR: stderrFile,
    },
  };

  return {
    sess,
    webhookSecret,
    forwardTo: tap.forwardTo,
    deliveries,
    log,
    links,
    shipped,
    recipeOptions: {
      sessMcp,
      webhookSecret,
      webhookUrl: tap.url,
      stateKey,
      async showLink(humanUrl) {
        audit.url(humanUrl, 'sess link');
        links.push(humanUrl);
      },
      async ship(run) {
        shipped.push(run);
      },
      log: (line) => log.push(line),
    },
    toolCalls,
    async post(receiverUrl, id, body, secret = webhookSecret) {
      const timestamp = new Date();
      const signature = new Webhook(secret).sign(id, timestamp, body);
      const response = await fetch(receiverUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
      });
      return response.status;
    },
    async reject() {
      const values = { message: REJECT_MESSAGE };
      audit.answer(values, 'answer');
      await sess.submitAnswer(links.at(-1)!, { action: REJECT_ACTION, values });
    },
  };
}

/** The run id every recipe test starts. */
export const RUN_ID = 'release-42';

/** What the tests use of a started recipe. */
interface StartedRecipe {
  receiverUrl: string;
  start(run: string, task: string): Promise<{ status: string; handle?: string }>;
  close(): Promise<void>;
}

/**
 * Wire `recipe` to the webhook tap, close it after the test, and start {@link RUN_ID} on
 * `RECIPE_TASK`: it must ask once, show one link and wait. Returns the handle it waits on.
 */
export async function startWaiting(run: RecipeRun, open: Closable[], recipe: StartedRecipe): Promise<string> {
  open.push(recipe);
  run.forwardTo(recipe.receiverUrl);
  const started = await recipe.start(RUN_ID, RECIPE_TASK);
  expect(started).toEqual({ status: 'waiting', handle: expect.stringMatching(/^sess_h_/) });
  expect(run.links).toHaveLength(1);
  expect(await run.toolCalls()).toEqual(['sess_request']);
  return started.handle!;
}

/** `promise`, or a failure naming `what` after `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)),
  ]);
}

/**
 * The run was woken by the webhook: one delivery, taken by the receiver, verified with the
 * reference library, a reference only, and it came before the server received any `sess_response`
 * call; then the server received exactly `sess_response` and `sess_complete`. Returns the event.
 */
export async function expectWokenByWebhook(run: RecipeRun, handle: string): Promise<unknown> {
  expect(run.deliveries).toHaveLength(1);
  const [delivery] = run.deliveries;
  expect(delivery!.status).toBe(204);
  expect(delivery!.sessResponseCallsBefore).toBe(0);
  const event = new Webhook(run.webhookSecret).verify(delivery!.body, delivery!.headers);
  expect(event).toEqual({
    eventId: `evt_${handle}_1`,
    type: 'answered',
    handle,
    revision: 1,
    sequence: 1,
    occurredAt: expect.any(String),
  });
  expect(await run.toolCalls()).toEqual(['sess_request', 'sess_response', 'sess_complete']);
  expect(run.log.map((line) => line.event)).toEqual([
    'run_waiting',
    'webhook_accepted',
    'run_resumed',
    'run_verified',
    'run_finished',
  ]);
  return event;
}

/**
 * After the run: the same delivery again is a duplicate, and an event signed with another secret
 * does not verify; neither resumes anything (the server receives no further call).
 */
export async function expectReplayAndForgeryIgnored(run: RecipeRun, receiverUrl: string, handle: string) {
  const [delivery] = run.deliveries;
  expect(await run.post(receiverUrl, `evt_${handle}_1`, delivery!.body)).toBe(204);
  const forged = JSON.stringify({ ...JSON.parse(delivery!.body), eventId: `evt_${handle}_2`, sequence: 2 });
  expect(await run.post(receiverUrl, `evt_${handle}_2`, forged, newSecret())).toBe(401);
  expect(run.log.slice(-2)).toEqual([
    { event: 'webhook_duplicate', eventId: `evt_${handle}_1` },
    { event: 'webhook_refused', reason: 'signature' },
  ]);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(await run.toolCalls()).toHaveLength(3);
}

/** A recording proxy in front of the recipe's receiver (a reverse proxy would stand there). */
async function startWebhookTap(
  deliveries: TappedDelivery[],
  sessResponseCalls: () => Promise<number>,
): Promise<{ url: string; forwardTo(url: string): void; close(): Promise<void> }> {
  let target: string | undefined;
  const server = http.createServer((req, res) => {
    void (async () => {
      const before = await sessResponseCalls();
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && name.startsWith('webhook-')) headers[name] = value;
      }
      const status =
        target === undefined
          ? 503
          : (
              await fetch(target, {
                method: 'POST',
                headers: { ...headers, 'content-type': 'application/json' },
                body,
              })
            ).status;
      deliveries.push({ headers, body, status, sessResponseCallsBefore: before });
      res.writeHead(status).end();
    })().catch(() => res.writeHead(502).end());
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/sess`,
    forwardTo(url) {
      target = url;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
