/**
 * A real answered record to store: made by one `sess_request`, a person's answer and one
 * `sess_response` through the HTTP handler against the local runtime, captured as the store saw it.
 *
 * The store benchmarks write these exact bytes; nothing here measures.
 */
import type { InteractionRecord } from '../../src/index.js';
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
