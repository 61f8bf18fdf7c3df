/**
 * The HTTP face of the local Sess runtime: one `node:http` request listener that hands each
 * request to the API routes (`/v1/…`, the JWKS; under the fault queue) or the answer page's routes
 * (`/s/…`, `/a/…`, and a `404` page for anything else), and turns anything they throw into an
 * answer.
 *
 * It keeps no state and never logs: not a key, a link, a receipt or an answer value.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createFaultApplication, type TamperKeys } from '../model/fault-application.js';
import type { LocalFaults } from '../model/faults.js';
import type { LocalModel } from '../model/model.js';
import type { LocalWithdrawal } from '../model/withdrawals.js';
import { thrownResult } from './api-failure.js';
import { createApiRoutes, type RequestCounts } from './api-routes.js';
import { sendJson } from './http-io.js';
import { createPageRoutes } from './page-routes.js';

/** What the listener is built from. */
export interface RequestListenerOptions {
  model: LocalModel;
  faults: LocalFaults;
  counts: RequestCounts;
  /** Send `Sess-Workspace-Id` on API responses. */
  workspaceHeader: boolean;
  /** Whether withdraw and Ask close are offered. */
  withdrawal: LocalWithdrawal;
  tamperKeys: TamperKeys;
}

/** @internal Build the request listener of the runtime. */
export function createRequestListener(
  options: RequestListenerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { model, counts } = options;
  const api = createApiRoutes({
    model,
    counts,
    workspaceHeader: options.workspaceHeader,
    withdrawal: options.withdrawal,
    applyFaults: createFaultApplication(model, options.faults, options.tamperKeys),
  });
  const pages = createPageRoutes(model, counts);

  return (req, res) => {
    const run = async () => {
      const url = new URL(req.url ?? '/', 'http://local');
      await (api(req, res, url) ?? pages(req, res, url));
    };
    run().catch((e: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendJson(res, thrownResult(e));
    });
  };
}
