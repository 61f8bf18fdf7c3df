/**
 * The valibot schemas produce exactly the hand-written types (`Surface`, the argument interfaces),
 * so they cannot drift. These assertions are checked by `tsc` (the test folder is type-checked);
 * the runtime part proves the parsed value is usable as the type.
 */
import type * as v from 'valibot';
import { expectTypeOf, it } from 'vitest';
import type {
  AskArgs,
  AskArgsSchema,
  AskField,
  AskFieldSchema,
  CompleteArgs,
  CompleteArgsSchema,
  FieldSchemaSchema,
  ListArgs,
  ListArgsSchema,
  PublishArgs,
  PublishArgsSchema,
  RequestArgs,
  RequestArgsSchema,
  ResponseArgs,
  ResponseArgsSchema,
  SurfaceActionSchema,
  SurfaceComponentSchema,
  SurfaceSchema,
  ToolArgs,
  WithdrawArgs,
  WithdrawArgsSchema,
} from '../../src/core/contract/schemas.js';
import { parseToolArguments } from '../../src/core/contract/validate.js';
import type { FieldSchema, Surface, SurfaceAction, SurfaceComponent } from '../../src/core/model/surface.js';
import { sampleSurface } from './fixtures.js';

it('the Surface schema outputs exactly Surface, part by part', () => {
  expectTypeOf<v.InferOutput<typeof FieldSchemaSchema>>().toEqualTypeOf<FieldSchema>();
  expectTypeOf<v.InferOutput<typeof SurfaceComponentSchema>>().toEqualTypeOf<SurfaceComponent>();
  expectTypeOf<v.InferOutput<typeof SurfaceActionSchema>>().toEqualTypeOf<SurfaceAction>();
  expectTypeOf<v.InferOutput<typeof SurfaceSchema>>().toEqualTypeOf<Surface>();
});

it('each tool schema outputs exactly its argument type', () => {
  expectTypeOf<v.InferOutput<typeof RequestArgsSchema>>().toEqualTypeOf<RequestArgs>();
  expectTypeOf<v.InferOutput<typeof ResponseArgsSchema>>().toEqualTypeOf<ResponseArgs>();
  expectTypeOf<v.InferOutput<typeof PublishArgsSchema>>().toEqualTypeOf<PublishArgs>();
  expectTypeOf<v.InferOutput<typeof CompleteArgsSchema>>().toEqualTypeOf<CompleteArgs>();
  expectTypeOf<v.InferOutput<typeof AskFieldSchema>>().toEqualTypeOf<AskField>();
  expectTypeOf<v.InferOutput<typeof AskArgsSchema>>().toEqualTypeOf<AskArgs>();
  expectTypeOf<v.InferOutput<typeof ListArgsSchema>>().toEqualTypeOf<ListArgs>();
  expectTypeOf<v.InferOutput<typeof WithdrawArgsSchema>>().toEqualTypeOf<WithdrawArgs>();
});

it('parseToolArguments returns the argument type of its tool', () => {
  const parsed = parseToolArguments('sess_request', { interaction: sampleSurface() });
  expectTypeOf(parsed).toEqualTypeOf<ToolArgs['sess_request']>();
  const surface: Surface = parsed.interaction satisfies Surface;
  expectTypeOf(surface.actions).toEqualTypeOf<SurfaceAction[]>();
});
