/**
 * Driving an MCP Inspector CLI (found with `findOutsideTool`) the way the outside checks do: one
 * CLI call runs to its end and gives its exit code, stdout and stderr; the JSON it printed is read
 * from stdout; the `tools/call` arguments are built from the tool's name and `key=value` pairs.
 *
 * Which CLI, which transport and which server it talks to are the suite's; this module neither
 * finds nor installs a CLI.
 *
 * @example
 * ```ts
 * const created = await runInspector(process.execPath, [cli, ...target, ...toolCall('sess_request', `interaction=${json}`)]);
 * expect(created.code, created.err).toBe(0);
 * const { structuredContent } = printedJson(created.out);
 * ```
 */
import { execFile } from 'node:child_process';

/** One CLI call's end: the exit code (0 on success) and what it printed. */
export interface InspectorRun {
  code: number;
  out: string;
  err: string;
}

/** Run `file args` to its end (killed after a minute); resolves on any exit, never rejects. */
export function runInspector(
  file: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<InspectorRun> {
  return new Promise((resolve) => {
    execFile(file, args, { ...options, timeout: 60_000 }, (error, out, err) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, out, err }),
    );
  });
}

/** The JSON result the CLI printed (from the first `{` on stdout to its end). */
export function printedJson(out: string): Record<string, unknown> {
  return JSON.parse(out.slice(out.indexOf('{'))) as Record<string, unknown>;
}

/** The CLI arguments of `tools/call name` with `--tool-arg` and each `key=value` pair. */
export function toolCall(name: string, ...toolArgs: string[]): string[] {
  return ['--method', 'tools/call', '--tool-name', name, '--tool-arg', ...toolArgs];
}

/** The interaction a printed `sess_request` result holds. */
export function printedInteraction(out: string): { handle: string; humanUrl: string } {
  return (printedJson(out).structuredContent as { interaction: { handle: string; humanUrl: string } })
    .interaction;
}
