/**
 * One run of a CLI host driven by the Chat Completions stand-in, in two lanes side by side so a
 * host's wall time is its flows or its 45 s long call, whichever is longer, not their sum: the
 * flows lane runs every flow of the matrix in order, the probe lane runs the long call. Each lane
 * has its own local runtime, stand-in, `HOME`, project and stdio server (the person and the
 * flows' end states read "the new Session" of a runtime, which a concurrent probe would muddle).
 *
 * It knows nothing of a particular host: the suite writes the host's configuration and runs one
 * prompt. It does not judge the run; the suite builds its {@link HostResult} from what it returns.
 */
import { type LocalSess, startLocalSess } from '../../src/testing/index.js';
import { createSecretsAudit, type SecretsAudit } from '../support/audit.js';
import { startChatCompletionsStandIn } from './chat-completions-stand-in.js';
import {
  type FlowOutcome,
  type HostPlace,
  type HostStdioServer,
  type HostStdioServerOptions,
  hostPlace,
  hostStdioServer,
  keysOnlyAudit,
  readTree,
  requestBodies,
} from './matrix.js';
import { MARKERS, probeLongCall, runFlow } from './run-flow.js';
import { FLOWS, type FlowName, promptFor } from './script.js';
import type { StandInLog } from './stand-in-log.js';

/** A model API stand-in a lane's host is pointed at (Chat Completions by default). */
export interface ModelStandIn {
  /** The base URL the host's provider takes. */
  readonly baseUrl: string;
  readonly log: StandInLog;
  /** Requests the stand-in does not serve (`METHOD path`). */
  readonly unserved: string[];
  close(): Promise<void>;
}

/** One lane: a runtime, a stand-in, a place and the stdio server the host is configured with. */
export interface ChatHostLane {
  sess: LocalSess;
  standIn: ModelStandIn;
  place: HostPlace;
  server: HostStdioServer;
  /** What the host printed (stdout and stderr of every run). */
  outputs: string[];
}

/** What a suite says of its host. */
export interface ChatHostOptions {
  /** Goes into the temporary directories' names. */
  name: string;
  /** The model API the host speaks, if not Chat Completions. */
  startStandIn?: () => Promise<ModelStandIn>;
  /** What the suite adds to the stdio server (`SESS_MCP_MAX_WAIT_MS`, …). */
  server?: HostStdioServerOptions;
  /** Write the host's configuration into the lane's place. */
  configure(lane: ChatHostLane): Promise<void>;
  /** Run the host once on `prompt` in the lane; rejects on a failed run. */
  exec(lane: ChatHostLane, prompt: string, flow: FlowName): Promise<{ out: string; err: string }>;
}

/** The outcome of both lanes. */
export interface ChatHostRun {
  /** The flows lane: its log is the one the result's columns are read from. */
  lane: ChatHostLane;
  probe: ChatHostLane;
  flows: FlowOutcome[];
  callTimeout: string;
  /** Holds the key and the answers of both lanes' runtimes. */
  audit: SecretsAudit;
  /** Holds the keys only, and both lanes' model requests. */
  keysOnly: SecretsAudit;
  seconds: number;
}

async function startLane(
  cleanup: Array<() => Promise<void>>,
  options: ChatHostOptions,
): Promise<ChatHostLane> {
  const sess = await startLocalSess();
  cleanup.push(() => sess.close());
  const standIn = await (options.startStandIn ?? startChatCompletionsStandIn)();
  cleanup.push(() => standIn.close());
  const place = await hostPlace(cleanup, options.name);
  const lane: ChatHostLane = {
    sess,
    standIn,
    place,
    server: hostStdioServer(sess, place.home, options.server),
    outputs: [],
  };
  await options.configure(lane);
  return lane;
}

async function execInto(lane: ChatHostLane, options: ChatHostOptions, flow: FlowName): Promise<void> {
  try {
    const { out, err } = await options.exec(lane, promptFor(flow), flow);
    lane.outputs.push(out, err);
  } catch (error) {
    lane.outputs.push(error instanceof Error ? error.message : String(error));
    throw error;
  }
}

