/**
 * The API routes of the local Sess runtime (`/v1/…` and the JWKS): each request is matched by
 * path and method first, exactly in the order `docs/sess-api.md` gives, then handed to its
 * endpoint (`api-endpoints.ts`: the key, then the body, then the model); every call runs under
 * the fault queue (`fault-application.ts`).
 *
 * It keeps no state of its own besides the request counters it is given, and never logs: not a
 * key, a link, a receipt or an answer value.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiCall } from '../model/fault-application.js';
import type { LocalEndpoint } from '../model/faults.js';
import type { LocalModel } from '../model/model.js';
import type { LocalWithdrawal } from '../model/withdrawals.js';
import {
  closeAskEndpoint,
  createAskEndpoint,
  createSessionEndpoint,
  type EndpointHandler,
  getAskEndpoint,
  getSessionEndpoint,
  jwksEndpoint,
  mutateEndpoint,
  waitEndpoint,
  withdrawEndpoint,
  workspaceOf,
} from './api-endpoints.js';
import { ApiFailure, type ApiResult, failureResult } from './api-failure.js';
import { sendJson } from './http-io.js';

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

/** Decode one path segment; an invalid escape matches nothing. */
function segment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return '';
  }
}

/** Which endpoint a path is, with the method it allows and its handler. */
function resolve(
  model: LocalModel,
  req: IncomingMessage,
  url: URL,
): [LocalEndpoint, string, EndpointHandler] | undefined {
  const path = url.pathname;
  if (path === '/.well-known/sess/jwks.json') return ['jwks', 'GET', jwksEndpoint(model, url)];
  if (path === '/v1/sessions') return ['create', 'POST', createSessionEndpoint(model, req)];
  const session = /^\/v1\/sessions\/([^/]+)(?:\/(wait|revisions|complete|withdraw))?$/.exec(path);
  if (session) {
    const id = segment(session[1]!);
    switch (session[2]) {
      case 'wait':
        return ['wait', 'GET', waitEndpoint(model, req, id, url)];
      case 'revisions':
        return ['publish', 'POST', mutateEndpoint(model, req, id, 'publish')];
      case 'complete':
        return ['complete', 'POST', mutateEndpoint(model, req, id, 'complete')];
      case 'withdraw':
        return ['withdraw', 'POST', withdrawEndpoint(model, req, id)];
      default:
        return ['get', 'GET', getSessionEndpoint(model, req, id)];
    }
  }
  if (path === '/v1/asks') return ['createAsk', 'POST', createAskEndpoint(model, req)];
  const ask = /^\/v1\/asks\/([^/]+)(\/close)?$/.exec(path);
  if (ask) {
    const id = segment(ask[1]!);
    if (ask[2] === '/close') return ['closeAsk', 'POST', closeAskEndpoint(model, req, id)];
    return ['getAsk', 'GET', getAskEndpoint(model, req, id)];
  }
  return undefined;
}

/** @internal The API routes of a runtime. */
export function createApiRoutes(options: ApiRoutesOptions): Route {
  const { model, counts } = options;
  const send = (res: ServerResponse, result: ApiResult, ws: string | undefined) =>
    sendJson(
      res,
      result,
      ws !== undefined && options.workspaceHeader && result.status !== 401 ? { 'sess-workspace-id': ws } : {},
    );
  const refuse = (
    req: IncomingMessage,
    res: ServerResponse,
    failure: ApiFailure,
    headers?: Record<string, string>,
  ) => {
    send(res, failureResult(failure, headers), workspaceOf(model, req));
    return Promise.resolve();
  };

  return (req, res, url) => {
    const path = url.pathname;
    if (!path.startsWith('/v1/') && !path.startsWith('/.well-known/')) return undefined;
    const found = resolve(model, req, url);
    // A Sess before v1.4 has neither withdraw nor close (`LocalSessOptions.withdrawal`).
    const offer =
      found !== undefined && (found[0] === 'withdraw' || found[0] === 'closeAsk')
        ? options.withdrawal
        : 'offered';
    if (found === undefined || offer === 'not_offered') {
      return refuse(req, res, new ApiFailure(404, 'not_found', 'No such path.'));
    }
    if (offer === 'method_not_allowed') {
      // It knows the path but allows no method on it: an empty `Allow`.
      const failure = new ApiFailure(405, 'method_not_allowed', 'This Sess does not offer this call.');
      return refuse(req, res, failure, { allow: '' });
    }
    const [endpoint, allow, handle] = found;
    if ((req.method ?? 'GET') !== allow) {
      return refuse(req, res, new ApiFailure(405, 'method_not_allowed', `Use ${allow} on this path.`), {
        allow,
      });
    }
    counts[endpoint]++;
    return options.applyFaults({
      endpoint,
      req,
      res,
      get workspaceId() {
        return workspaceOf(model, req);
      },
      handle,
      send: (result) => send(res, result, workspaceOf(model, req)),
    });
  };
}
