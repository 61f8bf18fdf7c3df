/**
 * The secrets audit every end-to-end test uses: it collects the secrets a test learns (API keys,
 * bearer tokens, Sess links and their tokens, receipts, answer values), captures what the code
 * under test writes where secrets must never go (stderr, diagnostics, logs, error messages), and
 * fails the test when any secret shows up there — raw, JSON-escaped, URL-encoded or base64.
 *
 * It does not decide what is a secret: the test registers each one as it learns it. The failure
 * message names the secret's label and the source, never the secret itself.
 *
 * @example
 * ```ts
 * const audit = createSecretsAudit();
 * audit.secret(runtime.apiKey, 'api key');
 * audit.watch(child.stderr, 'server stderr');
 * audit.url(result.interaction.humanUrl, 'sess link');
 * audit.assertClean(); // or let useSecretsAudit() check after each test
 * ```
 */
import { afterEach } from 'vitest';

/** What `watch` accepts: a readable stream, a live array (strings or objects), or a getter. */
export type AuditSource =
  | { on(event: 'data', listener: (chunk: unknown) => void): unknown }
  | readonly unknown[]
  | (() => unknown);

/** The audit of one test. */
export interface SecretsAudit {
  /**
   * Register one secret. Values shorter than 8 characters are refused (they would match by
   * chance): give answers distinctive values such as `"lunch at 13:45 zebra"`.
   */
  secret(value: string, label?: string): void;
  /** Register a link: the whole URL plus each path segment and query value of 12+ characters. */
  url(value: string, label?: string): void;
  /**
   * Register every string leaf of an answer (or any JSON value) of at least 8 characters.
   * Shorter strings, numbers and booleans are not registered: choose distinctive answer texts.
   */
  answer(values: unknown, label?: string): void;
  /** Capture a place secrets must not reach. Arrays and getters are read at `assertClean` time. */
  watch(source: AuditSource, name?: string): void;
  /** Capture one piece of text directly (an error message, a log line). */
  text(content: string, name?: string): void;
  /** Everything captured so far from `name` (or from all sources), as text. */
  captured(name?: string): string;
  /** The registered secrets' labels (for tests of the audit itself). */
  labels(): string[];
  /** Throw when any registered secret appears in anything captured. */
  assertClean(): void;
}

const MIN_SECRET_LENGTH = 8;
const MIN_TOKEN_LENGTH = 12;

function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The forms a secret may take once written somewhere. */
function variants(secret: string): string[] {
  const forms = new Set<string>([secret]);
  forms.add(JSON.stringify(secret).slice(1, -1));
  forms.add(encodeURIComponent(secret));
  forms.add(Buffer.from(secret, 'utf8').toString('base64').replace(/=+$/, ''));
  forms.add(Buffer.from(secret, 'utf8').toString('base64url').replace(/=+$/, ''));
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/** Create an audit. Call `assertClean()` yourself, or use {@link useSecretsAudit}. */
export function createSecretsAudit(): SecretsAudit {
  const secrets: Array<{ value: string; label: string }> = [];
  const sources: Array<{ name: string; read: () => string }> = [];

  const audit: SecretsAudit = {
    secret(value, label = 'secret') {
      if (typeof value !== 'string') throw new TypeError(`audit.secret(${label}): expected a string`);
      if (value.length < MIN_SECRET_LENGTH) {
        throw new TypeError(
          `audit.secret(${label}): a secret of ${value.length} characters would match by chance; use a distinctive value of at least ${MIN_SECRET_LENGTH}`,
        );
      }
      if (!secrets.some((s) => s.value === value)) secrets.push({ value, label });
    },
    url(value, label = 'link') {
      audit.secret(value, label);
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return;
      }
      for (const segment of url.pathname.split('/')) {
        const decoded = safeDecode(segment);
        if (decoded.length >= MIN_TOKEN_LENGTH) audit.secret(decoded, `${label} path token`);
      }
      for (const [, v] of url.searchParams) {
        if (v.length >= MIN_TOKEN_LENGTH) audit.secret(v, `${label} query token`);
      }
      if (url.hash.length > MIN_TOKEN_LENGTH) audit.secret(url.hash.slice(1), `${label} fragment`);
    },
    answer(values, label = 'answer value') {
      const visit = (v: unknown): void => {
        if (typeof v === 'string') {
          if (v.length >= MIN_SECRET_LENGTH) audit.secret(v, label);
        } else if (Array.isArray(v)) {
          v.forEach(visit);
        } else if (v !== null && typeof v === 'object') {
          Object.values(v).forEach(visit);
        }
      };
      visit(values);
    },
    watch(source, name = `source ${sources.length + 1}`) {
      if (typeof source === 'function') {
        sources.push({ name, read: () => toText(source()) });
      } else if (Array.isArray(source)) {
        const list = source as readonly unknown[];
        sources.push({ name, read: () => list.map(toText).join('\n') });
      } else {
        const chunks: string[] = [];
        (source as { on(event: 'data', listener: (chunk: unknown) => void): unknown }).on('data', (chunk) => {
          chunks.push(toText(chunk));
        });
        sources.push({ name, read: () => chunks.join('') });
      }
    },
    text(content, name = 'text') {
      sources.push({ name, read: () => content });
    },
    captured(name) {
      return sources
        .filter((s) => name === undefined || s.name === name)
        .map((s) => s.read())
        .join('\n');
    },
    labels() {
      return secrets.map((s) => s.label);
    },
    assertClean() {
      const leaks: string[] = [];
      for (const source of sources) {
        const content = source.read();
        for (const { value, label } of secrets) {
          if (variants(value).some((form) => content.includes(form)))
            leaks.push(`${label} in ${source.name}`);
        }
      }
      if (leaks.length > 0) {
        throw new Error(`Secrets audit failed: ${[...new Set(leaks)].join('; ')}`);
      }
    },
  };
  return audit;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * An audit for the current test file that is checked after every test and then replaced by a
 * fresh one. Read `.current` inside each test.
 *
 * @example
 * ```ts
 * const audits = useSecretsAudit();
 * it('…', () => { audits.current.secret(key, 'api key'); … });
 * ```
 */
export function useSecretsAudit(): { readonly current: SecretsAudit } {
  const holder = { current: createSecretsAudit() };
  afterEach(() => {
    const audit = holder.current;
    holder.current = createSecretsAudit();
    audit.assertClean();
  });
  return holder;
}
