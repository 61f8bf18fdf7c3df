/**
 * The endpoints of the local Sess runtime's API: for each call, the key, then the body (checked
 * by `api-checks.ts`), then what the model does with it, under the stored replies of an
 * idempotent `POST`. Each endpoint is a function of the {@link LocalModel} and the request, and
 * returns the handler the fault queue runs.
 *
 * It routes nothing (`api-routes.ts` matches paths and methods) and keeps no state of its own;
 * it never logs a key, a link, a receipt or an answer value.
 */
import type { IncomingMessage } from 'node:http';
import * as v from 'valibot';
import {
  CloseAskRequestSchema,
  CompleteRequestSchema,
  CreateAskRequestSchema,
  CreateSessionRequestSchema,
  DEFAULT_EXPIRES_IN,
  PublishRequestSchema,
  WithdrawRequestSchema,
} from '../../sess/wire.js';
import type { LocalModel } from '../model/model.js';
import { digestSync, type SessionRecord } from '../model/records.js';
import {
  checkExpiresIn,
  checkReason,
  idempotencyKey,
  ifMatch,
  invalid,
  parseSurface,
  waitQuery,
} from './api-checks.js';
import { ApiFailure, type ApiResult, okResult } from './api-failure.js';
import type { ClientWatch } from './http-io.js';
import { readJson } from './http-io.js';
import { IdempotentReplies } from './idempotency.js';

/** What the fault queue runs for one call. */
export type EndpointHandler = (client: ClientWatch) => Promise<ApiResult>;

/** The workspace of the request's API key, if it names one. */
export function workspaceOf(model: LocalModel, req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  const m = typeof header === 'string' ? /^Bearer ([\x21-\x7e]+)$/.exec(header) : null;
  return m ? model.apiKeys.get(m[1]!) : undefined;
}

/** The workspace of the request's API key, or 401. */
function auth(model: LocalModel, req: IncomingMessage): string {
  const ws = workspaceOf(model, req);
  if (ws === undefined)
    throw new ApiFailure(401, 'unauthorized', 'A valid API key is required (Authorization: Bearer <key>).');
  return ws;
}

/** A Session as the API answers it, with its revision as the ETag. */
function sessionResult(
  model: LocalModel,
  s: SessionRecord,
  status = 200,
  headers: Record<string, string> = {},
): ApiResult {
  return okResult(status, model.sessionView(s, false), { etag: `"${s.revision}"`, ...headers });
}

/**
 * An idempotent `POST`: the key, the body, the Idempotency-Key (and the If-Match revision when
 * `withRevision`), then `prepare` under the stored replies of (workspace, path, key).
 */
function idempotentPost(
  model: LocalModel,
  req: IncomingMessage,
  path: string,
  withRevision: boolean,
  prepare: (ws: string, body: Record<string, unknown>, revision: number) => Promise<() => ApiResult>,
): EndpointHandler {
  return async () => {
    const ws = auth(model, req);
    const body = await readJson(req);
    const key = idempotencyKey(req);
    const revision = withRevision ? ifMatch(req) : null;
    return model.replies.run(
      `${ws}\nPOST\n${path}\n${key}`,
      IdempotentReplies.fingerprint(body, revision),
      () => prepare(ws, body, revision ?? 0),
    );
  };
}

/** `POST /v1/sessions`. */
export function createSessionEndpoint(model: LocalModel, req: IncomingMessage): EndpointHandler {
  return idempotentPost(model, req, '/v1/sessions', false, async (ws, body) => {
    checkExpiresIn(body.expires_in, '/expires_in');
    const parsed = v.safeParse(CreateSessionRequestSchema, body);
    if (!parsed.success) throw invalid(parsed.issues);
    const surface = parseSurface(parsed.output.interaction, '/interaction');
    const lifetime = model.lifetime(parsed.output.expires_in, '/expires_in');
    const sdg = digestSync(surface);
    return () => {
      const s = model.createSession(ws, surface, sdg, lifetime);
      return sessionResult(model, s, 201, { location: `/v1/sessions/${s.id}` });
    };
  });
}

