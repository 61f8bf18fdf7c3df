/**
 * `examples/wake-langgraph.ts` end to end: real LangGraph with `@langchain/mcp-adapters`, the real
 * `sess-mcp` stdio server, the local Sess runtime, a scripted chat model (`recipeStep`). The thread
 * asks, stops at `interrupt()`, and the person rejects on the answer page. The server's watcher
 * sees it and posts the event; the recipe verifies it, resumes the thread with `Command({ resume })`,
 * and the resumed node calls `sess_response` and routes on its verified `response.action`: the
 * thread ends in `rejected` and nothing is shipped.
 */
import type { MemorySaver } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { startLangGraphWake } from '../../examples/wake-langgraph.js';
import { ScriptedChatModel } from '../hosts/scripted-chat-model.js';
import { createStandInLog } from '../hosts/stand-in-log.js';
import { useSecretsAudit } from '../support/audit.js';
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
const tempDir = useTempDirs('sess-mcp-recipe-langgraph-');

/** Every byte the checkpointer holds, as text (what its store would hold at rest). */
function checkpointBytes(saver: MemorySaver): string {
  const parts: string[] = [];
  for (const namespaces of Object.values(saver.storage))
    for (const checkpoints of Object.values(namespaces))
      for (const [checkpoint, metadata] of Object.values(checkpoints))
        parts.push(Buffer.from(checkpoint).toString('utf8'), Buffer.from(metadata).toString('utf8'));
  for (const writes of Object.values(saver.writes))
    for (const [, , value] of Object.values(writes)) parts.push(Buffer.from(value).toString('utf8'));
  return parts.join('\n');
}

describe.skipIf(!recipesRunnable())('wake recipe: LangGraph', () => {
  it('the person rejects: the webhook resumes the thread, sess_response says so, it ends in rejected', async () => {
    const audit = audits.current;
    const run = await startRecipeRun(open, audit, await tempDir());
    const recipe = await startLangGraphWake({
      ...run.recipeOptions,
      model: new ScriptedChatModel(createStandInLog(), recipeStep),
    });
    const saver = recipe.graph.checkpointer as MemorySaver;
    audit.watch(() => checkpointBytes(saver), 'checkpoints at rest');
    const config = { configurable: { thread_id: RUN_ID } };

    // The thread asks, shows the link, and stops at interrupt(): nothing runs until the webhook.
    const handle = await startWaiting(run, open, recipe);
    expect((await recipe.graph.getState(config)).next).toEqual(['wait_for_answer']);

    await run.reject();
    expect(await within(recipe.finished(RUN_ID), 30_000, 'the thread to end')).toBe('reject');

    // Woken by the webhook, which came before any sess_response call: the answer was read after
    // it, never from it.
    await expectWokenByWebhook(run, handle);

    // The thread's path, read from its checkpoints: through wait_for_answer to rejected.
    const nodes: string[] = [];
    for await (const snapshot of recipe.graph.getStateHistory(config)) nodes.unshift(...snapshot.next);
    expect(nodes).toEqual(['__start__', 'agent', 'tools', 'show_link', 'wait_for_answer', 'rejected']);
    const final = await recipe.graph.getState(config);
    expect(final.values).toMatchObject({ decision: 'reject', resumedBy: `evt_${handle}_1` });
    expect(final.next).toEqual([]);
    expect(run.shipped).toEqual([]);
    expect(run.sess.sessions.list().map((s) => s.view.status)).toEqual(['completed']);

    await expectReplayAndForgeryIgnored(run, recipe.receiverUrl, handle);
  }, 60_000);
});
