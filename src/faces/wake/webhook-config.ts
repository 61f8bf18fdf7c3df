/**
 * The webhook's configuration, read and checked in the two ways the faces take configuration:
 * the stdio server's environment ({@link readWebhookEnv}: a bad value is a `NOT_CONFIGURED`
 * `SessMcpError` naming the variable, as `src/stdio/config.ts` reports its own) and an HTTP-face
 * option bag ({@link readWebhookOptions}: a `TypeError` naming the option, through the one
 * option helper). Both apply the same rules: `webhook-destination.ts`'s for the URL,
 * `webhook-signature.ts`'s for the secrets.
 *
 * No message repeats a value: a URL may carry a token in its path or query, and a secret is a
 * secret. It imports no `node:` module and reads no environment of its own: the stdio side hands
 * it the environment and the testing switch it has already read.
 */

import { type OptionReader, optionNames } from '../../core/contract/options.js';
import { SessMcpError } from '../../index.js';
import {
  checkWebhookDestination,
  isAllowedHostEntry,
  WEBHOOK_DESTINATION_TEXT,
  type WebhookDestinationOptions,
} from './webhook-destination.js';
import { WEBHOOK_SCALE_RULE, WEBHOOK_SCALE_VARIABLE } from './webhook-schedule.js';
import { WEBHOOK_TIMEOUT_RANGE } from './webhook-send.js';
import { MAX_WEBHOOK_SECRETS, WEBHOOK_SECRET_RULE } from './webhook-signature.js';

/** Where events go and what signs them. */
export interface WebhookEndpoint {
  /** The receiver's URL (HTTPS). */
  readonly url: string;
  /** `whsec_` secrets, each signing every attempt (two during a rotation). */
  readonly secrets: readonly string[];
}

/** The sender settings of a checked webhook configuration. */
export interface WebhookSenderConfig {
  /** Whether private and loopback addresses may be reached. */
  readonly allowPrivate: boolean;
  /** The only hosts the webhook may reach (required where the runtime cannot see addresses). */
  readonly allowedHosts?: readonly string[];
  /** The attempt's time, when not the default. */
  readonly timeoutMs?: number;
}

/** A checked webhook configuration: the endpoint, and the sender settings that go with it. */
export interface WebhookConfig extends WebhookSenderConfig {
  readonly endpoint: WebhookEndpoint;
}

/** The stdio server's webhook variables, by name. */
export const WEBHOOK_ENV = {
  url: 'SESS_MCP_WEBHOOK_URL',
  secret: 'SESS_MCP_WEBHOOK_SECRET',
  allowPrivate: 'SESS_MCP_WEBHOOK_ALLOW_PRIVATE',
  testScale: WEBHOOK_SCALE_VARIABLE,
} as const;

/** The most hosts `allowedHosts` lists. */
export const MAX_WEBHOOK_ALLOWED_HOSTS = 64;

/** The words of the secrets rule, for a list (an option) or a space-separated text (a variable). */
const SECRETS_TEXT = `1 to ${MAX_WEBHOOK_SECRETS} secrets, each ${WEBHOOK_SECRET_RULE.text}`;

/** An example of a usable URL, for the messages. */
const URL_EXAMPLE = 'https://hooks.example.com/sess';

/** The secrets of a list, or the 1-based position of the first bad one (0: a bad list). */
function secretsProblem(value: unknown): number | undefined {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_WEBHOOK_SECRETS) return 0;
  const bad = value.findIndex((secret) => !WEBHOOK_SECRET_RULE.test(secret));
  return bad < 0 ? undefined : bad + 1;
}

/** Makes the `NOT_CONFIGURED` error of one variable. */
export type NotConfigured = (variable: string, message: string) => SessMcpError;

const plainNotConfigured: NotConfigured = (_variable, message) =>
  new SessMcpError('NOT_CONFIGURED', message, { retryable: false });

/** What {@link readWebhookEnv} needs besides the environment. */
export interface WebhookEnvContext {
  /** `SESS_MCP_TEST_ALLOW_INSECURE_LOCALHOST`, as the stdio configuration read it. */
  readonly allowInsecureLocalhost: boolean;
  /**
   * Makes the error of a bad variable; the stdio configuration passes its own, so its errors
   * name their variable for the diagnostics. @default a `NOT_CONFIGURED` `SessMcpError`
   */
  readonly notConfigured?: NotConfigured;
}

