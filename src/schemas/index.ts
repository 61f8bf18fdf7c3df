/**
 * `@sess.si/mcp/schemas`: the valibot schemas of the tool contract, for a host that reuses them
 * (to build a Surface in its own code and check it before a tool call, or to derive its own
 * forms): `TOOL_ARGUMENT_SCHEMAS`, one closed schema per tool, and `SurfaceSchema`, whose output
 * is exactly the `Surface` type of the root entry.
 *
 * These schemas check shape and per-value limits only; `parseToolArguments` from the root entry
 * is the one full check (rules that span values, unsafe keys, depth and size). They are typed as
 * valibot schemas of their outputs (`Surface`, each tool's `ToolArgs`), so they keep valibot out
 * of the root entry and a consumer's compiler never expands their whole structure. Imports no `node:` module
 * and no `@modelcontextprotocol/*`. This file only re-exports: the schemas are defined in
 * `src/core/contract/schemas.ts`, beside the rest of the tool contract.
 */
export { SurfaceSchema, TOOL_ARGUMENT_SCHEMAS } from '../core/contract/schemas.js';
