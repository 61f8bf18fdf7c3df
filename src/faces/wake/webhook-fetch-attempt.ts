/**
 * A webhook attempt over `fetch`, for runtimes that give no socket and no resolver (workerd,
 * Deno's `fetch`, or a caller's own `fetch`): `redirect: 'manual'`, an abort at the attempt's
 * time, at most {@link WEBHOOK_RESPONSE_READ_BYTES} of the response read.
 *
 * `fetch` resolves the host itself and never says which address it reached, so the address rules
 * cannot run here: the sender refuses to use this transport without a host allowlist
 * (`allowedHosts`), and an IP literal is still judged before sending (`webhook-destination.ts`).
 * The status rules are `webhook-send.ts`'s, shared with the Node attempt.
 */
import {
  outcomeOfStatus,
  retryReasonOf,
  WEBHOOK_RESPONSE_READ_BYTES,
  type WebhookAttempt,
  type WebhookOutcome,
  type WebhookTransport,
} from './webhook-send.js';

/** The `fetch` transport over `fetchImpl`. */
export function fetchWebhookTransport(fetchImpl: typeof fetch): WebhookTransport {
  return (attempt) => attemptOverFetch(fetchImpl, attempt);
}

async function attemptOverFetch(fetchImpl: typeof fetch, attempt: WebhookAttempt): Promise<WebhookOutcome> {
  const controller = new AbortController();
  let timedOut = false;
  let status: number | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, attempt.timeoutMs);
  try {
    const response = await fetchImpl(attempt.url.href, {
      method: 'POST',
      headers: attempt.headers,
      body: attempt.body,
      redirect: 'manual',
      signal: controller.signal,
    });
    // A browser-like `fetch` hides a manual redirect behind an opaque response of status 0.
    if (response.type === 'opaqueredirect') {
      await response.body?.cancel().catch(() => undefined);
      return { kind: 'retry', reason: 'redirect' };
    }
    status = response.status;
    await readSome(response);
    return outcomeOfStatus(status);
  } catch (error) {
    if (status !== undefined) return outcomeOfStatus(status);
    return { kind: 'retry', reason: timedOut ? 'timeout' : retryReasonOf(error) };
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/** Read the body until its end or {@link WEBHOOK_RESPONSE_READ_BYTES}, then let it go. */
async function readSome(response: Response): Promise<void> {
  const reader = response.body?.getReader();
  if (reader === undefined) return;
  let read = 0;
  while (read < WEBHOOK_RESPONSE_READ_BYTES) {
    const { done, value } = await reader.read();
    if (done) return;
    read += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
}
