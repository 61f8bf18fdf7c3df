/**
 * The credential generation of a stdio binding: an HMAC-SHA-256 of the API key under a random
 * per-profile secret, so that handles made with one key are refused (`BINDING_MISMATCH`) once the
 * key changes, without the key — or anything a key could be guessed from offline — being written.
 *
 * The secret lives at `<profileDir>/credential-key` (mode 0600), created once, atomically: it is
 * written whole to a temporary file and then hard-linked into place, which fails if another
 * process made one first. This module does not read `SESS_API_KEY`; the authority hands it the key.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { SessMcpError } from '../index.js';

/** The file name of the per-profile secret inside the profile directory. */
export const CREDENTIAL_KEY_FILE = 'credential-key';

const HEADER = 'sess-mcp-credential-key/1 ';
const SECRET_BYTES = 32;
const TRANSIENT = new Set(['EIO', 'EAGAIN', 'EBUSY', 'EMFILE', 'ENFILE', 'ENOSPC', 'EINTR', 'ETIMEDOUT']);

function storeError(message: string, cause: unknown): SessMcpError {
  const code = (cause as { code?: unknown } | undefined)?.code;
  return new SessMcpError('STATE_STORE_ERROR', message, {
    retryable: typeof code === 'string' && TRANSIENT.has(code),
    cause,
  });
}

function decode(text: string): Uint8Array | undefined {
  const line = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (!line.startsWith(HEADER)) return undefined;
  const body = line.slice(HEADER.length);
  if (!/^[A-Za-z0-9_-]{43}$/.test(body)) return undefined;
  const bytes = Buffer.from(body, 'base64url');
  return bytes.length === SECRET_BYTES ? new Uint8Array(bytes) : undefined;
}

async function readSecret(file: string): Promise<Uint8Array | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw storeError('The credential key file of this profile cannot be read.', error);
  }
  const secret = decode(text);
  if (secret === undefined) {
    throw new SessMcpError(
      'STATE_STORE_ERROR',
      `The credential key file of this profile is damaged. Remove ${CREDENTIAL_KEY_FILE} from the profile directory; handles made before become unusable.`,
      { retryable: false },
    );
  }
  return secret;
}

async function fsyncDir(dir: string): Promise<void> {
  // Directory fsync is not supported everywhere (Windows); the link is still durable enough there.
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    /* best effort */
  }
}

/**
 * Load the profile's secret, creating it once when it does not exist yet.
 *
 * @throws SessMcpError `STATE_STORE_ERROR` (retryable only for transient I/O failures).
 */
export async function loadOrCreateCredentialKey(profileDir: string): Promise<Uint8Array> {
  const file = join(profileDir, CREDENTIAL_KEY_FILE);
  const existing = await readSecret(file);
  if (existing !== undefined) return existing;

  const temp = join(
    profileDir,
    `.${CREDENTIAL_KEY_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    await mkdir(profileDir, { recursive: true, mode: 0o700 });
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(`${HEADER}${randomBytes(SECRET_BYTES).toString('base64url')}\n`, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temp, file);
    } catch (error) {
      // Another process created it first: use theirs.
      if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
    }
    await fsyncDir(profileDir);
  } catch (error) {
    throw storeError('The credential key file of this profile cannot be created.', error);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  const created = await readSecret(file);
  if (created === undefined) {
    throw new SessMcpError('STATE_STORE_ERROR', 'The credential key file of this profile vanished.', {
      retryable: true,
    });
  }
  return created;
}

/**
 * The credential generation of an API key: `hmac-sha256:` + base64url(HMAC-SHA-256(secret, key)).
 * Equal keys give equal generations under one secret; the key cannot be read back from it.
 */
export function credentialGenerationOf(secret: Uint8Array, apiKey: string): string {
  return `hmac-sha256:${createHmac('sha256', secret).update(apiKey, 'utf8').digest('base64url')}`;
}
