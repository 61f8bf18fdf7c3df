import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Binding,
  bindingPrincipal,
  bindingScope,
  type HttpBinding,
  type StdioBinding,
  sameGeneration,
} from '../../src/core/contract/ports.js';
import { principalOfScope } from '../../src/core/store-kit/kit.js';

/** The scope as it is defined: the identity fields as a JSON array, made afresh. */
function expectedScope(binding: Binding): string {
  if (binding.kind === 'http' && binding.share === 'principal') {
    return JSON.stringify(['http-principal', binding.origin, binding.workspaceId, binding.principalId]);
  }
  return binding.kind === 'stdio'
    ? JSON.stringify(['stdio', binding.profile, binding.apiOrigin])
    : JSON.stringify([
        'http',
        binding.origin,
        binding.workspaceId,
        binding.principalId,
        binding.clientId,
        binding.grantId,
      ]);
}

const stdio = (): StdioBinding => ({
  kind: 'stdio',
  profile: 'default',
  apiOrigin: 'https://sess.example',
  credentialGeneration: 'g1',
});
const http = (): HttpBinding => ({
  kind: 'http',
  origin: 'https://host.example',
  workspaceId: 'ws_1',
  principalId: 'pr_1',
  clientId: 'cl_1',
  grantId: 'gr_1',
  grantGeneration: 'g1',
});

describe('bindingScope', () => {
  it('asked again for the same object gives the same scope, and follows every identity field changed on it', () => {
    const b = http();
    expect(bindingScope(b)).toBe(expectedScope(b));
    expect(bindingScope(b)).toBe(expectedScope(b));
    for (const field of ['origin', 'workspaceId', 'principalId', 'clientId', 'grantId'] as const) {
      b[field] = `${b[field]}x`;
      expect(bindingScope(b)).toBe(expectedScope(b));
    }
    // The generation is not part of the scope.
    const before = bindingScope(b);
    b.grantGeneration = 'g2';
    expect(bindingScope(b)).toBe(before);

    const s = stdio();
    expect(bindingScope(s)).toBe(expectedScope(s));
    s.profile = 'other';
    expect(bindingScope(s)).toBe(expectedScope(s));
    s.apiOrigin = 'https://other.example';
    expect(bindingScope(s)).toBe(expectedScope(s));
  });

  it('gives fresh objects with the same strings the same scope, and stays right past the scopes it keeps', () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ ...http(), principalId: `pr_${i}` }));
    for (let round = 0; round < 3; round++) {
      for (const b of many) expect(bindingScope({ ...b })).toBe(expectedScope(b));
    }
    const s = stdio();
    expect(bindingScope({ ...s })).toBe(bindingScope({ ...s, credentialGeneration: 'g9' }));
    expect(bindingScope({ ...s, profile: 'p2' })).toBe(expectedScope({ ...s, profile: 'p2' }));
  });

  it('follows a binding object whose kind changes', () => {
    const b = http() as unknown as Record<string, unknown>;
    const first = bindingScope(b as unknown as Binding);
    Object.assign(b, { kind: 'stdio', profile: 'p', apiOrigin: 'https://a.example' });
    expect(bindingScope(b as unknown as Binding)).toBe(JSON.stringify(['stdio', 'p', 'https://a.example']));
    b.kind = 'http';
    expect(bindingScope(b as unknown as Binding)).toBe(first);
  });

  it('a field that is not a string is read afresh each time', () => {
    const inner = { toJSON: () => 'one' };
    const b = { ...http(), workspaceId: inner } as unknown as HttpBinding;
    expect(bindingScope(b)).toContain('"one"');
    inner.toJSON = () => 'two';
    expect(bindingScope(b)).toContain('"two"');
  });

  it('equals the JSON array of the identity fields for any strings, asked once or twice', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary' }), { minLength: 7, maxLength: 7 }),
        fc.boolean(),
        (parts, isStdio) => {
          const b: Binding = isStdio
            ? { kind: 'stdio', profile: parts[0]!, apiOrigin: parts[1]!, credentialGeneration: parts[2]! }
            : {
                kind: 'http',
                origin: parts[0]!,
                workspaceId: parts[1]!,
                principalId: parts[2]!,
                clientId: parts[3]!,
                grantId: parts[4]!,
                grantGeneration: parts[5]!,
              };
          expect(bindingScope(b)).toBe(expectedScope(b));
          expect(bindingScope(b)).toBe(expectedScope(b));
          if (b.kind === 'stdio') b.apiOrigin = parts[6]!;
          else b.grantId = parts[6]!;
          expect(bindingScope(b)).toBe(expectedScope(b));
        },
      ),
    );
  });

  it('of a binding shared by its principal leaves out the client and grant, and is no grant scope', () => {
    const b = http();
    const grantScope = bindingScope(b);
    b.share = 'principal';
    expect(bindingScope(b)).toBe(expectedScope(b));
    expect(bindingScope(b)).not.toBe(grantScope);
    // Another client and grant of the same person: the same scope.
    expect(bindingScope({ ...b, clientId: 'cl_2', grantId: 'gr_2' })).toBe(bindingScope(b));
    expect(bindingScope({ ...b, principalId: 'pr_2' })).not.toBe(bindingScope(b));
    delete b.share;
    expect(bindingScope(b)).toBe(grantScope);
    // The per-principal quota counts one person the same under both scopes.
    const shared = { ...b, share: 'principal' as const };
    expect(principalOfScope(bindingScope(shared))).toBe(bindingPrincipal(b));
    expect(principalOfScope(grantScope)).toBe(bindingPrincipal(b));
  });
});

describe('sameGeneration', () => {
  const record = (share?: 'principal'): HttpBinding => ({
    ...http(),
    ...(share === undefined ? {} : { share }),
  });
  it.each([
    ['a grant record, the same generation', record(), {}, true],
    ['a grant record, another generation', record(), { grantGeneration: 'g2' }, false],
    ['a shared record, its own grant at its generation', record('principal'), {}, true],
    [
      'a shared record, its own grant at another generation',
      record('principal'),
      { grantGeneration: 'g2' },
      false,
    ],
    [
      'a shared record, another grant of the client',
      record('principal'),
      { grantId: 'gr_2', grantGeneration: 'g2' },
      true,
    ],
    [
      'a shared record, another client',
      record('principal'),
      { clientId: 'cl_2', grantGeneration: 'g2' },
      true,
    ],
  ] as const)('%s: %s', (_name, made, call, expected) => {
    expect(sameGeneration(made, { ...made, ...call })).toBe(expected);
  });

  it('compares a stdio credential generation', () => {
    expect(sameGeneration(stdio(), stdio())).toBe(true);
    expect(sameGeneration(stdio(), { ...stdio(), credentialGeneration: 'g2' })).toBe(false);
  });
});
