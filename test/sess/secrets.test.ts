/**
 * Secrets never leak: no error the client throws (message, cause chain, own properties, as
 * `util.inspect` shows them) and nothing written to the console, stdout or stderr while the client
 * runs holds the API key, a link, a receipt or an answer value. Also: `src/sess` stays edge-safe.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SessApiError } from '../../src/core/contract/ports.js';
import { createSessClient } from '../../src/sess/client.js';
import {
  answer,
  clientFor,
  closedPort,
  idemKey,
  SECRET_ANSWER_VALUE,
  startDoubleServer,
  surface,
  useRuntime,
} from './helpers.js';

const sess = useRuntime();

/** Run `body` while capturing everything written to the console, stdout and stderr. */
async function capturingOutput(body: () => Promise<void>): Promise<string> {
  const written: string[] = [];
  const methods = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
  const savedConsole = methods.map((m) => console[m]);
  const savedOut = process.stdout.write;
  const savedErr = process.stderr.write;
  for (const m of methods) {
    console[m] = (...args: unknown[]) => {
      written.push(args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 8 }))).join(' '));
    };
  }
  const capture = (chunk: unknown) => {
    written.push(String(chunk));
    return true;
  };
  process.stdout.write = capture as typeof process.stdout.write;
  process.stderr.write = capture as typeof process.stderr.write;
  try {
    await body();
  } finally {
    methods.forEach((m, i) => {
      console[m] = savedConsole[i]!;
    });
    process.stdout.write = savedOut;
    process.stderr.write = savedErr;
  }
  return written.join('\n');
}

