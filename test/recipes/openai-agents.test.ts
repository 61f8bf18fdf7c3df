/**
 * `examples/wake-openai-agents.ts` end to end: the real OpenAI Agents SDK (`OpenAIResponsesModel`
 * over `new OpenAI({ baseURL })` pointed at the Responses stand-in, `MCPServerStdio`), the real
 * `sess-mcp` stdio server, the local Sess runtime. The run asks, calls `wait_for_person` and stops
 * at its approval; the app keeps the sealed `RunState`. The person rejects on the answer page; the
 * server's watcher posts the event; the recipe verifies it, opens the saved state with
 * `RunState.fromString`, approves and runs on, and `wait_for_person` calls `sess_response` and acts
 * on its verified `response.action`: nothing ships, and the run ends saying so.
 *
 * Node 22 only (the SDK's requirement): the `recipes` project of `vitest.config.ts`.
 */
import { OpenAI } from 'openai';
import { describe, expect, it } from 'vitest';
import { type PausedRun, startOpenAIAgentsWake } from '../../examples/wake-openai-agents.js';
import { openState } from '../../examples/wake-sealed-state.js';
import { startResponsesStandIn } from '../hosts/responses-stand-in.js';
import { createSecretsAudit, useSecretsAudit } from '../support/audit.js';
import { useCleanup } from '../support/cleanup.js';
import { useTempDirs } from '../support/temp-dirs.js';
import { recipesRunnable } from './frameworks.js';
import {
  expectReplayAndForgeryIgnored,
  expectWokenByWebhook,
  RUN_ID,
  startRecipeRun,
  startWaiting,
  within,
} from './harness.js';
import { recipeStep } from './script.js';

const audits = useSecretsAudit();
const open = useCleanup();
const tempDir = useTempDirs('sess-mcp-recipe-openai-agents-');

describe.skipIf(!recipesRunnable())('wake recipe: OpenAI Agents SDK', () => {
  it('the person rejects: the webhook resumes the saved RunState, sess_response says so, nothing ships', async () => {
    const audit = audits.current;
    const run = await startRecipeRun(open, audit, await tempDir());
    const standIn = await startResponsesStandIn(recipeStep);
    open.push(standIn);
    // Every sealed state the recipe kept, as its store would hold them.
    const kept = new Map<string, PausedRun>();
    const sealed: Uint8Array[] = [];
    audit.watch(() => sealed.map((bytes) => Buffer.from(bytes).toString('utf8')), 'saved run states');
    const recipe = await startOpenAIAgentsWake({
      ...run.recipeOptions,
      openai: new OpenAI({ baseURL: standIn.baseUrl, apiKey: 'stand-in-provider-key-not-secret' }),
      model: 'stand-in',
      pausedRuns: {
        get: (handle) => kept.get(handle),
        set: (handle, paused) => {
          sealed.push(paused.sealedState);
          kept.set(handle, paused);
        },
        delete: (handle) => kept.delete(handle),
      },
    });

    // The run asks, calls wait_for_person, and stops at its approval: its state is kept, sealed.
    const handle = await startWaiting(run, open, recipe);
    expect(standIn.log.calls().map((c) => c.tool)).toEqual(['sess_request', 'wait_for_person']);
    expect([...kept.keys()]).toEqual([handle]);
    // The saved state does hold the link, which is why it is sealed.
    const opened = new TextDecoder().decode(
      openState(kept.get(handle)!.sealedState, run.recipeOptions.stateKey),
    );
    expect(opened.includes(run.links[0]!)).toBe(true);

    await run.reject();
    const finished = await within(recipe.finished(RUN_ID), 30_000, 'the run to end');
    expect(finished).toEqual({
      status: 'finished',
      decision: 'reject',
      finalOutput: 'Done: The person rejected (verified by Sess): nothing was shipped.',
    });

    // Woken by the webhook, which came before any sess_response call: the answer was read after
    // it, never from it; the model saw the decision only as wait_for_person's result.
    await expectWokenByWebhook(run, handle);
    expect(standIn.log.calls().map((c) => c.tool)).toEqual(['sess_request', 'wait_for_person']);
    expect(kept.size).toBe(0);
    expect(run.shipped).toEqual([]);
    expect(run.sess.sessions.list().map((s) => s.view.status)).toEqual(['completed']);

    await expectReplayAndForgeryIgnored(run, recipe.receiverUrl, handle);

    // The model API got the link (the tool result), never the key, the webhook secret or the state key.
    const keysOnly = createSecretsAudit();
    keysOnly.secret(run.sess.apiKey, 'sess api key');
    keysOnly.secret(run.webhookSecret, 'webhook secret');
    keysOnly.text(standIn.log.requests.map((r) => r.body).join('\n'), 'model requests');
    keysOnly.assertClean();
  }, 60_000);
});
