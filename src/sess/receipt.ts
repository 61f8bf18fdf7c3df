/**
 * Receipt verification: proves that one answer (Session, revision, event, Surface, answer, and
 * for an Ask respondent its Ask and name when the receipt states them) was signed by a receipt
 * key of the trusted workspace, with Ed25519 (`jws.ts`), in the order `docs/sess-api.md`
 * ("Verifying a receipt") gives. The keys come from the key-set cache (`key-set.ts`), which
 * decides when the set is fetched.
 *
 * It does not decide what the trusted workspace is (the client does), records nothing, and never
 * puts a receipt, a key or an answer value in an error message.
 */
import { canonicalJson } from '../core/codec/canonical-json.js';
import { sameJsonValue } from '../core/codec/same-json.js';
import { optionNames, readOptions } from '../core/contract/options.js';
import type { Clock, VerifiedReceipt, VerifyResponseInput } from '../core/contract/ports.js';
import { SessApiError } from '../core/contract/ports.js';
import { RECEIPT_ISSUER_RULE } from '../core/contract/rules.js';
import { digestCanonicalJson } from './digest.js';
import { verificationAborted as aborted, refuseReceipt as refuse } from './errors.js';
import { type ParsedCompactJws, parseCompactJws, verifyCompactJwsSignature } from './jws.js';
import { createKeySetCache, type ReceiptKeySetStatus } from './key-set.js';
import { type ConnectionOptions, type ConnectionSettings, readConnectionOptions } from './settings.js';
import { type ReceiptClaims, readReceiptClaims, readReceiptHeader } from './wire-reader.js';

/** How many verified receipts one verifier remembers (the oldest go first). */
const MAX_REMEMBERED_RECEIPTS = 1_024;

/** How many digested values one verifier remembers (the oldest go first). */
const MAX_REMEMBERED_DIGESTS = 256;

/** Canonical JSON longer than this is digested every time rather than kept as a memo key. */
const MAX_REMEMBERED_JSON_LENGTH = 16_384;

/** Add `key → value` to an insertion-ordered memo, dropping its oldest entry past `max`. */
function remember<K, V>(memo: Map<K, V>, max: number, key: K, value: V): void {
  memo.delete(key);
  memo.set(key, value);
  if (memo.size > max) memo.delete(memo.keys().next().value as K);
}

/** A value's canonical JSON and its digest. */
interface Digested {
  text: string;
  digest: string;
}

/** A receipt whose signature verified under `key`, and what its claims last matched. */
interface SignedReceipt {
  key: CryptoKey;
  read: ReadReceipt;
  /**
   * The Surface and answer the claims matched (their canonical JSON, and copies parsed from it
   * at the first repeat), or `undefined` before a match.
   */
  matched: { surface: Digested; answer: Digested; values: [unknown, unknown] | undefined } | undefined;
}

/** A receipt's parts, read and checked for shape (before its signature is). */
interface ReadReceipt {
  jws: ParsedCompactJws;
  kid: string;
  claims: ReceiptClaims;
  actMatches: boolean;
}

/** Parse a receipt and check its header and claims for shape; `malformed` otherwise. */
function readReceipt(receipt: string): ReadReceipt {
  const jws = parseCompactJws(receipt);
  if (jws === undefined) throw refuse('malformed');
  // Another actor assurance is a well-formed receipt for something else: a claims mismatch
  // (decided after the signature), not a malformed receipt. The claims reader reads any string
  // `act` as `link_holder`, so the actual one is kept here.
  const act = jws.payload.act;
  const header = readReceiptHeader(jws.header);
  const claims = readReceiptClaims(jws.payload);
  if (header === undefined || claims === undefined) throw refuse('malformed');
  if (Object.keys(jws.header).some((name) => name !== 'alg' && name !== 'kid' && name !== 'typ')) {
    // `crit`, `jwk`, `x5u` and friends would change what the signature means: refuse them.
    throw refuse('malformed');
  }
  return { jws, kid: header.kid, claims, actMatches: act === 'link_holder' };
}

/** The largest `iat` a `Date` can hold, in seconds. */
const MAX_IAT_SECONDS = 8_640_000_000_000;

