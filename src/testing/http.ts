/**
 * The HTTP face of the local Sess runtime: routes of the API (`/v1/…`, the JWKS) and of the answer
 * page (`/s/…`, `/a/…`) onto the model, with request parsing and validation exactly as
 * `docs/sess-api.md` orders it, and the fault queue applied around every API call.
 *
 * It keeps no state of its own besides request counters, and it never logs: not a key, a link,
 * a receipt or an answer value.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import type { SessionStatus } from '../core/ports.js';
import type { Surface } from '../core/surface.js';
import { base64UrlDecode, base64UrlEncode } from '../sess/digest.js';
import { parseCompactJws } from '../sess/jws.js';
import {
  CompleteRequestSchema,
  CreateAskRequestSchema,
  CreateSessionRequestSchema,
  DEFAULT_EXPIRES_IN,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  MAX_REQUEST_BYTES,
  MAX_WAIT_MS,
  MIN_EXPIRES_IN,
  PublishRequestSchema,
  SESSION_STATUSES,
  SurfaceSchema,
} from '../sess/wire.js';
import type { ContradictionVariant, LocalEndpoint, LocalFaults, ReceiptTamper } from './faults.js';
import {
  ApiFailure,
  type ApiResult,
  type AskRecord,
  digestSync,
  LocalModel,
  type SessionRecord,
} from './model.js';
import {
  ACTION_ERROR_KEY,
  formToAnswer,
  PAGE_CSP,
  type PageView,
  renderPage,
  validateAnswer,
} from './page/index.js';
import { checkSurfaceRules } from './surface-rules.js';
import { codePoints, escapePointer } from './text.js';

/** Options of the HTTP layer. */
export interface HttpOptions {
  workspaceHeader: boolean;
}

type Counts = Record<LocalEndpoint | 'page', number>;

/** @internal Request counters per endpoint. */
export function emptyCounts(): Counts {
  return { create: 0, get: 0, wait: 0, publish: 0, complete: 0, createAsk: 0, getAsk: 0, jwks: 0, page: 0 };
}

const DEFAULT_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  410: 'expired',
  413: 'invalid_request',
  415: 'invalid_request',
  422: 'invalid_request',
  429: 'rate_limited',
  500: 'internal',
  503: 'unavailable',
};

function failureResult(e: ApiFailure, headers: Record<string, string> = {}): ApiResult {
  return { status: e.status, body: JSON.stringify(e.body()), headers };
}

function okResult(status: number, body: unknown, headers: Record<string, string> = {}): ApiResult {
  return { status, body: JSON.stringify(body), headers };
}

function pointer(path: readonly { key: unknown }[] | undefined, base = ''): string {
  if (!path || path.length === 0) return base;
  return base + path.map((p) => `/${escapePointer(String(p.key))}`).join('');
}

function invalid(issues: readonly v.BaseIssue<unknown>[], base = ''): ApiFailure {
  const issue = issues[0]!;
  const field = pointer(issue.path as { key: unknown }[] | undefined, base) || '/';
  return new ApiFailure(422, 'invalid_request', `${field}: ${issue.message}`, { field });
}

/** Read a request body up to `limit` bytes. */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    throw new ApiFailure(413, 'invalid_request', `The body is ${declared} bytes; the limit is ${limit}.`, {
      limit,
      length: declared,
    });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      throw new ApiFailure(413, 'invalid_request', `The body is over ${limit} bytes.`, {
        limit,
        length: size,
      });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type !== 'application/json') {
    throw new ApiFailure(415, 'invalid_request', 'The body must be application/json.');
  }
  const raw = await readBody(req, MAX_REQUEST_BYTES);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch {
    throw new ApiFailure(400, 'invalid_request', 'The body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiFailure(400, 'invalid_request', 'The body must be a JSON object.');
  }
  return value as Record<string, unknown>;
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
      {
        field,
        limit: MIN_EXPIRES_IN,
        length: value,
      },
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

// ---------------------------------------------------------------------------------------------
// Tampering (faults)

const PHANTOM_RECEIPT = `e30.e30.${'A'.repeat(86)}`;

function contradict(
  body: Record<string, unknown>,
  variant: ContradictionVariant = 'response_above_revision',
): void {
  if (Array.isArray(body.respondents)) {
    body.answered = Number(body.answered) + 1;
    return;
  }
  const responses = (body.responses ?? []) as Record<string, unknown>[];
  const revision = Number(body.revision);
  const phantom = (rev: number) => ({
    event_id: `evt_phantom_${rev}_${responses.length}`,
    revision: rev,
    answer: { action: 'submit', values: {} },
    submitted_at: body.expires_at,
    receipt: (responses.at(-1)?.receipt as string | undefined) ?? PHANTOM_RECEIPT,
  });
  const atRevision = () => responses.some((r) => r.revision === revision);
  switch (variant) {
    case 'ask_counts':
    case 'response_above_revision':
      responses.push(phantom(revision + 1));
      break;
    case 'active_with_answer':
      if (!atRevision()) responses.push(phantom(revision));
      body.status = 'active';
      break;
    case 'answered_without_answer':
      body.responses = responses.filter((r) => r.revision !== revision);
      body.status = 'answered';
      return;
    case 'duplicate_revision': {
      const last = responses.at(-1);
      responses.push(
        last ? { ...last, event_id: `${String(last.event_id)}_dup` } : phantom(revision),
        phantom(revision),
      );
      body.status = 'answered';
      break;
    }
  }
  body.responses = responses;
}

function receiptsIn(body: Record<string, unknown>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const r of (body.responses ?? []) as Record<string, unknown>[]) out.push(r);
  for (const r of (body.respondents ?? []) as Record<string, unknown>[]) {
    if (r.response) out.push(r.response as Record<string, unknown>);
  }
  return out.filter((r) => typeof r.receipt === 'string');
}

