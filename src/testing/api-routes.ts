/**
 * The API routes of the local Sess runtime (`/v1/…` and the JWKS): each request is checked
 * exactly in the order `docs/sess-api.md` gives (path and method, then the key, then the body) and
 * handed to the model; every call runs under the fault queue (`fault-application.ts`).
 *
 * It keeps no state of its own besides the request counters it is given, and never logs: not a
 * key, a link, a receipt or an answer value.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import type { SessionStatus } from '../core/contract/ports.js';
import { WAIT_CEILING_MS } from '../core/contract/rules.js';
import type { Surface } from '../core/model/surface.js';
import {
  CloseAskRequestSchema,
  CompleteRequestSchema,
  CreateAskRequestSchema,
  CreateSessionRequestSchema,
  DEFAULT_EXPIRES_IN,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  MAX_WITHDRAW_REASON_LENGTH,
  MIN_EXPIRES_IN,
  PublishRequestSchema,
  SESSION_STATUSES,
  SurfaceSchema,
  WithdrawRequestSchema,
} from '../sess/wire.js';
import { ApiFailure, type ApiResult, failureResult, okResult } from './api-failure.js';
import type { ApiCall } from './fault-application.js';
import type { LocalEndpoint } from './faults.js';
import { type ClientWatch, readJson, sendJson } from './http-io.js';
import { IdempotentReplies } from './idempotency.js';
import type { LocalModel } from './model.js';
import { digestSync, type SessionRecord } from './records.js';
import { checkSurfaceRules } from './surface-rules.js';
import { codePoints, escapePointer } from './text.js';
import type { LocalWithdrawal } from './withdrawals.js';

/** Request counters: one per API endpoint, and `page` for the answer page. */
export type RequestCounts = Record<LocalEndpoint | 'page', number>;

/** @internal Request counters, all zero. */
export function emptyCounts(): RequestCounts {
  return {
    create: 0,
    get: 0,
    wait: 0,
    publish: 0,
    complete: 0,
    withdraw: 0,
    createAsk: 0,
    getAsk: 0,
    closeAsk: 0,
    jwks: 0,
    page: 0,
  };
}

/** What the API routes are built from. */
export interface ApiRoutesOptions {
  model: LocalModel;
  counts: RequestCounts;
  /** Send `Sess-Workspace-Id` on responses. */
  workspaceHeader: boolean;
  /** Whether withdraw and Ask close are offered (`LocalSessOptions.withdrawal`). */
  withdrawal: LocalWithdrawal;
  /** Runs one call under the fault queue. */
  applyFaults(call: ApiCall): Promise<void>;
}

/** A route's handler; `undefined` when the path is not an API path. */
export type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> | undefined;

function pointer(path: readonly { key: unknown }[] | undefined, base = ''): string {
  if (!path || path.length === 0) return base;
  return base + path.map((p) => `/${escapePointer(String(p.key))}`).join('');
}

function invalid(issues: readonly v.BaseIssue<unknown>[], base = ''): ApiFailure {
  const issue = issues[0]!;
  const field = pointer(issue.path as { key: unknown }[] | undefined, base) || '/';
  return new ApiFailure(422, 'invalid_request', `${field}: ${issue.message}`, { field });
}

function idempotencyKey(req: IncomingMessage): string {
  const key = req.headers['idempotency-key'];
  if (typeof key !== 'string' || key.length === 0) {
    throw new ApiFailure(400, 'invalid_request', 'The Idempotency-Key header is required.');
  }
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ApiFailure(
      400,
      'invalid_request',
      `The Idempotency-Key header must be 1–${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters without spaces.`,
    );
  }
  return key;
}

function ifMatch(req: IncomingMessage): number {
  const raw = req.headers['if-match'];
  const m = typeof raw === 'string' ? /^\s*(?:"(\d{1,15})"|(\d{1,15}))\s*$/.exec(raw) : null;
  const n = m ? Number(m[1] ?? m[2]) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new ApiFailure(
      400,
      'invalid_request',
      'The If-Match header must be the current revision, as "<revision>".',
    );
  }
  return n;
}

function checkExpiresIn(value: unknown, field: string): void {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value < MIN_EXPIRES_IN) {
    throw new ApiFailure(
      422,
      'invalid_request',
      `${field} is ${value} seconds; the minimum is ${MIN_EXPIRES_IN}.`,
      { field, limit: MIN_EXPIRES_IN, length: value },
    );
  }
}