/** Options of {@link createReceiptVerifier}. */
export interface ReceiptVerifierOptions extends ConnectionOptions {
  /** The API origin; the key set is read from its well-known path. Validated like the client's. */
  origin: string;
  /** Testing only: allow an `http://` loopback origin. @default false */
  allowInsecureLocalhost?: boolean;
  /**
   * The expected `iss` claim: printable ASCII without spaces, at most 2048 characters.
   * @default origin
   */
  issuer?: string;
  /** The `fetch` to use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Time, for the cooldown and the key set's age. @default systemClock */
  clock?: Clock;
  /** At most one key-set fetch per this many milliseconds. @default 10 000 */
  keyRefreshCooldownMs?: number;
  /**
   * How long a fetched key set is trusted, in milliseconds; past it the set is fetched again
   * before a receipt is verified, so a key Sess withdrew stops verifying. At least
   * `keyRefreshCooldownMs`. @default 600 000 (10 minutes)
   */
  keySetMaxAgeMs?: number;
  /** Deadline of one key-set fetch, in milliseconds. @default 30 000 */
  requestTimeoutMs?: number;
}

/** The Ask a respondent's answer belongs to, for receipts that state it. */
export interface ReceiptAskContext {
  /** The Ask the respondent's Session belongs to. */
  askId: string;
  /** The name the Ask view gives the respondent (absent when it gives none). */
  respondentName?: string | undefined;
}

/** The exact answer one receipt must prove, and against which workspace. */
export interface ReceiptCheck extends VerifyResponseInput {
  /** The trusted workspace; `undefined` fails with `context_missing`. */
  workspaceId: string | undefined;
  /**
   * For an Ask respondent's answer: its Ask and name. A receipt that states an Ask id (`ask`) or a
   * name (`name`) must state these; a receipt without them still verifies. Without a context the
   * two claims are not compared.
   */
  ask?: ReceiptAskContext | undefined;
}

/** Verifies receipts against one origin's key set, with its own cache. */
export interface ReceiptVerifier {
  /**
   * Verify one receipt. Throws {@link SessApiError} of kind `verification` (with `reason`), or
   * `aborted` when the caller's signal ends a key-set fetch.
   */
  verify(check: ReceiptCheck, signal?: AbortSignal): Promise<VerifiedReceipt>;
  /**
   * The state of the verifier's key set now (held or not, its age in seconds, why the last fetch
   * failed), for a health report: it fetches nothing. The verifiers of
   * {@link createReceiptVerifier} have it; a verifier of the host's own may leave it out.
   */
  keySetStatus?(): ReceiptKeySetStatus;
}

/** Whether the claims of a respondent's receipt agree with its Ask (claims that are absent agree). */
function askClaimsMatch(
  claims: { ask?: string; name?: string },
  ask: ReceiptAskContext | undefined,
): boolean {
  if (ask === undefined) return true;
  if (claims.ask !== undefined && claims.ask !== ask.askId) return false;
  return claims.name === undefined || claims.name === ask.respondentName;
}

/** The option names of {@link ReceiptVerifierOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<ReceiptVerifierOptions>()(
  'origin',
  'allowInsecureLocalhost',
  'issuer',
  'fetch',
  'clock',
  'keyRefreshCooldownMs',
  'keySetMaxAgeMs',
  'requestTimeoutMs',
);

/**
 * Create a receipt verifier with its own key-set cache.
 *
 * @throws TypeError naming the option when an option is invalid.
 *
 * @example
 * ```ts source="examples/snippets/sess.examples.ts#createReceiptVerifier"
 * const verifier = createReceiptVerifier({ origin: 'https://api.sess.si' });
 * await verifier.verify({ workspaceId, sessionId, revision, eventId, surface, answer, receipt });
 * // One verifier shared by the clients a face builds per call keeps one key-set cache:
 * const perCall = createSessClient({ origin: 'https://api.sess.si', credential, receiptVerifier: verifier });
 * ```
 */
export function createReceiptVerifier(options: ReceiptVerifierOptions): ReceiptVerifier {
  const read = readOptions('createReceiptVerifier', options, { known: KNOWN_OPTIONS });
  const config = readConnectionOptions(read, options);
  const issuer = read.optionalRule('issuer', options.issuer, RECEIPT_ISSUER_RULE) ?? config.origin;
  return receiptVerifier(config, issuer);
}

