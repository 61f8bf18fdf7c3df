/**
 * The short server instructions: at most 512 UTF-16 code units (JavaScript `length`, how Mastra
 * cuts them), holding the essentials (show the link, wait in bounded calls, the wake rule under
 * `/6`, act only on the verified answer, complete) in words that survive a prefixed tool name.
 * Chosen by the HTTP handler's `instructions` option and the stdio server's
 * `SESS_MCP_INSTRUCTIONS`, never by the client's name; a bad value is refused naming it.
 *
 * Real parts: the HTTP handler in a real `node:http` server with an MCP client, and the built
 * `sess-mcp` bin as a child process.
 */
import { describe, expect, it } from 'vitest';
import { INSTRUCTIONS_FORM_RULE } from '../../src/core/contract/rules.js';
import {
  SERVER_INSTRUCTIONS,
  SHORT_INSTRUCTIONS_MAX,
  serverInstructions,
} from '../../src/core/contract/tool-definitions.js';
import { createSessMcpHttpHandler } from '../../src/http/index.js';
import { readStdioConfig } from '../../src/stdio/config.js';
import { startHttpHarness } from '../http/harness.js';
import { connectModern, MINIMAL_HTTP_OPTIONS } from '../http/helpers.js';
import { useCleanup } from '../support/cleanup.js';
import { useStdioStack } from '../support/stdio-stack.js';

const cleanup = useCleanup();
const BAD_VALUES: unknown[] = ['Short', 'brief', '', 'full ', 512, null, true];

describe('the short instructions', () => {
  it('fit in 512 UTF-16 code units for both tool sets, and the full ones are unchanged', () => {
    expect(SHORT_INSTRUCTIONS_MAX).toBe(512);
    for (const set of [undefined, 'sess-mcp-tools/6', 'sess-mcp-tools/5'] as const) {
      const short = serverInstructions(set, 'short');
      expect(short.length, String(set)).toBeLessThanOrEqual(SHORT_INSTRUCTIONS_MAX);
      // A host that cuts at 512 cuts nothing: the last sentence ends the text.
      expect(short.slice(0, SHORT_INSTRUCTIONS_MAX)).toBe(short);
    }
    expect(serverInstructions(undefined, 'full')).toBe(SERVER_INSTRUCTIONS);
    expect(serverInstructions()).toBe(SERVER_INSTRUCTIONS);
    expect(SERVER_INSTRUCTIONS.length).toBeGreaterThan(SHORT_INSTRUCTIONS_MAX);
  });

  it('say the essentials, the wake rule only under /6, and that a host may prefix the tool names', () => {
    const six = serverInstructions(undefined, 'short');
    const five = serverInstructions('sess-mcp-tools/5', 'short');
    for (const text of [six, five]) {
      expect(text).toContain('interaction.humanUrl'); // show the link
      expect(text).toMatch(/sess_response to wait/); // wait
      expect(text).toMatch(/re-wait up to three times/); // bounded
      expect(text).toMatch(/ask the person to say continue/);
      expect(text).toMatch(/only on state "answered" \(validate the values\)/); // verified answer
      expect(text).toMatch(/then call sess_complete/); // complete
      expect(text).toMatch(/host prefix \(e\.g\. sess_sess_request\)/); // Mastra's renaming
    }
    expect(six).toMatch(/wake\.command, run it in the background and end your turn/);
    expect(five).not.toContain('wake');
  });

  it('the rule takes "full" and "short" only', () => {
    expect(INSTRUCTIONS_FORM_RULE.test('full')).toBe(true);
    expect(INSTRUCTIONS_FORM_RULE.test('short')).toBe(true);
    for (const value of BAD_VALUES) expect(INSTRUCTIONS_FORM_RULE.test(value), String(value)).toBe(false);
  });
});

describe('createSessMcpHttpHandler({ instructions })', () => {
  it("sends the short instructions with 'short', the full ones by default", async () => {
    for (const [form, expected] of [
      ['short', serverInstructions(undefined, 'short')],
      [undefined, SERVER_INSTRUCTIONS],
    ] as const) {
      const h = await startHttpHarness(form === undefined ? {} : { instructions: form });
      cleanup.push(() => h.close());
      h.principal('instructions-token');
      const client = await connectModern(h.server.url, { authorization: 'Bearer instructions-token' });
      cleanup.push(() => client.close());
      expect(client.getInstructions()).toBe(expected);
    }
  });

  it.each(BAD_VALUES)('refuses instructions: %j naming the option', (value) => {
    expect(() => createSessMcpHttpHandler({ ...MINIMAL_HTTP_OPTIONS, instructions: value as never })).toThrow(
      new TypeError('createSessMcpHttpHandler: option "instructions" must be "full" or "short".'),
    );
  });
});

describe('SESS_MCP_INSTRUCTIONS (stdio)', () => {
  const stdio = useStdioStack();
  const linux = { platform: 'linux', homedir: () => '/home/me' };

  it('reads full and short; unset and empty mean full; anything else is refused naming the variable', () => {
    expect(readStdioConfig({ HOME: '/h', SESS_MCP_INSTRUCTIONS: 'short' }, linux).instructions).toBe('short');
    expect(readStdioConfig({ HOME: '/h', SESS_MCP_INSTRUCTIONS: 'full' }, linux).instructions).toBe('full');
    expect(readStdioConfig({ HOME: '/h' }, linux).instructions).toBeUndefined();
    expect(readStdioConfig({ HOME: '/h', SESS_MCP_INSTRUCTIONS: '' }, linux).instructions).toBeUndefined();
    for (const value of ['Short', 'brief', ' short']) {
      expect(() => readStdioConfig({ HOME: '/h', SESS_MCP_INSTRUCTIONS: value }, linux)).toThrow(
        'SESS_MCP_INSTRUCTIONS must be full or short, or unset for full.',
      );
    }
  });

  it('the sess-mcp process sends the short instructions with SESS_MCP_INSTRUCTIONS=short', async () => {
    const stack = await stdio.start({ client: 'v1', env: { SESS_MCP_INSTRUCTIONS: 'short' } });
    expect(stack.server.serverInfo().instructions).toBe(serverInstructions(undefined, 'short'));
  });
});