/** Unset and empty both mean "not set" (hosts expand a missing variable to ""). */
function optional(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * The webhook the stdio environment configures, or `undefined` when neither
 * `SESS_MCP_WEBHOOK_URL` nor `SESS_MCP_WEBHOOK_SECRET` is set.
 *
 * @throws SessMcpError `NOT_CONFIGURED` naming the variable and the rule, never its value: a URL
 *   that is not usable, a secret list that breaks the rule, one of the two without the other, a
 *   flag other than 1, a test scale out of range.
 */
export function readWebhookEnv(
  env: Readonly<Record<string, string | undefined>>,
  context: WebhookEnvContext,
): WebhookConfig | undefined {
  const fail = (variable: string, message: string): never => {
    throw (context.notConfigured ?? plainNotConfigured)(variable, message);
  };
  const scale = optional(env, WEBHOOK_ENV.testScale);
  if (scale !== undefined && !WEBHOOK_SCALE_RULE.test(scale)) {
    fail(WEBHOOK_ENV.testScale, `${WEBHOOK_ENV.testScale} must be ${WEBHOOK_SCALE_RULE.text}, or unset.`);
  }
  const flag = optional(env, WEBHOOK_ENV.allowPrivate);
  if (flag !== undefined && flag !== '0' && flag !== '1') {
    fail(WEBHOOK_ENV.allowPrivate, `${WEBHOOK_ENV.allowPrivate} must be 1 or unset.`);
  }
  const allowPrivate = flag === '1';
  const url = optional(env, WEBHOOK_ENV.url);
  const secretText = optional(env, WEBHOOK_ENV.secret);
  if (url === undefined && secretText === undefined) return undefined;
  if (url === undefined) {
    return fail(WEBHOOK_ENV.url, `${WEBHOOK_ENV.url} is required when ${WEBHOOK_ENV.secret} is set.`);
  }
  const destination = checkWebhookDestination(url, {
    allowPrivate,
    allowInsecureLocalhost: context.allowInsecureLocalhost,
  });
  if ('refusal' in destination) {
    const hint =
      destination.refusal === 'forbidden_address'
        ? ` (${WEBHOOK_ENV.allowPrivate}=1 allows it)`
        : ` Use an https URL such as ${URL_EXAMPLE}.`;
    fail(
      WEBHOOK_ENV.url,
      `${WEBHOOK_ENV.url} is not usable: ${WEBHOOK_DESTINATION_TEXT[destination.refusal]}.${hint}`,
    );
  }
  if (secretText === undefined) {
    return fail(
      WEBHOOK_ENV.secret,
      `${WEBHOOK_ENV.secret} is required when ${WEBHOOK_ENV.url} is set: ${SECRETS_TEXT}, separated by spaces.`,
    );
  }
  const secrets = secretText.trim().split(/\s+/);
  const bad = secretsProblem(secrets);
  if (bad !== undefined) {
    fail(
      WEBHOOK_ENV.secret,
      `${WEBHOOK_ENV.secret} must be ${SECRETS_TEXT}, separated by spaces${bad === 0 ? '' : `; secret ${bad} is not`}.`,
    );
  }
  return { endpoint: { url, secrets }, allowPrivate };
}

/** The sender settings of an HTTP face's webhook option, before they are checked. */
export interface WebhookSettings {
  /** Allow loopback, private and link-local addresses (a receiver in your own network). @default false */
  allowPrivate?: boolean;
  /** The only host names the webhook may reach; required where the runtime cannot see addresses. */
  allowedHosts?: readonly string[];
  /** One attempt's time, in milliseconds (100 to 120 000). @default 15_000 */
  timeoutMs?: number;
}

/** The webhook option of an HTTP face, before it is checked: one receiver, and its settings. */
export interface WebhookOptions extends WebhookSettings {
  /** The receiver's URL: HTTPS, no credentials or fragment. */
  url: string;
  /** 1 to 8 `whsec_` secrets; all sign every attempt. */
  secrets: readonly string[];
}

/** The keys of the webhook option bag. */
export const WEBHOOK_OPTION_KEYS = optionNames<WebhookOptions>()(
  'url',
  'secrets',
  'allowPrivate',
  'allowedHosts',
  'timeoutMs',
);

/**
 * A sender option's allowed hosts: a list of 1 to {@link MAX_WEBHOOK_ALLOWED_HOSTS} host names as
 * `URL` writes them; `undefined` when absent.
 */
export function readAllowedHosts(read: OptionReader, option: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    value.length > MAX_WEBHOOK_ALLOWED_HOSTS ||
    !value.every(isAllowedHostEntry)
  ) {
    read.fail(
      option,
      `must be a list of 1 to ${MAX_WEBHOOK_ALLOWED_HOSTS} host names in lower case, without scheme, port or path (e.g. "hooks.example.com")`,
    );
  }
  return [...(value as string[])];
}