/** `POST /v1/sessions/{id}/revisions` (publish) and `POST /v1/sessions/{id}/complete`. */
export function mutateEndpoint(
  model: LocalModel,
  req: IncomingMessage,
  id: string,
  kind: 'publish' | 'complete',
): EndpointHandler {
  const path = kind === 'publish' ? `/v1/sessions/${id}/revisions` : `/v1/sessions/${id}/complete`;
  return idempotentPost(model, req, path, true, async (ws, body, revision) => {
    if (kind === 'complete') {
      const parsed = v.safeParse(CompleteRequestSchema, body);
      if (!parsed.success) throw invalid(parsed.issues);
      return () => sessionResult(model, model.complete(ws, id, revision, parsed.output.response_event_id));
    }
    const parsed = v.safeParse(PublishRequestSchema, body);
    if (!parsed.success) throw invalid(parsed.issues);
    const surface = parseSurface(parsed.output.interaction, '/interaction');
    const sdg = digestSync(surface);
    return () =>
      sessionResult(model, model.publish(ws, id, revision, parsed.output.response_event_id, surface, sdg));
  });
}

/** `POST /v1/sessions/{id}/withdraw`. */
export function withdrawEndpoint(model: LocalModel, req: IncomingMessage, id: string): EndpointHandler {
  return idempotentPost(model, req, `/v1/sessions/${id}/withdraw`, true, async (ws, body, revision) => {
    const parsed = v.safeParse(WithdrawRequestSchema, body);
    if (!parsed.success) throw invalid(parsed.issues);
    const reason = checkReason(parsed.output.reason);
    return () => sessionResult(model, model.withdraw(ws, id, revision, reason));
  });
}

/** `POST /v1/asks/{id}/close`. */
export function closeAskEndpoint(model: LocalModel, req: IncomingMessage, id: string): EndpointHandler {
  return idempotentPost(model, req, `/v1/asks/${id}/close`, true, async (ws, body, revision) => {
    const parsed = v.safeParse(CloseAskRequestSchema, body);
    if (!parsed.success) throw invalid(parsed.issues);
    const reason = checkReason(parsed.output.reason);
    return () => okResult(200, model.askView(model.closeAsk(ws, id, revision, reason)));
  });
}

/** `GET /v1/sessions/{id}/wait`: held until the Session moves from (revision, status) or time runs out. */
export function waitEndpoint(model: LocalModel, req: IncomingMessage, id: string, url: URL): EndpointHandler {
  return async (client) => {
    const ws = auth(model, req);
    const { revision, status, timeout } = waitQuery(url.searchParams);
    const s = model.getSession(ws, id);
    await model.waits.wait(s, revision, status, timeout, client.signal);
    return sessionResult(model, s);
  };
}

/** `GET /v1/sessions/{id}`. */
export function getSessionEndpoint(model: LocalModel, req: IncomingMessage, id: string): EndpointHandler {
  return async () => sessionResult(model, model.getSession(auth(model, req), id));
}

/** `GET /v1/asks/{id}`. */
export function getAskEndpoint(model: LocalModel, req: IncomingMessage, id: string): EndpointHandler {
  return async () => okResult(200, model.askView(model.getAsk(auth(model, req), id)));
}

/** `GET /.well-known/sess/jwks.json`, of the workspace `?ws=` names when given. */
export function jwksEndpoint(model: LocalModel, url: URL): EndpointHandler {
  return async () => {
    const ws = url.searchParams.get('ws');
    return okResult(200, model.keys.jwks(ws ?? undefined), { 'cache-control': 'public, max-age=10' });
  };
}

/** A create-Ask body checked: its Surface, deadlines and respondent cap, as the model takes them. */
interface AskRequest {
  surface: ReturnType<typeof parseSurface>;
  lifetime: number;
  max: number;
  requireName: boolean;
  respondentLifetime: number;
}

/** Check a create-Ask body: lifetimes first, then the shape, the Surface, one deadline, the plan's cap. */
function askRequest(model: LocalModel, body: Record<string, unknown>): AskRequest {
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
  return {
    surface,
    lifetime,
    max: respondents.max,
    requireName: respondents.name === true,
    respondentLifetime,
  };
}

/** `POST /v1/asks`. */
export function createAskEndpoint(model: LocalModel, req: IncomingMessage): EndpointHandler {
  return idempotentPost(model, req, '/v1/asks', false, async (ws, body) => {
    const ask = askRequest(model, body);
    const sdg = digestSync(ask.surface);
    return () => {
      const a = model.createAsk(ws, {
        surface: ask.surface,
        sdg,
        lifetime: ask.lifetime,
        max: ask.max,
        requireName: ask.requireName,
        respondentLifetime: ask.respondentLifetime,
      });
      return okResult(201, model.askView(a), { location: `/v1/asks/${a.id}` });
    };
  });
}
