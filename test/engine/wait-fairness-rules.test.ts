/**
 * The wait gate's fairness rules as a table (`src/core/engine/wait-fairness.ts`): which queued
 * poll a free slot goes to, and, with the total cap full, whether a queued poll takes over a
 * running one's slot now, later or never. The gate that runs them on the local runtime is
 * `wait-fairness.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import {
  FAIR_SLICE_MS,
  type FairGate,
  type FairPoll,
  nextToStart,
  nextYield,
} from '../../src/core/engine/wait-fairness.js';

const NOW = 1_000_000;

interface P extends FairPoll {
  name: string;
}

/** A poll of `principal/client`: running for `ranFor` ms (its own wait ending in `endsIn`). */
function running(name: string, ranFor: number, endsIn = 30_000): P {
  const principal = name.split('/')[0] as string;
  return { name, principal, scope: name, startedAt: NOW - ranFor, queuedAt: 0, deadline: NOW + endsIn };
}
/** A poll of `principal/client` queued for `queuedFor` ms; `yielded`: it ran before. */
function queued(name: string, queuedFor: number, yielded = false): P {
  const principal = name.split('/')[0] as string;
  return {
    name,
    principal,
    scope: name,
    startedAt: yielded ? 0 : undefined,
    queuedAt: NOW - queuedFor,
    deadline: 0,
  };
}

function gateOf(maxTotal: number, run: P[], queue: P[]): FairGate<P> {
  const perScope = new Map<string, number>();
  const perPrincipal = new Map<string, number>();
  for (const p of run) {
    perScope.set(p.scope, (perScope.get(p.scope) ?? 0) + 1);
    perPrincipal.set(p.principal, (perPrincipal.get(p.principal) ?? 0) + 1);
  }
  return { maxTotal, queue, running: new Set(run), perScope, perPrincipal, total: run.length };
}

function decide(gate: FairGate<P>): string {
  const d = nextYield(gate, NOW, () => true);
  if (d.kind === 'now') return `${d.newcomer.name} takes ${d.holder.name}`;
  if (d.kind === 'later') return `later +${d.at - NOW}`;
  return 'none';
}

const long = FAIR_SLICE_MS * 4;

describe('nextYield: with every slot taken', () => {
  it.each([
    [
      'a newcomer takes the slot of the principal running the most, its oldest run',
      [running('a/1', long), running('a/2', long + 1), running('b/1', long)],
      [queued('c/1', 0)],
      'c/1 takes a/2',
    ],
    [
      'a newcomer waits for a slot that ran less than a slice',
      [running('a/1', 100), running('b/1', 200)],
      [queued('c/1', 0)],
      `later +${FAIR_SLICE_MS - 200}`,
    ],
    [
      'a run that ends within a slice anyway is left alone',
      [running('a/1', long, FAIR_SLICE_MS - 1)],
      [queued('c/1', 0)],
      'none',
    ],
    [
      'a principal running one takes from one running three',
      [running('a/1', long), running('a/2', long), running('a/3', long), running('b/1', long)],
      [queued('b/2', 0)],
      'b/2 takes a/1',
    ],
    [
      'but not from one running two: the shares are even enough',
      [running('a/1', long), running('a/2', long), running('b/1', long)],
      [queued('b/2', 0)],
      'none',
    ],
    ['nor from its own principal', [running('a/1', long), running('a/2', long)], [queued('a/3', 0)], 'none'],
    [
      'a poll that yielded waits a slice before it takes one back',
      [running('a/1', long), running('b/1', 100)],
      [queued('c/1', 100, true)],
      `later +${FAIR_SLICE_MS - 100}`,
    ],
    [
      'and then takes it',
      [running('a/1', long), running('b/1', 100)],
      [queued('c/1', FAIR_SLICE_MS, true)],
      'c/1 takes a/1',
    ],
    [
      'the newcomer of the principal running the fewest goes first',
      [running('a/1', long), running('a/2', long), running('b/1', long)],
      [queued('b/2', 10), queued('c/1', 0)],
      'c/1 takes a/1',
    ],
  ])('%s', (_, run, queue, expected) => {
    expect(decide(gateOf(run.length, run, queue))).toBe(expected);
  });

  it('decides nothing while a slot is free or nobody is queued', () => {
    expect(decide(gateOf(3, [running('a/1', long)], [queued('b/1', 0)]))).toBe('none');
    expect(decide(gateOf(1, [running('a/1', long)], []))).toBe('none');
  });
});

describe('nextToStart: a free slot', () => {
  it('goes to the queued poll whose principal runs the fewest, then whose scope does, then the first queued', () => {
    const gate = gateOf(
      4,
      [running('a/1', long), running('a/2', long), running('b/1', long)],
      [queued('a/3', 30), queued('b/2', 20), queued('c/1', 10), queued('c/2', 5)],
    );
    expect(nextToStart(gate, () => true)?.name).toBe('c/1');
    expect(nextToStart(gate, (p) => p.principal !== 'c')?.name).toBe('b/2');
    // Every slot taken: nothing starts.
    expect(nextToStart(gateOf(3, [...gate.running], [...gate.queue]), () => true)).toBeUndefined();
  });
});