/**
 * The webhook option `option` of a factory's bag (e.g. `webhook` of an HTTP handler), checked:
 * every failure is the factory's `TypeError` naming `<option>.<key>`, and never holds the value.
 * `undefined` when the option is absent.
 *
 * A face reads its bag with `readOptions` first, then hands this the reader and its `webhook`
 * value: `readWebhookOptions(read, 'webhook', options.webhook)`.
 */
export function readWebhookOptions(
  read: OptionReader,
  option: string,
  value: unknown,
  context: Pick<WebhookDestinationOptions, 'allowInsecureLocalhost'> = {},
): WebhookConfig | undefined {
  if (value === undefined) return undefined;
  const bag = read.bag(option, value, WEBHOOK_OPTION_KEYS);
  const { allowPrivate, allowedHosts, timeoutMs } = readSettings(read, option, bag);
  if (typeof bag.url !== 'string')
    read.fail(`${option}.url`, `is required: an https URL such as ${URL_EXAMPLE}`);
  const destination = checkWebhookDestination(bag.url, {
    allowPrivate,
    ...(allowedHosts === undefined ? {} : { allowedHosts }),
    ...(context.allowInsecureLocalhost === true ? { allowInsecureLocalhost: true } : {}),
  });
  if ('refusal' in destination) {
    read.fail(`${option}.url`, `is not usable: ${WEBHOOK_DESTINATION_TEXT[destination.refusal]}`);
  }
  const bad = secretsProblem(bag.secrets);
  if (bad !== undefined) {
    read.fail(
      `${option}.secrets`,
      `must be a list of ${SECRETS_TEXT}${bad === 0 ? '' : `; secret ${bad} is not`}`,
    );
  }
  return {
    endpoint: { url: bag.url as string, secrets: [...(bag.secrets as string[])] },
    allowPrivate,
    ...(allowedHosts === undefined ? {} : { allowedHosts }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}

/** The sender settings of a checked webhook bag. */
function readSettings(
  read: OptionReader,
  option: string,
  bag: Record<string, unknown>,
): { allowPrivate: boolean; allowedHosts: string[] | undefined; timeoutMs: number | undefined } {
  return {
    allowPrivate: read.boolean(`${option}.allowPrivate`, bag.allowPrivate, false),
    allowedHosts: readAllowedHosts(read, `${option}.allowedHosts`, bag.allowedHosts),
    timeoutMs: read.optionalInteger(`${option}.timeoutMs`, bag.timeoutMs, WEBHOOK_TIMEOUT_RANGE),
  };
}

/**
 * The webhook option `option` when a routing function (`routedBy`, e.g. `webhookFor`) gives each
 * event its receiver: only the sender settings, checked as {@link readWebhookOptions} checks them;
 * a `url` or `secrets` is refused, naming both options (one source of receivers). An absent option
 * is the default settings.
 */
export function readRoutedWebhookOptions(
  read: OptionReader,
  option: string,
  value: unknown,
  routedBy: string,
): WebhookSenderConfig {
  if (value === undefined) return { allowPrivate: false };
  const bag = read.bag(option, value, WEBHOOK_OPTION_KEYS);
  for (const key of ['url', 'secrets'] as const) {
    if (bag[key] !== undefined) {
      read.fail(
        `${option}.${key}`,
        `is not used with ${routedBy}, which gives each event its receiver's url and secrets: give one of the two`,
      );
    }
  }
  const { allowPrivate, allowedHosts, timeoutMs } = readSettings(read, option, bag);
  return {
    allowPrivate,
    ...(allowedHosts === undefined ? {} : { allowedHosts }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}
