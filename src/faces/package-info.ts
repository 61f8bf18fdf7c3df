/**
 * The package name and version both faces report in their MCP `serverInfo` (and `sess-mcp
 * --version` prints), read from `package.json` at build time so they cannot drift. Nothing else of
 * `package.json` is used, and nothing here loads the MCP SDK: the records commands import it too.
 */
import pkg from '../../package.json' with { type: 'json' };

/** The npm package name. */
export const PACKAGE_NAME: string = pkg.name;

/** The npm package version. */
export const PACKAGE_VERSION: string = pkg.version;
