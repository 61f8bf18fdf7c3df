/**
 * What the soak's agents do: stories of one interaction each, told over and over by every lane
 * until the run's load ends. A story creates a question (`sess_request`, or `sess_ask`), then:
 *
 * - `wait`: waits for the person with `sess_response` while the person answers on the page;
 * - `late`: the person answers while the agent is away, and the agent asks a few seconds later
 *   (the instances' watchers usually learn the answer first, and deliver its event);
 * - `withdraw`: the agent takes the question back with `sess_withdraw`.
 *
 * Every answer read back is compared with what the person gave; an answered story then repeats
 * `sess_response` (the figure the soak reports) and finishes with `sess_complete`, as an agent
 * that got its answer does (an unfinished interaction counts against its scope's cap), then lists
 * its principal's interactions. A
 * `sess_request` whose outcome the agent could not learn is made again with the same arguments;
 * each such failed create is counted on the story, for the ledger to account for.
 *
 * The person is the local runtime's page API (`submitAnswer`), never a tool. A story keeps its
 * link and answer in memory only, to compare them; nothing here prints them.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { canonicalJson } from '../../src/core/codec/canonical-json.js';
import type { Answer } from '../../src/core/model/surface.js';
import type { LocalSess } from '../../src/testing/index.js';
import { approvalSurface } from '../support/surfaces.js';
import { type Lane, persist } from './calls.js';

/** The kinds of story. */
export type Plan = 'wait' | 'late' | 'withdraw';

/** One story: what the agent asked, what came of it. */
export interface Story {
  readonly id: number;
  readonly tool: 'sess_request' | 'sess_ask';
  readonly plan: Plan;
  /** The question's title: unique in the run, the same on every create attempt. */
  readonly title: string;
  /** Creates that ended without a handle (transport failure, `CREATE_OUTCOME_UNKNOWN`, …). */
  failedCreates: number;
  handle?: string;
  humanUrl?: string;
  /** What the person gives (removed again if the page refuses it). */
  answer?: Answer;
  /** The agent got the person's values back, verified. */
  returned?: boolean;
  /** How it ended: `answered`, `completed`, `withdrawn`, or `refused:<code>` / `gave_up`. */
  end?: string;
}

/** What one run of stories shares. */
export interface StoryContext {
  readonly sess: LocalSess;
  readonly stories: Story[];
  /** Stories start while this is true. */
  running(): boolean;
}

const PLANS: readonly Plan[] = ['wait', 'wait', 'late', 'late', 'withdraw'];
let nextId = 0;

/** The arguments of a story's create, the same on every attempt. */
function createArgs(story: Story): Record<string, unknown> {
  if (story.tool === 'sess_request') return { interaction: approvalSurface(story.title) };
  return {
    question: story.title,
    fields: [
      { type: 'choice', name: 'slot', label: 'Time', options: ['09:00', '14:00'], required: true },
      { type: 'text', name: 'note', label: 'Note' },
    ],
  };
}

/** The person's answer of a story: values only this story has. */
function answerOf(story: Story): Answer {
  const mark = `${story.id}-${Math.random().toString(36).slice(2, 10)}`;
  return story.tool === 'sess_request'
    ? { action: 'approve', values: { message: `soak message ${mark}` } }
    : {
        action: 'submit',
        values: { slot: story.id % 2 === 0 ? '09:00' : '14:00', note: `soak note ${mark}` },
      };
}

/** Create until a handle comes back; false when the agent gave up or the tool refused for good. */
async function create(lane: Lane, story: Story): Promise<boolean> {
  for (;;) {
    // Each failed attempt may have made a Session the agent never learned of: count them all.
    const out = await persist(lane, story.tool, createArgs(story), {
      onFailed: () => {
        story.failedCreates += 1;
      },
    });
    if (out.ok) {
      story.handle = out.interaction.handle;
      story.humanUrl = out.interaction.humanUrl;
      return true;
    }
    story.failedCreates += 1;
    if ('gaveUp' in out) {
      story.end = 'gave_up';
      return false;
    }
    // An agent that did not learn whether its question exists asks it again.
    if (out.error.code !== 'CREATE_OUTCOME_UNKNOWN' && out.error.code !== 'CREATED_NOT_SAVED') {
      story.end = `refused:${out.error.code}`;
      return false;
    }
  }
}

