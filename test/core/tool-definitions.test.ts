import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEXT_LIMITS } from '../../src/core/contract/limits.js';
import { REWAIT_LINE } from '../../src/core/contract/result.js';
import { TOOL_NAMES } from '../../src/core/contract/schemas.js';
import {
  ASK_EXAMPLE,
  COMPLETE_RULE,
  LIST_DESCRIPTION,
  LIST_INSTRUCTION,
  listToolDefinitions,
  REWAIT_RULE,
  SCHEDULE_RULE,
  SERVER_INSTRUCTIONS,
  serverInstructions,
  TOOL_DEFINITIONS,
  TOOLS_CONTRACT_VERSION,
  WITHDRAW_DESCRIPTION,
  WITHDRAW_INSTRUCTION,
} from '../../src/core/contract/tool-definitions.js';
import { askToSurface, parseToolArguments } from '../../src/core/contract/validate.js';
import { repoRoot } from '../support/repo-files.js';

describe('the agent-facing rules', () => {
  it('the sess_complete rule is in the instructions and in the sess_response and sess_complete descriptions', () => {
    expect(COMPLETE_RULE).toMatch(/call sess_complete next unless you have a follow-up/);
    expect(COMPLETE_RULE).toMatch(/only to show a follow-up, call sess_publish/);
    expect(SERVER_INSTRUCTIONS).toContain(COMPLETE_RULE);
    expect(TOOL_DEFINITIONS.sess_response.description).toContain(COMPLETE_RULE);
    expect(TOOL_DEFINITIONS.sess_complete.description).toContain(COMPLETE_RULE);
  });

  it('the re-wait rule is in the instructions, the sess_response description and the re-wait line', () => {
    for (const text of [REWAIT_RULE, REWAIT_LINE]) {
      expect(text).toMatch(/call sess_response again/i);
      expect(text).toMatch(/up to three times after your first call/);
      expect(text).toMatch(/say continue/);
    }
    expect(SERVER_INSTRUCTIONS).toContain(REWAIT_RULE);
    expect(TOOL_DEFINITIONS.sess_response.description).toContain(REWAIT_RULE);
  });

  it('the scheduling rule sits beside the re-wait rule, bounded, and names no host', () => {
    expect(SCHEDULE_RULE).toMatch(/if you can schedule a later turn for yourself/);
    expect(SCHEDULE_RULE).toMatch(/call\w* sess_response again with the same handle and revision/);
    expect(SCHEDULE_RULE).toMatch(/instead of waiting for the person to say continue/);
    expect(SCHEDULE_RULE).toMatch(
      /stop once a result is not "waiting" or "needs_resume" or once expiresAt has passed/,
    );
    expect(SCHEDULE_RULE).toMatch(/wait longer before each try/);
    expect(SCHEDULE_RULE).toMatch(/at most three/);
    expect(SCHEDULE_RULE).not.toMatch(/ScheduleWakeup|CronCreate|Claude|Codex/);
    for (const text of [SERVER_INSTRUCTIONS, TOOL_DEFINITIONS.sess_response.description]) {
      expect(text).toContain(`${REWAIT_RULE}\n\n${SCHEDULE_RULE}`);
    }
  });

  it('the instructions name the contract and say every result carries next', () => {
    expect(TOOLS_CONTRACT_VERSION).toBe('sess-mcp-tools/6');
    expect(SERVER_INSTRUCTIONS).toContain(`Sess (${TOOLS_CONTRACT_VERSION})`);
    expect(SERVER_INSTRUCTIONS).toMatch(/carries "next" in its structured content/);
    expect(serverInstructions('sess-mcp-tools/5')).toContain(REWAIT_RULE);
    expect(serverInstructions('sess-mcp-tools/5')).toContain(SCHEDULE_RULE);
    expect(serverInstructions('sess-mcp-tools/5')).toContain(COMPLETE_RULE);
  });

  it('sess_list: when to list, read-only, no link or answer values, answers from sess_response', () => {
    for (const text of [LIST_DESCRIPTION, LIST_INSTRUCTION]) {
      expect(text).toMatch(/new conversation/);
      expect(text).toMatch(/lost a handle|losing a handle/);
      expect(text).toMatch(/answered yet/);
      expect(text).toMatch(/read-only/i);
      expect(text).toMatch(/never returns (the link or any answer values|links or answer values)/);
      expect(text).toMatch(/sess_response/);
    }
  });

  it('sess_withdraw: when to withdraw, expected_revision, and an answer is never lost', () => {
    for (const text of [WITHDRAW_DESCRIPTION, WITHDRAW_INSTRUCTION]) {
      expect(text).toMatch(/moot/);
      expect(text).toMatch(/chose another path/);
      expect(text).toMatch(/the person said so in the chat/);
      expect(text).toMatch(/expected_revision/);
      expect(text).toMatch(/already answered, it refuses/);
      expect(text).toMatch(/call sess_response/);
    }
    expect(WITHDRAW_DESCRIPTION).toMatch(/An answer is never lost/);
  });

  it('sess_ask carries one complete good call that is valid', () => {
    const description = TOOL_DEFINITIONS.sess_ask.description;
    expect(description).toContain(JSON.stringify(ASK_EXAMPLE));
    const args = parseToolArguments('sess_ask', JSON.parse(JSON.stringify(ASK_EXAMPLE)));
    expect(askToSurface(args).title).toBe(ASK_EXAMPLE.question);
  });

  it('sess_request and sess_ask say when to use which', () => {
    expect(TOOL_DEFINITIONS.sess_request.description).toMatch(/use sess_ask/);
    expect(TOOL_DEFINITIONS.sess_ask.description).toMatch(/use sess_request instead/);
  });

  it('sess_request and sess_ask tell the agent to show the link at once', () => {
    expect(TOOL_DEFINITIONS.sess_request.description).toMatch(/Show the person the humanUrl/);
    expect(TOOL_DEFINITIONS.sess_ask.description).toMatch(/Show the person the humanUrl/);
    expect(TOOL_DEFINITIONS.sess_ask.description).toMatch(/never waits/);
  });
});

