/**
 * The options of `startLocalSess`, checked with the package's one option helper (a bad one fails
 * at once with `startLocalSess: option "<name>" <rule>.`) and with their defaults filled in.
 *
 * It reads options only: it starts nothing (`runtime.ts` does).
 */
import { type OptionReader, optionNames, readOptions } from '../../core/contract/options.js';
import { SESS_ID_RULE } from '../../core/contract/rules.js';
import { LOCAL_CLOCK_OPTIONS, type LocalClockOptions } from '../model/clock.js';
import { DEFAULT_PLAN, type LocalPlan } from '../model/records.js';
import { type LocalWithdrawal, WITHDRAWAL_RULE } from '../model/withdrawals.js';
import type { LocalSessOptions } from './runtime-types.js';

/** The options of {@link startLocalSess}, checked, with their defaults filled in. */
export interface CheckedOptions {
  host: string;
  port: number;
  clock: LocalClockOptions;
  plan: LocalPlan;
  issuer: string | undefined;
  workspaceHeader: boolean;
  withdrawal: LocalWithdrawal;
  workspaceId: string | undefined;
  apiKey: string | undefined;
}

const PLAN_MINIMUM: Record<keyof LocalPlan, number> = {
  maxExpiresIn: 30,
  maxOpenSessions: 1,
  maxRespondents: 1,
};

/** The option names of {@link startLocalSess}. */
const KNOWN = optionNames<LocalSessOptions>()(
  'host',
  'port',
  'clock',
  'plan',
  'issuer',
  'workspaceHeader',
  'withdrawal',
  'workspaceId',
  'apiKey',
);

function checkPlan(read: OptionReader, value: unknown): LocalPlan {
  const plan = { ...DEFAULT_PLAN };
  for (const [name, limit] of Object.entries(read.bag('plan', value, Object.keys(PLAN_MINIMUM)))) {
    const min = PLAN_MINIMUM[name as keyof LocalPlan];
    if (limit === undefined) continue;
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < min) {
      read.fail(`plan.${name}`, `must be a whole number of at least ${min}`);
    }
    plan[name as keyof LocalPlan] = limit as number;
  }
  return plan;
}

function checkClock(read: OptionReader, value: unknown): LocalClockOptions {
  const clock = read.bag('clock', value, LOCAL_CLOCK_OPTIONS);
  const start = clock.start;
  if (start !== undefined) {
    const ms =
      start instanceof Date
        ? start.getTime()
        : typeof start === 'number'
          ? start
          : typeof start === 'string'
            ? Date.parse(start)
            : Number.NaN;
    if (!Number.isFinite(ms))
      read.fail('clock.start', 'must be a valid time (a Date, epoch milliseconds or a date string)');
  }
  const frozen = read.boolean('clock.frozen', clock.frozen, false);
  return start === undefined ? { frozen } : { start: start as Date | number | string, frozen };
}

/** The options checked, defaults filled in. */
export function checkOptions(options: LocalSessOptions | undefined): CheckedOptions {
  const read = readOptions('startLocalSess', options, { known: KNOWN, allowMissing: true });
  const o: LocalSessOptions = options ?? {};
  const apiKey = read.optionalString('apiKey', o.apiKey);
  // A key with spaces or non-ASCII characters could never be sent as a bearer token.
  if (apiKey !== undefined && !/^[\x21-\x7e]{1,256}$/.test(apiKey)) {
    read.fail('apiKey', 'must be 1 to 256 printable ASCII characters without spaces');
  }
  return {
    host: read.optionalString('host', o.host) ?? '127.0.0.1',
    port: read.integer('port', o.port, { min: 0, max: 65_535 }, 0),
    clock: checkClock(read, o.clock),
    plan: checkPlan(read, o.plan),
    issuer: read.optionalString('issuer', o.issuer),
    workspaceHeader: read.boolean('workspaceHeader', o.workspaceHeader, true),
    withdrawal:
      (read.optionalRule('withdrawal', o.withdrawal, WITHDRAWAL_RULE) as LocalWithdrawal | undefined) ??
      'offered',
    workspaceId: read.optionalRule('workspaceId', o.workspaceId, SESS_ID_RULE),
    apiKey,
  };
}
