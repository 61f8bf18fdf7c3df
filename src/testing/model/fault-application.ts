/**
 * Applying the fault queue (`faults.ts`) around one API call of the local Sess runtime: an error
 * status or a dropped connection before anything happens, a delay, a commit followed by a drop or
 * an error, and the committed answer made malformed, self-contradictory or carrying tampered
 * receipts.
 *
 * It decides nothing about the call itself (the API routes do) and holds no state; it never logs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { base64UrlDecode, base64UrlEncode } from '../../core/codec/base64url.js';
import { parseCompactJws } from '../../sess/jws.js';
import { ApiFailure, type ApiResult, failureResult, thrownResult } from '../server/api-failure.js';
import { type ClientWatch, watchClient } from '../server/http-io.js';
import type {
  ContradictionVariant,
  LocalEndpoint,
  LocalFault,
  LocalFaults,
  ReceiptTamper,
} from './faults.js';
import type { LocalModel } from './model.js';
import { digestSync } from './records.js';

/** @internal The extra keys tampering needs, created lazily. */
export interface TamperKeys {
  unknownKid(workspaceId: string): Promise<string>;
  foreignKid(workspaceId: string): Promise<string>;
}

/** One API call as the routes hand it over. */
export interface ApiCall {
  endpoint: LocalEndpoint;
  req: IncomingMessage;
  res: ServerResponse;
  /** The caller's workspace, when its key is valid (for tampering and the workspace header). */
  workspaceId: string | undefined;
  /** Does the call; `client` says when the client went away. */
  handle(client: ClientWatch): Promise<ApiResult>;
  /** Writes the answer. */
  send(result: ApiResult): void;
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

function codeOf(fault: { status: number; code?: string }): string {
  return fault.code ?? DEFAULT_CODES[fault.status] ?? (fault.status >= 500 ? 'internal' : 'invalid_request');
}

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

/** @internal Build the function that runs one API call under the runtime's fault queue. */
export function createFaultApplication(
  model: LocalModel,
  faults: LocalFaults,
  tamperKeys: TamperKeys,
): (call: ApiCall) => Promise<void> {
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

  /** The committed answer, as the fault makes it look. */
  const disguise = async (
    result: ApiResult,
    fault: LocalFault,
    ws: string | undefined,
  ): Promise<ApiResult> => {
    if (fault.kind === 'commit_then_status') {
      const code = codeOf(fault);
      return failureResult(
        new ApiFailure(fault.status, code, `Injected ${fault.status} ${code} after the change.`),
      );
    }
    if (result.status < 200 || result.status >= 300) return result;
    if (fault.kind === 'malformed') {
      return {
        ...result,
        body: fault.body ?? result.body.slice(0, Math.max(1, Math.floor(result.body.length / 2))),
      };
    }
    if (fault.kind === 'contradictory' || fault.kind === 'tamper_receipt') {
      const body = JSON.parse(result.body) as Record<string, unknown>;
      if (fault.kind === 'contradictory') contradict(body, fault.variant);
      else
        for (const r of receiptsIn(body))
          r.receipt = await tamperReceipt(String(r.receipt), fault.tamper, ws ?? '');
      return { ...result, body: JSON.stringify(body) };
    }
    return result;
  };

  /** Wait at a hold until it is released or the client went away. */
  const held = async (fault: Extract<LocalFault, { kind: 'hold' }>, client: ClientWatch): Promise<void> => {
    fault.reached();
    await new Promise<void>((resolve) => {
      void fault.released.then(resolve);
      client.signal.addEventListener('abort', () => resolve());
    });
  };

  return async ({ endpoint, req, res, workspaceId, handle, send }) => {
    const client = watchClient(res);
    const fault = faults.take(endpoint);
    if (fault?.kind === 'hold' && fault.at === 'arrival') {
      await held(fault, client);
      if (client.aborted) return;
    }
    if (fault?.kind === 'delay') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, fault.ms);
        client.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (client.aborted) return;
    }
    if (fault?.kind === 'transport') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'status') {
      const code = codeOf(fault);
      const failure = new ApiFailure(
        fault.status,
        code,
        fault.message ?? `Injected ${fault.status} ${code}.`,
        fault,
      );
      const headers = { ...(fault.status === 429 ? { 'retry-after': '1' } : {}), ...fault.headers };
      send(failureResult(failure, headers));
      return;
    }
    let result: ApiResult;
    try {
      result = await handle(client);
    } catch (e) {
      result = thrownResult(e);
    }
    if (client.aborted) return;
    if (fault?.kind === 'hold') {
      if (fault.at === 'commit') await held(fault, client);
      if (client.aborted) return;
      send(result);
      return;
    }
    if (fault?.kind === 'commit_then_drop') {
      req.socket.destroy();
      return;
    }
    send(fault ? await disguise(result, fault, workspaceId) : result);
  };
}