/** `sess_response` until the answer is there; its event id, once read and compared. */
async function readAnswer(lane: Lane, story: Story, waitMs: number): Promise<string | undefined> {
  const giveUpAt = Date.now() + 180_000;
  while (Date.now() < giveUpAt) {
    const out = await persist(lane, 'sess_response', { handle: story.handle, revision: 1, wait_ms: waitMs });
    if (!out.ok) {
      story.end = 'gaveUp' in out ? 'gave_up' : `refused:${out.error.code}`;
      return undefined;
    }
    const { interaction } = out;
    if (interaction.state === 'answered' && interaction.response !== undefined) {
      const { response } = interaction;
      story.returned =
        response.verified === true &&
        response.action === story.answer?.action &&
        canonicalJson(response.values) === canonicalJson(story.answer?.values);
      story.end = 'answered';
      return response.eventId;
    }
  }
  story.end = 'gave_up';
  return undefined;
}

/** The person answers after `ms`; a refused answer is kept on the story as its end. */
async function answerAfter(ctx: StoryContext, story: Story, ms: number): Promise<void> {
  await sleep(ms);
  // Kept before the post: the agent's wait may return the answer before the page's reply comes.
  story.answer = answerOf(story);
  try {
    await ctx.sess.submitAnswer(story.humanUrl!, story.answer);
  } catch {
    delete story.answer;
    story.end = 'answer_refused';
  }
}

/** Withdraw, then read the state back. */
async function withdraw(lane: Lane, story: Story): Promise<void> {
  await sleep(200 + Math.random() * 800);
  const out = await persist(lane, 'sess_withdraw', { handle: story.handle, expected_revision: 1 });
  story.end = out.ok ? out.interaction.state : 'gaveUp' in out ? 'gave_up' : `refused:${out.error.code}`;
}

/** The answered story's repeats and its complete. */
async function afterAnswer(lane: Lane, story: Story, eventId: string): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await persist(lane, 'sess_response', { handle: story.handle, revision: 1, wait_ms: 0 }, { repeat: true });
  }
  const out = await persist(lane, 'sess_complete', {
    handle: story.handle,
    expected_revision: 1,
    response_event_id: eventId,
  });
  story.end = out.ok ? out.interaction.state : 'gaveUp' in out ? 'gave_up' : `refused:${out.error.code}`;
}

/** Tell one story on `lane` (of `plan`, or the next in turn). */
export async function tellStory(ctx: StoryContext, lane: Lane, plan?: Plan): Promise<Story> {
  const id = ++nextId;
  const story: Story = {
    id,
    tool: id % 3 === 0 ? 'sess_ask' : 'sess_request',
    plan: plan ?? PLANS[id % PLANS.length]!,
    title: `Soak question ${id}`,
    failedCreates: 0,
  };
  ctx.stories.push(story);
  if (!(await create(lane, story))) return story;
  if (story.plan === 'withdraw') {
    await withdraw(lane, story);
    return story;
  }
  let eventId: string | undefined;
  if (story.plan === 'late') {
    await answerAfter(ctx, story, 100);
    await sleep(1_000 + Math.random() * 3_000);
    eventId = await readAnswer(lane, story, 5_000);
  } else {
    const person = answerAfter(ctx, story, 300 + Math.random() * 1_200);
    eventId = await readAnswer(lane, story, 10_000);
    await person;
  }
  if (eventId !== undefined) await afterAnswer(lane, story, eventId);
  await persist(lane, 'sess_list', { limit: 5 });
  return story;
}

/** Tell stories on `lane` while the run lasts. */
export async function storyLoop(ctx: StoryContext, lane: Lane): Promise<void> {
  while (ctx.running()) {
    await tellStory(ctx, lane);
    await sleep(100 + Math.random() * 400);
  }
}

/**
 * The probe: one answered (and completed) story of its own lane, then a repeat `sess_response` on it every
 * `everyMs` while the run lasts, one attempt each (so a fault shows in the log at once).
 */
export async function probeLoop(ctx: StoryContext, lane: Lane, everyMs = 200): Promise<void> {
  let handle: string | undefined;
  while (handle === undefined && ctx.running()) {
    const story = await tellStory(ctx, lane, 'wait');
    if (story.end === 'completed') handle = story.handle;
  }
  while (ctx.running()) {
    await lane.attempt('sess_response', { handle, revision: 1, wait_ms: 0 }, true);
    await sleep(everyMs);
  }
}