describe('definitions', () => {
  it('lists every tool in order with titles and annotations', () => {
    expect(listToolDefinitions().map((tool) => tool.name)).toEqual([...TOOL_NAMES]);
    for (const tool of listToolDefinitions()) {
      expect(tool.title.length).toBeGreaterThan(0);
      expect(tool.annotations.title).toBe(tool.title);
      expect(tool.description.length).toBeGreaterThan(100);
    }
    expect(TOOL_DEFINITIONS.sess_response.annotations.readOnlyHint).toBe(true);
    expect(TOOL_DEFINITIONS.sess_request.annotations.readOnlyHint).toBe(false);
    expect(TOOL_DEFINITIONS.sess_complete.annotations.idempotentHint).toBe(true);
  });

  it("pins every tool's four hints, and docs/tools.md's table of them says the same", () => {
    const hints = Object.fromEntries(
      listToolDefinitions().map(({ name, annotations }) => [
        name,
        [
          annotations.readOnlyHint,
          annotations.destructiveHint,
          annotations.idempotentHint,
          annotations.openWorldHint,
        ],
      ]),
    );
    // readOnly, destructive, idempotent, openWorld: why each is what it is is docs/tools.md's.
    expect(hints).toEqual({
      sess_request: [false, false, false, true],
      sess_response: [true, false, true, true],
      sess_publish: [false, false, true, true],
      sess_complete: [false, false, true, true],
      sess_ask: [false, false, false, true],
      sess_list: [true, false, true, false],
      sess_withdraw: [false, true, true, true],
    });
    const docs = readFileSync(join(repoRoot, 'docs/tools.md'), 'utf8');
    const section = docs.slice(docs.indexOf('### Annotations, and why'));
    const rows = [
      ...section.matchAll(
        /^\| `(sess_\w+)` \| (true|false) \| (true|false) \| (true|false) \| (true|false) \|$/gm,
      ),
    ];
    expect(Object.fromEntries(rows.map((r) => [r[1], r.slice(2, 6).map((v) => v === 'true')]))).toEqual(
      hints,
    );
    // The read-only tools are the ones a read-only plan can still call.
    expect(Object.keys(hints).filter((name) => hints[name]![0])).toEqual(['sess_response', 'sess_list']);
  });

  it('sess_withdraw is destructive, and its schema is closed with a reason of at most 160 code points', () => {
    const { annotations, inputSchema, description } = TOOL_DEFINITIONS.sess_withdraw;
    expect(annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false, idempotentHint: true });
    expect(inputSchema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      required: ['handle', 'expected_revision'],
      properties: { reason: { type: 'string', minLength: 1, maxLength: 160 } },
    });
    expect(description).toContain('ANSWER_ARRIVED');
    expect(description).toContain('sess_response');
  });

  it('no input schema names an API origin, key, workspace, Session ID or callback URL', () => {
    const forbidden = /"(api_?origin|origin|api_?key|key|workspace(_id)?|session_?id|callback(_url)?)"\s*:/i;
    for (const tool of listToolDefinitions()) {
      const properties = JSON.stringify(tool.inputSchema.properties);
      expect(properties).not.toMatch(forbidden);
    }
  });

  it('every person-read text property carries its purpose, limit and an example', () => {
    const limits = new Set<number>(Object.values(TEXT_LIMITS));
    let checked = 0;
    const visit = (node: unknown, where: string): void => {
      if (Array.isArray(node)) {
        for (let index = 0; index < node.length; index++) visit(node[index], `${where}/${index}`);
        return;
      }
      if (node === null || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
      for (const [name, property] of Object.entries(properties ?? {})) {
        if (
          property.type === 'string' &&
          typeof property.maxLength === 'number' &&
          limits.has(property.maxLength)
        ) {
          checked++;
          expect(property.description, `${where}/${name}`).toEqual(
            expect.stringContaining(String(property.maxLength)),
          );
          expect(
            Array.isArray(property.examples) && property.examples.length > 0,
            `${where}/${name} examples`,
          ).toBe(true);
        }
      }
      for (const [key, value] of Object.entries(schema)) visit(value, `${where}/${key}`);
    };
    for (const tool of listToolDefinitions()) visit(tool.inputSchema, tool.name);
    expect(checked).toBeGreaterThanOrEqual(20);
  });

  it('keeps tools/list reasonably small', () => {
    const bytes = JSON.stringify(listToolDefinitions()).length;
    expect(bytes).toBeLessThan(60_000);
  });
});
