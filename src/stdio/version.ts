/**
 * The package name and version the stdio server reports in its MCP `serverInfo`, taken from
 * `package.json` at build time so they cannot drift. Nothing else of `package.json` is used.
 */
import pkg from '../../package.json' with { type: 'json' };

/** The npm package name. */
export const PACKAGE_NAME: string = pkg.name;

/** The npm package version. */
export const PACKAGE_VERSION: string = pkg.version;
