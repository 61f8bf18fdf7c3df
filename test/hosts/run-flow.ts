/**
 * One flow of the matrix against one host: the host runs (however its suite starts it) while the
 * person answers on the local Sess runtime; afterwards the runtime's own state says whether the
 * flow reached its end (a completed Session, or an Ask with both answers).
 */
import type { LocalSess } from '../../src/testing/index.js';
import type { SecretsAudit } from '../support/audit.js';
import type { FlowOutcome } from './matrix.js';
import { ANSWERS, playPerson } from './person.js';
import { type FlowName, listItemsOf, parseToolResult } from './script.js';
import type { StandInLog } from './stand-in-log.js';

/** Markers of the server's instructions and tool descriptions in what reached a model. */
export const MARKERS = {
  instructions: 'lets you ask a person and continue only on their verified answer. Use it when a decision',
  description: 'creates a Sess interaction (a page the person opens on their phone)',
} as const;

function endState(
  sess: LocalSess,
  flow: FlowName,
  knownSessions: Set<string>,
  knownAsks: Set<string>,
): string {
  if (flow === 'respondents') {
    const ask = sess.asks.list().find((a) => !knownAsks.has(a.id));
    return ask === undefined ? 'no Ask' : `Ask ${ask.status}, ${ask.answered} of ${ask.max} answered`;
  }
  const session = sess.sessions.list().find((s) => !knownSessions.has(s.view.id) && s.ask === undefined);
  return session === undefined
    ? 'no Session'
    : `Session ${session.view.status} at revision ${session.view.revision}`;
}

const EXPECTED: Record<FlowName, RegExp> = {
  ask: /^Session completed at revision 1$/,
  request: /^Session completed at revision 2$/,
  respondents: /^Ask \w+, 2 of 2 answered$/,
  ask_rating: /^Session completed at revision 1$/,
  lifecycle: /^Session withdrawn at revision 1$/,
  long: /^Session active at revision 1$/,
  wake: /^Session completed at revision 1$/,
};

/**
 * Run `host` (resolves when the host process or agent loop ends) with the person playing
 * alongside, then judge the flow by the runtime's state and the calls the script made.
 */
