/**
 * The cold-start baseline (measure 5): a bare `serveStdio` server with seven trivial tools (as many as `sess-mcp` lists), each
 * with a small JSON Schema input, bundled the same way as `sess-mcp`.
 *
 * It does nothing but answer; run as a child process by bench/lib/cold-start.ts.
 */
import { fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

serveStdio(() => {
  const server = new McpServer({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: {} } });
  for (const name of ['one', 'two', 'three', 'four', 'five', 'six', 'seven']) {
    server.registerTool(
      name,
      {
        description: `Trivial tool ${name}.`,
        inputSchema: fromJsonSchema({
          type: 'object',
          properties: { handle: { type: 'string' }, revision: { type: 'integer' } },
          required: ['handle'],
        }),
      },
      async () => ({ content: [{ type: 'text', text: 'ok' }] }),
    );
  }
  return server;
});