function parseSurface(value: unknown, base: string): Surface {
  const parsed = v.safeParse(SurfaceSchema, value);
  if (!parsed.success) throw invalid(parsed.issues, base);
  const surface = parsed.output as Surface;
  const violation = checkSurfaceRules(surface, base);
  if (violation) {
    const { field, message, ...rest } = violation;
    throw new ApiFailure(422, 'invalid_request', message, { field, ...rest });
  }
  return surface;
}

/** The `reason` of a withdraw or close: at most {@link MAX_WITHDRAW_REASON_LENGTH} code points. */
function checkReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  const length = codePoints(reason);
  if (length > MAX_WITHDRAW_REASON_LENGTH) {
    throw new ApiFailure(
      422,
      'invalid_request',
      `/reason is ${length} characters; at most ${MAX_WITHDRAW_REASON_LENGTH}.`,
      { field: '/reason', limit: MAX_WITHDRAW_REASON_LENGTH, length },
    );
  }
  return reason;
}

/** The `wait` query: revision ≥ 1, a wire status, `timeout_ms` from 0 to the wait ceiling. */
function waitQuery(q: URLSearchParams): { revision: number; status: SessionStatus; timeout: number } {
  const revision = Number(q.get('revision'));
  const status = q.get('status') as SessionStatus;
  const timeout = Number(q.get('timeout_ms'));
  if (!/^\d{1,15}$/.test(q.get('revision') ?? '') || !Number.isSafeInteger(revision) || revision < 1) {
    throw new ApiFailure(400, 'invalid_request', 'The query parameter revision must be an integer ≥ 1.');
  }
  if (!(SESSION_STATUSES as readonly string[]).includes(status)) {
    throw new ApiFailure(
      400,
      'invalid_request',
      `The query parameter status must be one of ${SESSION_STATUSES.join(', ')}.`,
    );
  }
  if (!/^\d{1,6}$/.test(q.get('timeout_ms') ?? '') || timeout > WAIT_CEILING_MS) {
    throw new ApiFailure(
      400,
      'invalid_request',
      `The query parameter timeout_ms must be an integer from 0 to ${WAIT_CEILING_MS}.`,
    );
  }
  return { revision, status, timeout };
}

/** Decode one path segment; an invalid escape matches nothing. */
function segment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return '';
  }
}