// ---------------------------------------------------------------------------------------------
// The handler

/** @internal The extra keys tampering needs, created lazily. */
export interface TamperKeys {
  unknownKid(workspaceId: string): Promise<string>;
  foreignKid(workspaceId: string): Promise<string>;
}

/** @internal Build the request listener of the runtime. */
export function createRequestListener(
  model: LocalModel,
  faults: LocalFaults,
  counts: Counts,
  options: HttpOptions,
  tamperKeys: TamperKeys,
): (req: IncomingMessage, res: ServerResponse) => void {
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

  const send = (res: ServerResponse, result: ApiResult, ws: string | undefined) => {
    if (res.destroyed || res.writableEnded) return;
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...result.headers,
    };
    if (ws !== undefined && options.workspaceHeader && result.status !== 401)
      headers['sess-workspace-id'] = ws;
    res.writeHead(result.status, headers);
    res.end(result.body);
  };

  const tamperReceipt = async (jws: string, tamper: ReceiptTamper, ws: string): Promise<string> => {
    const parsed = parseCompactJws(jws);
    if (!parsed) return jws;
    const [h, p, s] = jws.split('.') as [string, string, string];
    switch (tamper.mode) {
      case 'signature': {
        const sig = base64UrlDecode(s)!;
        sig[sig.length - 1]! ^= 1;
        return `${h}.${p}.${base64UrlEncode(sig)}`;
      }
      case 'unknown_key':
        return model.keys.sign(parsed.payload, { kid: await tamperKeys.unknownKid(ws) });
      case 'other_workspace_key':
        return model.keys.sign(parsed.payload, { kid: await tamperKeys.foreignKid(ws) });
      case 'replay': {
        const sid = parsed.payload.sid;
        const own = model.sessions.get(String(sid));
        const mine = own?.responses.map((r) => r.receipt) ?? [];
        const other =
          mine.find((r) => r !== jws) ??
          [...model.sessions.values()]
            .filter((x) => x.workspaceId === ws && x.id !== sid)
            .flatMap((x) => x.responses.map((r) => r.receipt))
            .at(-1);
        return other ?? jws;
      }
      case 'claim': {
        const payload = { ...parsed.payload };
        const old = payload[tamper.claim];
        payload[tamper.claim] =
          tamper.value !== undefined
            ? tamper.value
            : tamper.claim === 'sdg' || tamper.claim === 'adg'
              ? digestSync({ tampered: String(old) })
              : typeof old === 'number'
                ? old + 1
                : `${String(old)}_x`;
        return model.keys.sign(payload, { kid: String(parsed.header.kid) });
      }
    }
  };

  const api = async (
    endpoint: LocalEndpoint,
    req: IncomingMessage,
    res: ServerResponse,
    handle: (signal: AbortSignal) => Promise<ApiResult>,
  ) => {
    counts[endpoint]++;
    const closed = new AbortController();
    // Only a connection closed before the answer was written abandons the call (no AbortError per request).
    res.on('close', () => {
      if (!res.writableEnded) closed.abort();
    });
    const fault = faults.take(endpoint);
    if (fault?.kind === 'delay') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, fault.ms);
        closed.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (closed.signal.aborted) return;
    }
    if (fault?.kind === 'transport') {
      req.socket.destroy();
      return;
    }
    const ws = workspaceOf(req);
    if (fault?.kind === 'status') {
      const code =
        fault.code ?? DEFAULT_CODES[fault.status] ?? (fault.status >= 500 ? 'internal' : 'invalid_request');
      const failure = new ApiFailure(
        fault.status,
        code,
        fault.message ?? `Injected ${fault.status} ${code}.`,
        fault,
      );
      const headers = { ...(fault.status === 429 ? { 'retry-after': '1' } : {}), ...fault.headers };
      send(res, failureResult(failure, headers), ws);
      return;
    }
    let result: ApiResult;
    try {
      result = await handle(closed.signal);
    } catch (e) {
      result =
        e instanceof ApiFailure
          ? failureResult(e)
          : failureResult(new ApiFailure(500, 'internal', 'The local Sess runtime failed unexpectedly.'));
    }
    if (closed.signal.aborted) return;
    if (fault?.kind === 'commit_then_drop') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'commit_then_status') {
      const code =
        fault.code ?? DEFAULT_CODES[fault.status] ?? (fault.status >= 500 ? 'internal' : 'invalid_request');
      result = failureResult(
        new ApiFailure(fault.status, code, `Injected ${fault.status} ${code} after the change.`),
      );
    }
    if (result.status >= 200 && result.status < 300 && fault) {
      if (fault.kind === 'malformed') {
        result = {
          ...result,
          body: fault.body ?? result.body.slice(0, Math.max(1, Math.floor(result.body.length / 2))),
        };
      } else if (fault.kind === 'contradictory' || fault.kind === 'tamper_receipt') {
        const body = JSON.parse(result.body) as Record<string, unknown>;
        if (fault.kind === 'contradictory') contradict(body, fault.variant);
        else
          for (const r of receiptsIn(body))
            r.receipt = await tamperReceipt(String(r.receipt), fault.tamper, ws ?? '');
        result = { ...result, body: JSON.stringify(body) };
      }
    }
    send(res, result, ws);
  };

  const sessionResult = (s: SessionRecord, status = 200, headers: Record<string, string> = {}) =>
    okResult(status, model.sessionView(s), { etag: `"${s.revision}"`, ...headers });

  // -- API handlers -----------------------------------------------------------------------------

  const create = (req: IncomingMessage) => async () => {
    const ws = auth(req);
    const body = await readJson(req);
    const key = idempotencyKey(req);
    return model.idempotent(
      `${ws}\nPOST\n/v1/sessions\n${key}`,
      LocalModel.fingerprint(body, null),
      async () => {
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
      },
    );
  };

  const mutate = (req: IncomingMessage, id: string, kind: 'publish' | 'complete') => async () => {
    const ws = auth(req);
    const body = await readJson(req);
    const key = idempotencyKey(req);
    const revision = ifMatch(req);
    const path = kind === 'publish' ? `/v1/sessions/${id}/revisions` : `/v1/sessions/${id}/complete`;
    return model.idempotent(
      `${ws}\nPOST\n${path}\n${key}`,
      LocalModel.fingerprint(body, revision),
      async () => {
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
  };

  const wait = (req: IncomingMessage, id: string, url: URL) => async (signal: AbortSignal) => {
    const ws = auth(req);
    const q = url.searchParams;
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
    if (!/^\d{1,6}$/.test(q.get('timeout_ms') ?? '') || timeout > MAX_WAIT_MS) {
      throw new ApiFailure(
        400,
        'invalid_request',
        `The query parameter timeout_ms must be an integer from 0 to ${MAX_WAIT_MS}.`,
      );
    }
    const s = model.getSession(ws, id);
    await model.wait(s, revision, status, timeout, signal);
    return sessionResult(s);
  };

  const createAsk = (req: IncomingMessage) => async () => {
    const ws = auth(req);
    const body = await readJson(req);
    const key = idempotencyKey(req);
    return model.idempotent(`${ws}\nPOST\n/v1/asks\n${key}`, LocalModel.fingerprint(body, null), async () => {
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
          {
            field: '/respondents/expires_in',
          },
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
        const a = model.createAsk(
          ws,
          surface,
          sdg,
          lifetime,
          respondents.max,
          respondents.name === true,
          respondentLifetime,
        );
        return okResult(201, model.askView(a), { location: `/v1/asks/${a.id}` });
      };
    });
  };

  // -- page handlers ----------------------------------------------------------------------------

  const sendPage = (
    res: ServerResponse,
    status: number,
    view: PageView,
    headers: Record<string, string> = {},
  ) => {
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': PAGE_CSP,
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
      ...headers,
    });
    res.end(renderPage(view));
  };
  const redirect = (res: ServerResponse, location: string, headers: Record<string, string> = {}) => {
    res.writeHead(303, {
      location,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      ...headers,
    });
    res.end();
  };

  /** The page of a Session as it is now, with the status code that goes with it. */
  const currentPage = (
    s: SessionRecord,
    formExtra: { errors?: Record<string, string> } = {},
  ): [number, PageView] => {
    const surface = s.surfaces[s.revision - 1]!;
    const title = surface.title;
    switch (model.status(s)) {
      case 'active':
        return [
          200,
          { kind: 'form', surface, revision: s.revision, actionUrl: `/s/${s.token}`, ...formExtra },
        ];
      case 'answered':
        return [200, { kind: 'waiting', title }];
      case 'completed':
        return [200, { kind: 'done', title }];
      case 'lapsed':
        return [200, { kind: 'expired', title, extendUrl: `/s/${s.token}/extend` }];
      case 'expired':
        return [410, { kind: 'expired', title }];
    }
  };

  const readForm = async (req: IncomingMessage): Promise<URLSearchParams> => {
    const raw = await readBody(req, 65_536);
    return new URLSearchParams(raw.toString('utf8'));
  };

  const submit = async (req: IncomingMessage, res: ServerResponse, s: SessionRecord) => {
    const form = await readForm(req);
    const status = model.status(s);
    if (status !== 'active') {
      const [, view] = currentPage(s);
      return sendPage(res, status === 'lapsed' || status === 'expired' ? 410 : 409, view);
    }
    const surface = s.surfaces[s.revision - 1]!;
    const revision = Number(form.get('_revision'));
    if (revision !== s.revision) {
      const [, view] = currentPage(s, {
        errors: { [ACTION_ERROR_KEY]: 'This page changed. Check it and send again.' },
      });
      return sendPage(res, 409, view);
    }
    const input = formToAnswer(surface, form);
    const check = validateAnswer(surface, input);
    if (!check.ok) {
      return sendPage(res, 422, {
        kind: 'form',
        surface,
        revision,
        actionUrl: `/s/${s.token}`,
        values: input.values,
        errors: check.errors,
      });
    }
    const outcome = model.acceptAnswer(s, revision, check.answer);
    if (outcome === 'ok') return redirect(res, `/s/${s.token}`);
    const [, view] = currentPage(s);
    return sendPage(res, outcome === 'lapsed' || outcome === 'expired' ? 410 : 409, view);
  };

  const cookieName = (a: AskRecord) => `sess_ask_${a.id}`;
  const respondentFromCookie = (req: IncomingMessage, a: AskRecord): SessionRecord | undefined => {
    const header = req.headers.cookie ?? '';
    for (const part of header.split(';')) {
      const [name, ...rest] = part.trim().split('=');
      if (name !== cookieName(a)) continue;
      const s = model.sessionTokens.get(rest.join('='));
      if (s?.ask?.askId === a.id) return s;
    }
    return undefined;
  };
  const startAndRedirect = (res: ServerResponse, a: AskRecord, name?: string) => {
    const s = model.startRespondent(a, name);
    if (s === 'full') return sendPage(res, 409, { kind: 'ask_full', title: a.surface.title });
    if (s === 'closed') return sendPage(res, 410, { kind: 'expired', title: a.surface.title });
    redirect(res, `/s/${s.token}`, {
      'set-cookie': `${cookieName(a)}=${s.token}; Path=/; HttpOnly; SameSite=Lax`,
    });
  };

  const askPage = async (req: IncomingMessage, res: ServerResponse, a: AskRecord) => {
    const mine = respondentFromCookie(req, a);
    if (mine) return redirect(res, `/s/${mine.token}`);
    const title = a.surface.title;
    if (model.clock.now() >= a.expiresAt) return sendPage(res, 410, { kind: 'expired', title });
    if (a.respondents.length >= a.max) return sendPage(res, 409, { kind: 'ask_full', title });
    if (req.method === 'GET') {
      if (a.requireName) return sendPage(res, 200, { kind: 'ask_name', title, actionUrl: `/a/${a.token}` });
      return startAndRedirect(res, a);
    }
    const form = await readForm(req);
    if (!a.requireName) return startAndRedirect(res, a);
    const name = (form.get('name') ?? '').trim();
    const length = codePoints(name);
    if (length === 0 || length > 200) {
      return sendPage(res, 422, {
        kind: 'ask_name',
        title,
        actionUrl: `/a/${a.token}`,
        error: length === 0 ? 'Enter your name.' : 'Your name can be at most 200 characters.',
      });
    }
    return startAndRedirect(res, a, name);
  };

  // -- routing ----------------------------------------------------------------------------------

  const methodNotAllowed = (res: ServerResponse, allow: string, ws: string | undefined) => {
    const failure = new ApiFailure(405, 'method_not_allowed', `Use ${allow} on this path.`);
    send(res, failureResult(failure, { allow }), ws);
  };

  return (req, res) => {
    const run = async () => {
      const url = new URL(req.url ?? '/', 'http://local');
      const path = url.pathname;
      const method = req.method ?? 'GET';
      const seg = (s: string) => {
        try {
          return decodeURIComponent(s);
        } catch {
          return '';
        }
      };
      const route = (
        endpoint: LocalEndpoint,
        allow: string,
        handle: (signal: AbortSignal) => Promise<ApiResult>,
      ) =>
        method === allow ? api(endpoint, req, res, handle) : methodNotAllowed(res, allow, workspaceOf(req));

      if (path === '/.well-known/sess/jwks.json') {
        return route('jwks', 'GET', async () => {
          const ws = url.searchParams.get('ws');
          return okResult(200, model.keys.jwks(ws ?? undefined), { 'cache-control': 'public, max-age=10' });
        });
      }
      if (path === '/v1/sessions') return route('create', 'POST', create(req));
      const session = /^\/v1\/sessions\/([^/]+)(?:\/(wait|revisions|complete))?$/.exec(path);
      if (session) {
        const id = seg(session[1]!);
        switch (session[2]) {
          case 'wait':
            return route('wait', 'GET', wait(req, id, url));
          case 'revisions':
            return route('publish', 'POST', mutate(req, id, 'publish'));
          case 'complete':
            return route('complete', 'POST', mutate(req, id, 'complete'));
          default:
            return route('get', 'GET', async () => sessionResult(model.getSession(auth(req), id)));
        }
      }
      if (path === '/v1/asks') return route('createAsk', 'POST', createAsk(req));
      const ask = /^\/v1\/asks\/([^/]+)$/.exec(path);
      if (ask) {
        const id = seg(ask[1]!);
        return route('getAsk', 'GET', async () => okResult(200, model.askView(model.getAsk(auth(req), id))));
      }

      const page = /^\/s\/([A-Za-z0-9_-]+)(\/extend)?$/.exec(path);
      if (page) {
        counts.page++;
        const s = model.sessionTokens.get(page[1]!);
        if (s === undefined) return sendPage(res, 404, { kind: 'not_found' });
        if (page[2]) {
          if (method !== 'POST') return sendPage(res, 405, { kind: 'not_found' }, { allow: 'POST' });
          const outcome = model.extend(s);
          if (outcome === 'ok') return redirect(res, `/s/${s.token}`);
          const [, view] = currentPage(s);
          return sendPage(res, outcome === 'expired' ? 410 : 409, view);
        }
        if (method === 'GET') {
          const [status, view] = currentPage(s);
          return sendPage(res, status, view);
        }
        if (method === 'POST') return submit(req, res, s);
        return sendPage(res, 405, { kind: 'not_found' }, { allow: 'GET, POST' });
      }
      const askLink = /^\/a\/([A-Za-z0-9_-]+)$/.exec(path);
      if (askLink) {
        counts.page++;
        const a = model.askTokens.get(askLink[1]!);
        if (a === undefined) return sendPage(res, 404, { kind: 'not_found' });
        if (method !== 'GET' && method !== 'POST') {
          return sendPage(res, 405, { kind: 'not_found' }, { allow: 'GET, POST' });
        }
        return askPage(req, res, a);
      }
      if (path.startsWith('/v1/') || path.startsWith('/.well-known/')) {
        return send(res, failureResult(new ApiFailure(404, 'not_found', 'No such path.')), workspaceOf(req));
      }
      return sendPage(res, 404, { kind: 'not_found' });
    };
    run().catch((e: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (e instanceof ApiFailure) {
        res.writeHead(e.status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(e.body()));
        return;
      }
      res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
      res.end(
        JSON.stringify({
          error: { code: 'internal', message: 'The local Sess runtime failed unexpectedly.' },
        }),
      );
    });
  };
}
