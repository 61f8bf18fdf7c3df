/**
 * The lifecycle over stdio: the v1 SDK client (`@modelcontextprotocol/sdk`) drives a real
 * `sess-mcp` child built from this checkout, on a file-store state directory, against the local
 * Sess runtime; a restart is SIGKILL and a new child on the same state directory. The person
 * answers and sees the withdrawal in Chromium. The scenario is `lifecycle.ts`'s.
 *
 * The cap is read beside the server through the file store's own `countUnfinished()` for the
 * binding the server wrote its records under.
 */
import { expect, it } from 'vitest';
import { createFileHandleStore, openProfileRecords } from '../../src/store/file/index.js';
import { describeWithChromium } from '../page/browser-harness.js';
import { useStdioStack } from '../support/stdio-stack.js';
import { type LifecycleFace, runLifecycle } from './lifecycle.js';
import { usePerson } from './person.js';

const PROFILE = 'default';

describeWithChromium('the lifecycle over stdio (v1 SDK client, sess-mcp child, file store)', () => {
  const stdio = useStdioStack();
  const person = usePerson();

  it('lists both after a restart, returns the answer given after it, and withdraws the other', async () => {
    const stack = await stdio.start({ client: 'v1' });
    const records = openProfileRecords({ stateDir: stack.stateDir, profile: PROFILE });
    const stores = createFileHandleStore({ stateDir: stack.stateDir, profile: PROFILE });
    const face: LifecycleFace = {
      name: 'stdio',
      sess: stack.sess,
      audit: stdio.audit,
      call: (tool, args) => stack.server.callTool(tool, args),
      async restart() {
        const killed = stack.server.pid;
        await stack.restart({ kill: true });
        expect(stack.server.pid).not.toBe(killed);
      },
      async unfinished() {
        // Every record of this test has the one stdio binding; read it from the records.
        const listed = await records.list();
        const bindings = new Set<string>();
        let binding: Parameters<typeof stores.forBinding>[0] | undefined;
        for (const summary of listed) {
          const current = await records.read(summary.handle);
          binding = current!.record.binding;
          bindings.add(JSON.stringify(binding));
        }
        expect(bindings.size).toBe(1);
        return stores.forBinding(binding!).countUnfinished();
      },
      record: (handle) => records.read(handle),
    };
    await runLifecycle(face, person);
  }, 120_000);
});