/** @internal The API routes of a runtime. */
export function createApiRoutes(options: ApiRoutesOptions): Route {
  const { model, counts } = options;

  const workspaceOf = (req: IncomingMessage): string | undefined => {
    const header = req.headers.authorization;
    const m = typeof header === 'string' ? /^Bearer ([\x21-\x7e]+)$/.exec(header) : null;
    return m ? model.apiKeys.get(m[1]!) : undefined;
  };
  const auth = (req: IncomingMessage): string => {
    const ws = workspaceOf(req);
    if (ws === undefined)
      throw new ApiFailure(401, 'unauthorized', 'A valid API key is required (Authorization: Bearer <key>).');
    return ws;
  };
  const send = (res: ServerResponse, result: ApiResult, ws: string | undefined) =>
    sendJson(
      res,
      result,
      ws !== undefined && options.workspaceHeader && result.status !== 401 ? { 'sess-workspace-id': ws } : {},
    );

  const sessionResult = (s: SessionRecord, status = 200, headers: Record<string, string> = {}) =>
    okResult(status, model.sessionView(s, false), { etag: `"${s.revision}"`, ...headers });

  /**
   * An idempotent `POST`: the key, the body, the Idempotency-Key (and the If-Match revision when
   * `withRevision`), then `prepare` under the stored replies of (workspace, path, key).
   */
  const idempotentPost =
    (
      req: IncomingMessage,
      path: string,
      withRevision: boolean,
      prepare: (ws: string, body: Record<string, unknown>, revision: number) => Promise<() => ApiResult>,
    ) =>
    async () => {
      const ws = auth(req);
      const body = await readJson(req);
      const key = idempotencyKey(req);
      const revision = withRevision ? ifMatch(req) : null;
      return model.replies.run(
        `${ws}\nPOST\n${path}\n${key}`,
        IdempotentReplies.fingerprint(body, revision),
        () => prepare(ws, body, revision ?? 0),
      );
    };

  const create = (req: IncomingMessage) =>
    idempotentPost(req, '/v1/sessions', false, async (ws, body) => {
      checkExpiresIn(body.expires_in, '/expires_in');
      const parsed = v.safeParse(CreateSessionRequestSchema, body);
      if (!parsed.success) throw invalid(parsed.issues);
      const surface = parseSurface(parsed.output.interaction, '/interaction');
      const lifetime = model.lifetime(parsed.output.expires_in, '/expires_in');
      const sdg = digestSync(surface);
      return () => {
        const s = model.createSession(ws, surface, sdg, lifetime);
        return sessionResult(s, 201, { location: `/v1/sessions/${s.id}` });
      };
    });

  const mutate = (req: IncomingMessage, id: string, kind: 'publish' | 'complete') =>
    idempotentPost(
      req,
      kind === 'publish' ? `/v1/sessions/${id}/revisions` : `/v1/sessions/${id}/complete`,
      true,
      async (ws, body, revision) => {
        if (kind === 'complete') {
          const parsed = v.safeParse(CompleteRequestSchema, body);
          if (!parsed.success) throw invalid(parsed.issues);
          return () => sessionResult(model.complete(ws, id, revision, parsed.output.response_event_id));
        }
        const parsed = v.safeParse(PublishRequestSchema, body);
        if (!parsed.success) throw invalid(parsed.issues);
        const surface = parseSurface(parsed.output.interaction, '/interaction');
        const sdg = digestSync(surface);
        return () =>
          sessionResult(model.publish(ws, id, revision, parsed.output.response_event_id, surface, sdg));
      },
    );

  const withdraw = (req: IncomingMessage, id: string) =>
    idempotentPost(req, `/v1/sessions/${id}/withdraw`, true, async (ws, body, revision) => {
      const parsed = v.safeParse(WithdrawRequestSchema, body);
      if (!parsed.success) throw invalid(parsed.issues);
      const reason = checkReason(parsed.output.reason);
      return () => sessionResult(model.withdraw(ws, id, revision, reason));
    });

  const closeAsk = (req: IncomingMessage, id: string) =>
    idempotentPost(req, `/v1/asks/${id}/close`, true, async (ws, body, revision) => {
      const parsed = v.safeParse(CloseAskRequestSchema, body);
      if (!parsed.success) throw invalid(parsed.issues);
      const reason = checkReason(parsed.output.reason);
      return () => okResult(200, model.askView(model.closeAsk(ws, id, revision, reason)));
    });

  const wait = (req: IncomingMessage, id: string, url: URL) => async (client: ClientWatch) => {
    const ws = auth(req);
    const { revision, status, timeout } = waitQuery(url.searchParams);
    const s = model.getSession(ws, id);
    await model.waits.wait(s, revision, status, timeout, client.signal);
    return sessionResult(s);
  };

  const createAsk = (req: IncomingMessage) =>
    idempotentPost(req, '/v1/asks', false, async (ws, body) => {
      checkExpiresIn(body.expires_in, '/expires_in');
      const r = body.respondents as Record<string, unknown> | undefined;
      if (typeof r === 'object' && r !== null) {
        checkExpiresIn(r.expires_in, '/respondents/expires_in');
        checkExpiresIn(r.respondent_expires_in, '/respondents/respondent_expires_in');
      }
      const parsed = v.safeParse(CreateAskRequestSchema, body);
      if (!parsed.success) throw invalid(parsed.issues);
      const { respondents } = parsed.output;
      const surface = parseSurface(parsed.output.interaction, '/interaction');
      if (parsed.output.expires_in !== undefined && respondents.expires_in !== undefined) {
        throw new ApiFailure(
          422,
          'invalid_request',
          'Give one deadline: respondents.expires_in or expires_in, not both.',
          { field: '/respondents/expires_in' },
        );
      }
      const lifetimeField = respondents.expires_in !== undefined ? '/respondents/expires_in' : '/expires_in';
      const lifetime = model.lifetime(
        respondents.expires_in ?? parsed.output.expires_in ?? DEFAULT_EXPIRES_IN,
        lifetimeField,
      );
      if (respondents.max > model.plan.maxRespondents) {
        throw new ApiFailure(
          422,
          'invalid_request',
          `/respondents/max is ${respondents.max}; the plan allows at most ${model.plan.maxRespondents}.`,
          { field: '/respondents/max', limit: model.plan.maxRespondents, length: respondents.max },
        );
      }
      const respondentLifetime = respondents.respondent_expires_in ?? lifetime;
      if (respondentLifetime > lifetime) {
        throw new ApiFailure(
          422,
          'invalid_request',
          `/respondents/respondent_expires_in is ${respondentLifetime} seconds; it cannot exceed the Ask's ${lifetime}.`,
          { field: '/respondents/respondent_expires_in', limit: lifetime, length: respondentLifetime },
        );
      }
      const sdg = digestSync(surface);
      return () => {
        const a = model.createAsk(ws, {
          surface,
          sdg,
          lifetime,
          max: respondents.max,
          requireName: respondents.name === true,
          respondentLifetime,
        });
        return okResult(201, model.askView(a), { location: `/v1/asks/${a.id}` });
      };
    });

  /** Which endpoint a path is, with the method it allows and its handler. */
  const resolve = (
    req: IncomingMessage,
    url: URL,
  ): [LocalEndpoint, string, (client: ClientWatch) => Promise<ApiResult>] | undefined => {
    const path = url.pathname;
    if (path === '/.well-known/sess/jwks.json') {
      return [
        'jwks',
        'GET',
        async () => {
          const ws = url.searchParams.get('ws');
          return okResult(200, model.keys.jwks(ws ?? undefined), { 'cache-control': 'public, max-age=10' });
        },
      ];
    }
    if (path === '/v1/sessions') return ['create', 'POST', create(req)];
    const session = /^\/v1\/sessions\/([^/]+)(?:\/(wait|revisions|complete|withdraw))?$/.exec(path);
    if (session) {
      const id = segment(session[1]!);
      switch (session[2]) {
        case 'wait':
          return ['wait', 'GET', wait(req, id, url)];
        case 'revisions':
          return ['publish', 'POST', mutate(req, id, 'publish')];
        case 'complete':
          return ['complete', 'POST', mutate(req, id, 'complete')];
        case 'withdraw':
          return ['withdraw', 'POST', withdraw(req, id)];
        default:
          return ['get', 'GET', async () => sessionResult(model.getSession(auth(req), id))];
      }
    }
    if (path === '/v1/asks') return ['createAsk', 'POST', createAsk(req)];
    const ask = /^\/v1\/asks\/([^/]+)(\/close)?$/.exec(path);
    if (ask) {
      const id = segment(ask[1]!);
      if (ask[2] === '/close') return ['closeAsk', 'POST', closeAsk(req, id)];
      return ['getAsk', 'GET', async () => okResult(200, model.askView(model.getAsk(auth(req), id)))];
    }
    return undefined;
  };

  return (req, res, url) => {
    const path = url.pathname;
    if (!path.startsWith('/v1/') && !path.startsWith('/.well-known/')) return undefined;
    const found = resolve(req, url);
    // A Sess before v1.4 has neither withdraw nor close (`LocalSessOptions.withdrawal`).
    const offer =
      found !== undefined && (found[0] === 'withdraw' || found[0] === 'closeAsk')
        ? options.withdrawal
        : 'offered';
    if (found === undefined || offer === 'not_offered') {
      send(res, failureResult(new ApiFailure(404, 'not_found', 'No such path.')), workspaceOf(req));
      return Promise.resolve();
    }
    if (offer === 'method_not_allowed') {
      // It knows the path but allows no method on it: an empty `Allow`.
      const failure = new ApiFailure(405, 'method_not_allowed', 'This Sess does not offer this call.');
      send(res, failureResult(failure, { allow: '' }), workspaceOf(req));
      return Promise.resolve();
    }
    const [endpoint, allow, handle] = found;
    if ((req.method ?? 'GET') !== allow) {
      const failure = new ApiFailure(405, 'method_not_allowed', `Use ${allow} on this path.`);
      send(res, failureResult(failure, { allow }), workspaceOf(req));
      return Promise.resolve();
    }
    counts[endpoint]++;
    return options.applyFaults({
      endpoint,
      req,
      res,
      get workspaceId() {
        return workspaceOf(req);
      },
      handle,
      send: (result) => send(res, result, workspaceOf(req)),
    });
  };
}
