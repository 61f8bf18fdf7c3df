/**
 * `@sess.si/mcp/schemas` holds the valibot schemas of the tool contract, and the root entry does
 * not: the root's types stay free of valibot's spelled-out schema types, and each schema has one
 * entry. The schemas are the ones `parseToolArguments` checks with, not copies.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import * as core from '../../src/core/contract/schemas.js';
import * as rootEntry from '../../src/index.js';
import * as schemasEntry from '../../src/schemas/index.js';
import { sampleArgs, sampleSurface } from '../core/fixtures.js';

describe('@sess.si/mcp/schemas', () => {
  it('exports exactly its named values, the core schemas themselves', () => {
    expect(Object.keys(schemasEntry).sort()).toEqual(['SurfaceSchema', 'TOOL_ARGUMENT_SCHEMAS']);
    expect(schemasEntry.SurfaceSchema).toBe(core.SurfaceSchema);
    expect(schemasEntry.TOOL_ARGUMENT_SCHEMAS).toBe(core.TOOL_ARGUMENT_SCHEMAS);
  });

  it('the root entry no longer exports them', () => {
    expect(Object.keys(rootEntry)).not.toContain('SurfaceSchema');
    expect(Object.keys(rootEntry)).not.toContain('TOOL_ARGUMENT_SCHEMAS');
  });

  it('parses a sample Surface and sample arguments', () => {
    expect(v.safeParse(schemasEntry.SurfaceSchema, sampleSurface()).success).toBe(true);
    const request = v.safeParse(schemasEntry.TOOL_ARGUMENT_SCHEMAS.sess_request, sampleArgs('sess_request'));
    expect(request.success).toBe(true);
  });
});
