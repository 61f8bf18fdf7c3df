/**
 * What the framework rows that drive an agent through a model stand-in share (the OpenAI Agents
 * SDK, Mastra): the server an agent connects to (the built bin behind the stdio tap, or the HTTP
 * endpoint), and a row's run: the flows on one runtime and, beside them, the long-call probe on a
 * runtime, server and stand-in of its own (its unanswered question must not be taken for a flow's,
 * and the row then takes about the probe's 45 s, not the flows' time on top).
 */
import { readFile } from 'node:fs/promises';
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { createSecretsAudit, type SecretsAudit } from '../support/audit.js';
import {
  BEARER,
  type FlowOutcome,
  type HostResult,
  type HostStdioServer,
  hostPlace,
  hostStdioServer,
  keysOnlyAudit,
  readStdioTap,
  requestBodies,
  startHostHttpServer,
  type TappedMessage,
  writeHostResult,
} from './matrix.js';
import { probeLongCall, runFlow } from './run-flow.js';
import { FLOWS, type FlowName } from './script.js';
import type { StandInLog } from './stand-in-log.js';

/** An agent of a framework connected to `sess` through one MCP server, with its own stand-in. */
export interface ConnectedAgent {
  /** One user turn: the agent runs until the script ends it with a text. */
  turn(flow: FlowName): Promise<string>;
  log: StandInLog;
  /** Every JSON-RPC message the framework sent the MCP server. */
  tapped(): Promise<TappedMessage[]>;
  /** What the stdio server wrote to stderr (the framework passes it through to the app's own). */
  serverStderr(): Promise<string>;
}

/** The server side of a {@link ConnectedAgent}: how to read what the framework sent and the server's stderr. */
export type AgentServerTaps = Pick<ConnectedAgent, 'tapped' | 'serverStderr'>;

/** The stdio server a framework starts for `sess` (with more server variables in `env`), and its taps. */
export async function agentStdioServer(
  sess: LocalSess,
  cleanup: Array<() => Promise<void>>,
  name: string,
  env: Record<string, string> = {},
): Promise<{ stdio: HostStdioServer } & AgentServerTaps> {
  const { home } = await hostPlace(cleanup, name);
  const stdio = hostStdioServer(sess, home, { stderr: true, env });
  return {
    stdio,
    tapped: () => readStdioTap(stdio.tap),
    serverStderr: () => readFile(stdio.stderr!, 'utf8').catch(() => ''),
  };
}

/** The HTTP endpoint a framework connects to for `sess`, its bearer header, and its taps. */
export async function agentHttpServer(
  sess: LocalSess,
  cleanup: Array<() => Promise<void>>,
): Promise<{ url: string; headers: Record<string, string> } & AgentServerTaps> {
  const http = await startHostHttpServer(sess);
  cleanup.push(() => http.close());
  return {
    url: http.url,
    headers: { authorization: `Bearer ${BEARER}` },
    tapped: async () => http.messages,
    serverStderr: async () => '',
  };
}

/** What a row's run leaves for its result. */
export interface RowRun {
  host: ConnectedAgent;
  flows: FlowOutcome[];
  callTimeout: string;
  audit: SecretsAudit;
  keysOnly: SecretsAudit;
}

/**
 * Run a row: `connect` makes an agent for a runtime (called twice: the flows' and the probe's).
 * Every secret of both runtimes and the bearer token go to the audits, with the agents' outputs,
 * the server's stderr and every model request.
 */
export async function runRow(
  cleanup: Array<() => Promise<void>>,
  connect: (sess: LocalSess, audit: SecretsAudit) => Promise<ConnectedAgent>,
): Promise<RowRun> {
  const audit = createSecretsAudit();
  audit.secret(BEARER, 'mcp bearer token');
  const [sess, probeSess] = await Promise.all([startLocalSess(), startLocalSess()]);
  cleanup.push(() => sess.close());
  cleanup.push(() => probeSess.close());
  audit.secret(sess.apiKey, 'sess api key');
  audit.secret(probeSess.apiKey, 'sess api key of the probe');
  const [host, probeHost] = await Promise.all([connect(sess, audit), connect(probeSess, audit)]);
  const probe = probeLongCall(probeHost.log, async () => {
    await probeHost.turn('long');
  });
  const flows: FlowOutcome[] = [];
  for (const flow of FLOWS) {
    flows.push(
      await runFlow(sess, flow, host.log, audit, async () => {
        await host.turn(flow);
      }),
    );
  }
  const callTimeout = await probe;
  audit.text(`${await host.serverStderr()}\n${await probeHost.serverStderr()}`, 'sess-mcp stderr');
  const keysOnly = keysOnlyAudit(sess, host.log);
  keysOnly.secret(probeSess.apiKey, 'sess api key of the probe');
  keysOnly.text(requestBodies(probeHost.log), 'model requests of the probe');
  return { host, flows, callTimeout, audit, keysOnly };
}

/** The tool names a row's model was offered, sorted. */
export function offeredTools(log: StandInLog): string[] {
  return [...new Set(log.requests.flatMap((r) => r.toolNames))].sort();
}

/** Write a row's result and its model log under `.tmp/hosts/`. */
export async function writeRowResult(slug: string, result: HostResult, log: StandInLog): Promise<void> {
  await writeHostResult(slug, result);
  await writeHostResult(`${slug}.model-log`, log.requests as never);
}