/** A verifier over checked settings (the client builds its own with its settings). */
export function receiptVerifier(config: ConnectionSettings, issuer: string): ReceiptVerifier {
  const keys = createKeySetCache(config);
  // Receipts whose signature verified, each with the key object it verified under: the same
  // bytes under the same key verify the same way, so a repeat (`sess_response` on a saved
  // answer) is not parsed or checked again. The claims are compared on every call, and a key set
  // fetched again brings new key objects, whose receipts verify afresh.
  const signed = new Map<string, SignedReceipt>();
  // Digests by the canonical JSON they hash: the Surface of a saved record is digested once.
  const digests = new Map<string, string>();
  const digest = async (value: unknown): Promise<Digested> => {
    const text = canonicalJson(value);
    const known = digests.get(text);
    if (known !== undefined) return { text, digest: known };
    const computed = await digestCanonicalJson(text);
    if (text.length <= MAX_REMEMBERED_JSON_LENGTH) remember(digests, MAX_REMEMBERED_DIGESTS, text, computed);
    return { text, digest: computed };
  };
  // A repeat of a receipt whose claims matched: when the Surface and the answer are the same
  // JSON values as then (compared as values, against copies parsed from their canonical JSON),
  // their digests are the same, and neither is written or hashed again.
  const digestsOf = (
    known: SignedReceipt | undefined,
    surface: unknown,
    answer: unknown,
  ): Promise<[Digested, Digested]> | [Digested, Digested] => {
    const matched = known?.matched;
    if (matched !== undefined) {
      matched.values ??= [JSON.parse(matched.surface.text), JSON.parse(matched.answer.text)];
      if (sameJsonValue(surface, matched.values[0]) && sameJsonValue(answer, matched.values[1])) {
        return [matched.surface, matched.answer];
      }
    }
    return Promise.all([digest(surface), digest(answer)]);
  };
  return {
    keySetStatus: () => keys.status(),
    async verify(check, signal) {
      if (signal?.aborted) throw aborted();
      if (check.workspaceId === undefined) throw refuse('context_missing');
      const known = signed.get(check.receipt);
      const read = known?.read ?? readReceipt(check.receipt);
      const { kid, claims: c, actMatches } = read;
      const key = await keys.keyFor(kid, signal);
      if (key.workspaceId !== check.workspaceId) throw refuse('foreign_key');
      // The digests are taken while the signature is checked (with WebCrypto each is a job on
      // another thread); a bad signature is still the error reported.
      const answer = { action: check.answer.action, values: check.answer.values };
      const reused = known?.key === key.key ? known : undefined;
      const digested = (async () => digestsOf(reused, check.surface, answer))();
      digested.catch(() => {});
      let entry = reused;
      if (entry === undefined) {
        if (!(await verifyCompactJwsSignature(read.jws, key.key))) throw refuse('bad_signature');
        entry = { key: key.key, read, matched: undefined };
        remember(signed, MAX_REMEMBERED_RECEIPTS, check.receipt, entry);
      }
      let surface: Digested;
      let answered: Digested;
      try {
        [surface, answered] = await digested;
      } catch {
        throw new SessApiError(
          'configuration',
          'The Surface or answer to verify is not JSON; nothing was verified.',
        );
      }
      // A time `Date` cannot hold is not a receipt Sess could have issued.
      if (c.iat > MAX_IAT_SECONDS) throw refuse('malformed');
      const matches =
        c.iss === issuer &&
        c.ws === check.workspaceId &&
        c.sid === check.sessionId &&
        c.rev === check.revision &&
        c.evt === check.eventId &&
        c.sdg === surface.digest &&
        c.adg === answered.digest &&
        actMatches &&
        askClaimsMatch(c, check.ask);
      if (!matches) throw refuse('claims_mismatch');
      // Kept within the same bound as the digest memo, so 1 024 receipts stay small.
      const small = surface.text.length + answered.text.length <= MAX_REMEMBERED_JSON_LENGTH;
      if (entry.matched?.surface !== surface)
        entry.matched = small ? { surface, answer: answered, values: undefined } : undefined;
      return {
        workspaceId: c.ws,
        sessionId: c.sid,
        revision: c.rev,
        eventId: c.evt,
        keyId: kid,
        issuedAt: new Date(c.iat * 1000).toISOString(),
        actorAssurance: 'link_holder',
      };
    },
  };
}
