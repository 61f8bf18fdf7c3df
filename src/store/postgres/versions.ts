/**
 * The versions of the rows one PostgreSQL store decoded or wrote, by scope, then handle, bounded
 * (the rows noted first, of the scope noted first, are forgotten first). Every write moves a
 * row's version, so the row at a version noted here is a record of this format: an update from
 * it needs no format check in its `UPDATE`.
 *
 * A cache only: it reads and writes no row and never decides a compare-and-set (the `UPDATE`'s
 * `version` condition does).
 */

/** How many rows' decoded versions one store remembers. */
const MAX_NOTED_VERSIONS = 10_000;

/** The noted versions of one store. */
export interface NotedVersions {
  /** The version noted for the row of `scope` under `handle`. */
  get(scope: string, handle: string): number | undefined;
  /** Note the version of the row of `scope` under `handle`, or forget it (`undefined`). */
  note(scope: string, handle: string, version: number | undefined): void;
}

/**
 * An empty cache. Keyed by the scope string a view keeps, so a look-up makes no key of its own.
 */
export function createNotedVersions(max = MAX_NOTED_VERSIONS): NotedVersions {
  const byScope = new Map<string, Map<string, number>>();
  let count = 0;
  return {
    get: (scope, handle) => byScope.get(scope)?.get(handle),
    note(scope, handle, version) {
      let noted = byScope.get(scope);
      if (version === undefined) {
        if (noted?.delete(handle) !== true) return;
        count -= 1;
        if (noted.size === 0) byScope.delete(scope);
        return;
      }
      if (noted === undefined) {
        noted = new Map();
        byScope.set(scope, noted);
      }
      const before = noted.size;
      noted.set(handle, version);
      if (noted.size === before) return;
      count += 1;
      if (count <= max) return;
      const [firstScope, first] = byScope.entries().next().value as [string, Map<string, number>];
      first.delete(first.keys().next().value as string);
      count -= 1;
      if (first.size === 0) byScope.delete(firstScope);
    },
  };
}
