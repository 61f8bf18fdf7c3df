/**
 * What a handle is bound to: a stdio profile, API origin and credential generation, or an HTTP
 * origin, workspace, principal, client, grant and generation. Plain data types: the `Authority`
 * port resolves a binding (`contract/ports.ts`), and every record keeps the one it was made under.
 *
 * It computes nothing: a binding's scope and generation digests are `contract/ports.ts`'s.
 */

/** A stdio handle belongs to one profile, API origin and credential generation. */
export interface StdioBinding {
  kind: 'stdio';
  profile: string;
  apiOrigin: string;
  /** A keyed digest of the API key; the key itself is never stored. */
  credentialGeneration: string;
}

/**
 * An HTTP handle belongs to one origin, workspace, principal, client, grant and generation; with
 * `share: 'principal'`, to the origin, workspace and principal, and still to the grant generation
 * of the client and grant it was made through.
 */
export interface HttpBinding {
  kind: 'http';
  origin: string;
  workspaceId: string;
  principalId: string;
  clientId: string;
  grantId: string;
  grantGeneration: string;
  /**
   * `'principal'`: the handle is the person's, not the client's. Every client and grant of the
   * principal reaches it, except the grant it was made through at another generation (a revoked
   * grant, consented again). Absent: the handle is the client's and grant's alone.
   */
  share?: 'principal';
}

/** What a handle is bound to. */
export type Binding = StdioBinding | HttpBinding;
