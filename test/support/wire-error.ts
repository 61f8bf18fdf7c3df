/**
 * The one assertion of a wire error body the local-runtime tests share: its HTTP status, its
 * parsed `error.code`, and the parsed error back for the field checks a test adds.
 */
import * as v from 'valibot';
import { expect } from 'vitest';
import { ErrorBodySchema } from '../../src/sess/wire.js';

/** Assert a wire error body's status and code; returns the parsed error for further checks. */
export function expectError(res: { status: number; json: unknown }, status: number, code: string) {
  expect(res.status).toBe(status);
  const parsed = v.parse(ErrorBodySchema, res.json);
  expect(parsed.error.code).toBe(code);
  return parsed.error;
}
