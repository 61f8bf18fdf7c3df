/**
 * The person of the host matrix: answers on the local Sess runtime's page as a browser would
 * (`submitAnswer`, `startRespondent`), timed by the waits the host's calls open, so a host that
 * does not re-call `sess_response` never sees the answer. It does not talk to the host.
 */
import type { JsonValue } from '../../src/core/model/surface.js';
import type { LocalSess } from '../../src/testing/index.js';
import type { SecretsAudit } from '../support/audit.js';
import type { FlowName } from './script.js';

/** Distinctive answer values (the audit looks for them). */
export const ANSWERS = {
  note: 'Thursday after lunch, zebra crossing',
  message: 'Ship it on Thursday, pelican brief',
  diets: ['vegetarian, no mushrooms', 'no restrictions at all'],
} as const;

/** What the person saw while answering. */
export interface PersonReport {
  /** The waits the host had opened on the Session when the person answered each revision. */
  waitsBeforeAnswer: number[];
}

const POLL_MS = 20;

async function until<T>(read: () => T | undefined, deadline: number, what: string): Promise<T> {
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`person: gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Wait for the `count`-th wait on a Session (or on any Session) to start: each wait must start
 * after the previous one ended, as a host's re-call does.
 */
async function nthWait(sess: LocalSess, sessionId: string | undefined, count: number, deadline: number) {
  for (let n = 1; n <= count; n += 1) {
    await until(() => (sess.pendingWaits(sessionId) > 0 ? true : undefined), deadline, `wait ${n}`);
    if (n < count) {
      await until(
        () => (sess.pendingWaits(sessionId) === 0 ? true : undefined),
        deadline,
        `wait ${n} to end`,
      );
    }
  }
}

/**
 * Play the person of `flow` until it is answered; rejects after `timeoutMs`. The default is just
 * under the CLI hosts' 180 s run limit: a host's first run starts with the other long files of a
 * CI run, and on two loaded cores its first call came after more than 120 s.
 */
export async function playPerson(
  sess: LocalSess,
  flow: FlowName,
  audit: SecretsAudit,
  knownSessions: ReadonlySet<string>,
  knownAsks: ReadonlySet<string>,
  timeoutMs = 170_000,
): Promise<PersonReport> {
  const deadline = Date.now() + timeoutMs;
  const report: PersonReport = { waitsBeforeAnswer: [] };
  if (flow === 'respondents') {
    const ask = await until(() => sess.asks.list().find((a) => !knownAsks.has(a.id)), deadline, 'the Ask');
    audit.url(ask.human_url, 'ask link');
    // An Ask's sess_response reads once without waiting, so there is no wait to time the answers by.
    for (const diet of ANSWERS.diets) {
      const started = await sess.startRespondent(ask.human_url);
      if (started.humanUrl === undefined) throw new Error(`person: no respondent link (${started.status})`);
      audit.url(started.humanUrl, 'respondent link');
      const surface = sess.sessions.byUrl(started.humanUrl)!.surfaces[0]!;
      const posted = await sess.submitAnswer(started.humanUrl, {
        action: surface.actions[0]!.id,
        values: { day: 'thu', diet },
      });
      if (posted.status !== 303) throw new Error(`person: answer refused (${posted.status})`);
    }
    report.waitsBeforeAnswer.push(0);
    return report;
  }
  const session = await until(
    () => sess.sessions.list().find((s) => !knownSessions.has(s.view.id) && s.ask === undefined),
    deadline,
    'the Session',
  );
  const id = session.view.id;
  audit.url(session.view.human_url, 'sess link');
  const revisions = flow === 'request' ? 2 : 1;
  for (let revision = 1; revision <= revisions; revision += 1) {
    await until(
      () => (sess.sessions.get(id)!.view.revision === revision ? true : undefined),
      deadline,
      `revision ${revision}`,
    );
    // The ask flow needs the host to re-call sess_response: answer only once the second wait started.
    const waits = flow === 'ask' || flow === 'ask_rating' ? 2 : 1;
    await nthWait(sess, id, waits, deadline);
    const surface = sess.sessions.get(id)!.surfaces[revision - 1]!;
    const values: Record<string, JsonValue> =
      flow === 'ask'
        ? { note: ANSWERS.note }
        : flow === 'ask_rating'
          ? { score: 4 }
          : revision === 1
            ? { message: ANSWERS.message }
            : {};
    const posted = await sess.submitAnswer(session.view.human_url, {
      action: surface.actions[0]!.id,
      values,
    });
    if (posted.status !== 303) throw new Error(`person: answer refused (${posted.status})`);
    report.waitsBeforeAnswer.push(waits);
  }
  return report;
}
