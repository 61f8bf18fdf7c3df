/**
 * Real records to store: an answered one made by one `sess_request`, a person's answer and one
 * `sess_response` through the HTTP handler against the local runtime, captured as the store saw it;
 * and a set of one record per state a listing shows, made through the engine.
 *
 * The store benchmarks write these exact bytes (measure 8 copies under new handles and times);
 * nothing here measures.
 */
import {
  createMemoryHandleStore,
  createSessEngine,
  type InteractionRecord,
  type InteractionResult,
  type StdioBinding,
  type ToolName,
} from '../../src/index.js';
import { createSessClient } from '../../src/sess/index.js';
import { startLocalSess } from '../../src/testing/index.js';
import { callTool, SURFACE, sessHandler } from './mcp.js';

/** An answered record as the engine saves it. */
export async function sampleRecord(): Promise<InteractionRecord> {
  const sess = await startLocalSess();
  const rig = sessHandler(sess.origin, sess.workspaceId, sess.apiKey);
  try {
    const created = await callTool(rig.handler.fetch, 'sess_request', { interaction: SURFACE });
    await sess.submitAnswer(created.humanUrl!, { action: 'go', values: {} });
    const answered = await callTool(rig.handler.fetch, 'sess_response', {
      handle: created.handle,
      revision: 1,
      wait_ms: 5_000,
    });
    if (answered.state !== 'answered') throw new Error(`expected answered, got ${answered.state}`);
    const record = rig.lastSaved();
    if (record === undefined) throw new Error('no record saved');
    return JSON.parse(JSON.stringify(record)) as InteractionRecord;
  } finally {
    await rig.handler.close();
    await sess.close();
  }
}

/** One record of each state a listing profile is made of, all of one stdio binding. */
export interface SampleRecordSet {
  binding: StdioBinding;
  /** Unfinished: a Session waiting for the person. */
  waiting: InteractionRecord;
  /** Unfinished: a verified answer waiting for the agent. */
  answered: InteractionRecord;
  /** Finished: answered, then completed by the agent. */
  completed: InteractionRecord;
  /** Finished: withdrawn before an answer. */
  withdrawn: InteractionRecord;
}

/**
 * Real records of four states, made through the engine against the local runtime (requests, a
 * person's answer, `sess_response`, `sess_complete` and `sess_withdraw`) over a memory store, read
 * back as the store holds them. `binding` is the stdio binding they belong to.
 */
export async function sampleRecordSet(): Promise<SampleRecordSet> {
  const sess = await startLocalSess();
  const binding: StdioBinding = {
    kind: 'stdio',
    profile: 'default',
    apiOrigin: sess.origin,
    credentialGeneration: 'bench-1',
  };
  const store = createMemoryHandleStore().forBinding(binding);
  const client = createSessClient({
    origin: sess.origin,
    credential: () => sess.apiKey,
    allowInsecureLocalhost: true,
  });
  const engine = createSessEngine({ authority: { resolve: async () => ({ binding, sess: client, store }) } });
  const ok = async (tool: ToolName, args: unknown): Promise<InteractionResult> => {
    const result = await engine.call(tool, args);
    const interaction = result.structuredContent?.interaction as InteractionResult | undefined;
    if (result.isError === true || interaction === undefined) throw new Error(`${tool} failed`);
    return interaction;
  };
  const recordOf = async (handle: string): Promise<InteractionRecord> => {
    const found = await store.get(handle);
    if (found === undefined) throw new Error('no record saved');
    return JSON.parse(JSON.stringify(found.record)) as InteractionRecord;
  };
  try {
    const waiting = await ok('sess_request', { interaction: SURFACE });
    const answering = await ok('sess_request', { interaction: SURFACE });
    await sess.submitAnswer(answering.humanUrl!, { action: 'go', values: {} });
    const answered = await ok('sess_response', { handle: answering.handle, revision: 1, wait_ms: 5_000 });
    if (answered.state !== 'answered') throw new Error(`expected answered, got ${answered.state}`);
    const answeredRecord = await recordOf(answering.handle);
    await ok('sess_complete', {
      handle: answering.handle,
      expected_revision: 1,
      response_event_id: answered.response?.eventId,
    });
    const withdrawing = await ok('sess_request', { interaction: SURFACE });
    await ok('sess_withdraw', { handle: withdrawing.handle, expected_revision: 1 });
    const set: SampleRecordSet = {
      binding,
      waiting: await recordOf(waiting.handle),
      answered: answeredRecord,
      completed: await recordOf(answering.handle),
      withdrawn: await recordOf(withdrawing.handle),
    };
    for (const name of ['waiting', 'answered', 'completed', 'withdrawn'] as const) {
      if (set[name].state.kind !== name) throw new Error(`expected ${name}, got ${set[name].state.kind}`);
    }
    return set;
  } finally {
    await sess.close();
  }
}