describe('no secret leaks', () => {
  it('a full round with every failure mode writes nothing and leaks nothing through errors', async () => {
    const errors: unknown[] = [];
    const secrets: string[] = [sess.apiKey, SECRET_ANSWER_VALUE];
    const attempt = async (call: () => Promise<unknown>) => {
      try {
        await call();
      } catch (error) {
        errors.push(error);
      }
    };

    const output = await capturingOutput(async () => {
      const client = clientFor(sess);
      const quick = clientFor(sess, { requestTimeoutMs: 300 });
      const s = surface();
      const created = await client.createSession({ surface: s, idempotencyKey: idemKey() });
      secrets.push(created.humanUrl);
      await sess.submitAnswer(created.humanUrl, answer());
      const answered = await client.waitSession(created.sessionId, {
        revision: 1,
        status: 'active',
        timeoutMs: 1_000,
      });
      const r = answered.responses[0]!;
      secrets.push(r.receipt);
      const input = {
        sessionId: created.sessionId,
        revision: 1,
        eventId: r.eventId,
        surface: s,
        answer: r.answer,
        receipt: r.receipt,
      };
      await client.verifyResponse(input);

      // Reads and mutations under every fault the runtime has.
      for (const inject of [
        () => sess.faults.fail('get', 500),
        () => sess.faults.drop('get'),
        () => sess.faults.malformed('get'),
        () => sess.faults.contradictory('get', { variant: 'active_with_answer' }),
      ]) {
        inject();
        await attempt(() => client.getSession(created.sessionId));
      }
      sess.faults.delay('get', 2_000);
      await attempt(() => quick.getSession(created.sessionId));
      for (const tamper of [
        { mode: 'signature' },
        { mode: 'unknown_key' },
        { mode: 'other_workspace_key' },
        { mode: 'claim', claim: 'adg' },
      ] as const) {
        sess.faults.tamperReceipt('get', tamper);
        const view = await client.getSession(created.sessionId);
        secrets.push(view.responses[0]!.receipt);
        await attempt(() => client.verifyResponse({ ...input, receipt: view.responses[0]!.receipt }));
      }
      await attempt(() => client.verifyResponse({ ...input, receipt: `${r.receipt}x` }));
      await attempt(() =>
        client.verifyResponse({ ...input, answer: answer(`${SECRET_ANSWER_VALUE}-other`) }),
      );
      sess.faults.commitThenDrop('publish');
      await attempt(() =>
        client.publish(created.sessionId, {
          expectedRevision: 1,
          responseEventId: r.eventId,
          surface: surface('Next?'),
          idempotencyKey: idemKey(),
        }),
      );
      await attempt(() =>
        client.complete(created.sessionId, {
          expectedRevision: 9,
          responseEventId: r.eventId,
          idempotencyKey: idemKey(),
        }),
      );
      const port = await closedPort();
      await attempt(() =>
        createSessClient({
          origin: `http://127.0.0.1:${port}`,
          credential: () => sess.apiKey,
          allowInsecureLocalhost: true,
        }).getSession(created.sessionId),
      );
      // A credential provider whose error message holds the key.
      await attempt(() =>
        createSessClient({
          origin: sess.origin,
          credential: () => {
            throw new Error(`could not use ${sess.apiKey}`);
          },
          allowInsecureLocalhost: true,
        }).getSession(created.sessionId),
      );
      // A server whose error message echoes a secret.
      const echo = await startDoubleServer((_req, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: { code: 'invalid_request', message: `bad ${sess.apiKey} ${created.humanUrl}` },
          }),
        );
      });
      try {
        await attempt(() =>
          createSessClient({
            origin: echo.origin,
            credential: () => sess.apiKey,
            allowInsecureLocalhost: true,
          }).getSession(created.sessionId),
        );
      } finally {
        await echo.close();
      }
      // A server that puts secrets in the error code and pointer.
      const sly = await startDoubleServer((_req, res) => {
        res.writeHead(422, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ error: { code: sess.apiKey, message: 'x', field: `/${created.humanUrl}` } }),
        );
      });
      try {
        await attempt(() =>
          createSessClient({
            origin: sly.origin,
            credential: () => sess.apiKey,
            allowInsecureLocalhost: true,
          }).getSession(created.sessionId),
        );
      } finally {
        await sly.close();
      }
      // A body whose member names carry secrets.
      sess.faults.malformed('get', { body: JSON.stringify({ [sess.apiKey]: 1, id: 5 }) });
      await attempt(() => client.getSession(created.sessionId));
      const raw = sess.sessions.get(created.sessionId)!.view;
      const bad = JSON.stringify({
        ...raw,
        responses: [{ ...raw.responses[0]!, answer: { action: 'approve', values: { [sess.apiKey]: 1 } } }],
      }).replace(/:1\}\}/, ':1e400}}');
      sess.faults.malformed('get', { body: bad });
      const leaky = await client.getSession(created.sessionId).catch((e: Error) => e);
      errors.push(leaky);
      expect((leaky as Error).message).toMatch(/at responses\.0\.answer\.values\./);
      // A malformed body that contains the link and the answer value.
      sess.faults.malformed('get', {
        body: JSON.stringify({ id: created.humanUrl, answer: SECRET_ANSWER_VALUE }),
      });
      await attempt(() => client.getSession(created.sessionId));
      // An origin with credentials in it.
      await attempt(async () =>
        createSessClient({
          origin: `https://user:${sess.apiKey}@api.sess.si`,
          credential: () => sess.apiKey,
        }),
      );
    });

    expect(errors.length).toBeGreaterThanOrEqual(20);
    for (const error of errors) {
      const seen = `${inspect(error, { depth: 8, showHidden: true })} ${JSON.stringify(error)} ${String(error)}`;
      for (const secret of secrets)
        expect(seen, `an error leaks a secret: ${(error as Error).message}`).not.toContain(secret);
      if (!(error instanceof TypeError)) expect(error).toBeInstanceOf(SessApiError);
    }
    for (const secret of secrets) expect(output).not.toContain(secret);
    expect(output).toBe('');
  });
});

describe('edge-safe', () => {
  it('src/sess imports no node: module and nothing from @modelcontextprotocol', () => {
    const dir = join(import.meta.dirname, '../../src/sess');
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    expect(files).toEqual(
      expect.arrayContaining(['client.ts', 'receipt.ts', 'origin.ts', 'errors.ts', 'index.ts']),
    );
    for (const file of files) {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(text, file).not.toMatch(/from\s+['"]node:|import\(\s*['"]node:|require\(/);
      expect(text, file).not.toMatch(/@modelcontextprotocol\//);
      const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      expect(code, file).not.toMatch(/\bprocess\.|\bBuffer\b/);
    }
  });
});