/** Run every flow in one lane and the long call in the other, side by side. */
export async function runChatHost(
  cleanup: Array<() => Promise<void>>,
  options: ChatHostOptions,
): Promise<ChatHostRun> {
  const started = Date.now();
  const [lane, probe] = await Promise.all([startLane(cleanup, options), startLane(cleanup, options)]);
  const audit = createSecretsAudit();
  for (const l of [lane, probe]) audit.secret(l.sess.apiKey, 'sess api key');
  const [flows, callTimeout] = await Promise.all([
    (async () => {
      const outcomes: FlowOutcome[] = [];
      for (const flow of FLOWS) {
        outcomes.push(
          await runFlow(lane.sess, flow, lane.standIn.log, audit, () => execInto(lane, options, flow)),
        );
      }
      return outcomes;
    })(),
    probeLongCall(probe.standIn.log, () => execInto(probe, options, 'long')),
  ]);
  const keysOnly = keysOnlyAudit(lane.sess, lane.standIn.log, { bearer: false });
  keysOnly.secret(probe.sess.apiKey, 'sess api key (probe lane)');
  keysOnly.text(requestBodies(probe.standIn.log), 'model requests (probe lane)');
  return {
    lane,
    probe,
    flows,
    callTimeout,
    audit,
    keysOnly,
    seconds: Math.round((Date.now() - started) / 1000),
  };
}

/**
 * Give both lanes' files to the audits: a file the host keeps its transcript in (`transcript(path)`)
 * to `keysOnly`, one that stores the configuration the test wrote (`config(path)`) to neither,
 * every other file under its home and project to `audit` (but the server's store under
 * `sess-state/`); and its output to `audit`, unless the
 * host prints the conversation (`outputIsTranscript`).
 */
export async function auditRunFiles(
  run: ChatHostRun,
  rules: { config(path: string): boolean; transcript(path: string): boolean; outputIsTranscript?: boolean },
): Promise<void> {
  for (const lane of [run.lane, run.probe]) await auditLaneFiles(lane, run, rules);
}

async function auditLaneFiles(
  lane: ChatHostLane,
  run: ChatHostRun,
  rules: Parameters<typeof auditRunFiles>[1],
): Promise<void> {
  for (const dir of [lane.place.home, lane.place.project])
    for (const file of await readTree(dir)) {
      // The server's own store (SESS_MCP_STATE_DIR), not the host's: an interaction left answered
      // keeps its link and answer there by design (the store's own tests cover it).
      if (rules.config(file.path) || file.path.startsWith('sess-state/')) continue;
      (rules.transcript(file.path) ? run.keysOnly : run.audit).text(file.text, `host file ${file.path}`);
    }
  (rules.outputIsTranscript === true ? run.keysOnly : run.audit).text(lane.outputs.join('\n'), 'host output');
}

/** Where the server instructions were in a model request (its raw body), from its messages. */
export function instructionsWhere(body: string | undefined): string {
  const parsed = JSON.parse(body ?? '{}') as { messages?: Array<{ role: string; content: unknown }> };
  const holder = parsed.messages?.find((m) => JSON.stringify(m.content).includes(MARKERS.instructions));
  if (holder === undefined) return 'not sent to the model';
  if (holder.role === 'system') return 'in the system prompt';
  return `in the ${holder.role} turn, as a system reminder headed "The text below was supplied by the MCP server"`;
}

/** What a suite reads off a run: the flows lane's request bodies, the tools offered, paths not served. */
export function runFacts(run: ChatHostRun): { bodies: string; offered: string[]; unserved: string[] } {
  const log = run.lane.standIn.log;
  return {
    bodies: requestBodies(log),
    offered: [...new Set(log.requests.flatMap((r) => r.toolNames))].sort(),
    unserved: [...new Set([...run.lane.standIn.unserved, ...run.probe.standIn.unserved])],
  };
}