export async function runFlow(
  sess: LocalSess,
  flow: FlowName,
  log: StandInLog,
  audit: SecretsAudit,
  host: () => Promise<void>,
): Promise<FlowOutcome> {
  const knownSessions = new Set(sess.sessions.list().map((s) => s.view.id));
  const knownAsks = new Set(sess.asks.list().map((a) => a.id));
  const callsBefore = log.calls().length;
  const requestsBefore = log.requests.length;
  audit.answer(ANSWERS, 'answer value');
  const started = Date.now();
  // The lifecycle flow needs no person: its question is withdrawn before anyone answers.
  const person =
    flow === 'lifecycle'
      ? Promise.resolve(undefined)
      : playPerson(sess, flow, audit, knownSessions, knownAsks).then(
          () => undefined,
          (error: unknown) => (error instanceof Error ? error.message : String(error)),
        );
  let hostError: string | undefined;
  try {
    await host();
  } catch (error) {
    hostError = error instanceof Error ? error.message.split('\n')[0] : String(error);
  }
  const personError = await Promise.race([
    person,
    new Promise<string>((r) =>
      setTimeout(() => r('person: the host ended before the person answered'), 2_000),
    ),
  ]);
  if (flow === 'lifecycle') {
    for (const s of sess.sessions.list())
      if (!knownSessions.has(s.view.id)) audit.url(s.view.human_url, 'withdrawn sess link');
  }
  const calls = log
    .calls()
    .slice(callsBefore)
    .map((c) => c.tool);
  const state = endState(sess, flow, knownSessions, knownAsks);
  const rewaits = calls.filter((c) => c === 'sess_response').length;
  const problems: string[] = [];
  if (hostError !== undefined) problems.push(`host: ${hostError}`);
  if (personError !== undefined) problems.push(personError);
  if (!EXPECTED[flow].test(state)) problems.push(`ended with ${state}`);
  if ((flow === 'ask' || flow === 'ask_rating') && rewaits < 2) {
    problems.push(`only ${rewaits} sess_response call(s)`);
  }
  if (flow === 'lifecycle') problems.push(...lifecycleProblems(log, requestsBefore));
  // A refusal before any interaction exists says why; a result that holds a link is never quoted.
  const results = log.requests[log.requests.length - 1]?.toolResults ?? [];
  const lastResult = results[results.length - 1];
  if (problems.length > 0 && lastResult !== undefined && !lastResult.includes('http')) {
    problems.push(`last tool result: ${lastResult.split('\n')[0]!.slice(0, 160)}`);
  }
  return {
    flow,
    pass: problems.length === 0,
    note:
      problems.length > 0
        ? problems.join('; ')
        : flow === 'lifecycle'
          ? `${state}; the list (${listedCount(log, requestsBefore)} items, no link) and the withdrawn result reached the model`
          : `${state}; ${rewaits} sess_response calls`,
    calls,
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
}

/** How many items the first `sess_list` result of a flow held, as the model received it. */
function listedCount(log: StandInLog, requestsBefore: number): number {
  for (const request of log.requests.slice(requestsBefore))
    for (const result of request.toolResults) {
      const items = listItemsOf(parseToolResult(result));
      if (items !== undefined) return items.length;
    }
  return 0;
}

/**
 * What the lifecycle flow's model must have been sent, read from the stand-in's log of this flow:
 * the first `sess_list` result with at least one item and no link in it (nor in any later list
 * result), the inspected handle taken from that list, and the `withdrawn` result of `sess_withdraw`
 * (whose `expected_revision` is the revision of the `sess_request` result before it).
 */
export function lifecycleProblems(log: StandInLog, requestsBefore: number): string[] {
  const requests = log.requests.slice(requestsBefore);
  const seen: string[] = [];
  for (const request of requests)
    for (const result of request.toolResults) if (!seen.includes(result)) seen.push(result);
  const lists = seen.filter((r) => listItemsOf(parseToolResult(r)) !== undefined);
  const problems: string[] = [];
  const listing = listItemsOf(parseToolResult(lists[0] ?? ''));
  if (listing === undefined || listing.length === 0)
    problems.push('no sess_list result with items reached the model');
  if (lists.some((r) => /https?:\/\//.test(r) || r.includes('humanUrl'))) {
    problems.push('a sess_list result that reached the model carried a link');
  }
  const calls = requests.flatMap((r) => (r.step?.kind === 'tool' ? [r.step] : []));
  const inspected = calls.find((c) => c.tool === 'sess_list' && typeof c.arguments.handle === 'string');
  if (inspected === undefined || !listing?.some((i) => i.handle === inspected.arguments.handle)) {
    problems.push('the inspected handle was not one the list returned');
  }
  const withdraw = calls.find((c) => c.tool === 'sess_withdraw');
  const asked = seen
    .map(
      (r) =>
        parseToolResult(r)?.interaction as { handle?: string; revision?: number; state?: string } | undefined,
    )
    .filter((i) => i !== undefined);
  const request = asked.find((i) => i.state === 'waiting');
  if (
    withdraw !== undefined &&
    (withdraw.arguments.handle !== request?.handle ||
      withdraw.arguments.expected_revision !== request?.revision)
  ) {
    problems.push('sess_withdraw was not called with the handle and revision of the sess_request result');
  }
  if (!asked.some((i) => i.state === 'withdrawn')) problems.push('no withdrawn result reached the model');
  const shown = listItemsOf(parseToolResult(lists.length > 1 ? lists[lists.length - 1]! : ''));
  if (
    shown?.length !== 1 ||
    shown[0]!.handle !== withdraw?.arguments.handle ||
    shown[0]!.state !== 'withdrawn'
  ) {
    problems.push('the last sess_list did not show the withdrawn handle as withdrawn');
  }
  return problems;
}

/**
 * The long-call probe: the host runs `sess_ask`, then one `sess_response` at the 45 s ceiling that
 * nobody answers. Says whether the host let the call run to its end (a `waiting` result after
 * about 45 s) or cut it (an error, or an earlier result), with the seconds it took.
 */
export async function probeLongCall(log: StandInLog, host: () => Promise<void>): Promise<string> {
  const before = log.requests.length;
  let hostError: string | undefined;
  try {
    await host();
  } catch (error) {
    hostError = error instanceof Error ? error.message.split('\n')[0] : String(error);
  }
  const requests = log.requests.slice(before);
  const issued = requests.find((r) => r.step?.kind === 'tool' && r.step.tool === 'sess_response');
  const answered = requests.find((r) => r.toolResults.length >= 2);
  if (issued?.at === undefined || answered?.at === undefined) {
    return `not measured: the long call did not complete${hostError === undefined ? '' : ` (${hostError})`}`;
  }
  const seconds = Math.round((answered.at - issued.at) / 100) / 10;
  const result = answered.toolResults[answered.toolResults.length - 1] ?? '';
  const state = /\\?"state\\?":\\?"(waiting|needs_resume)/.exec(result)?.[1];
  if (state !== undefined && seconds >= 44)
    return `a 45 s call is not cut (its \`${state}\` result came after ${seconds} s)`;
  const said = result.includes('http') ? 'a result' : result.split('\n')[0]!.slice(0, 120);
  return `cut: after ${seconds} s the host gave the model ${said}`;
}
