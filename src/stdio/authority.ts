/**
 * The stdio `Authority`: who a tool call acts for. stdio carries no conversation identity, so the
 * caller is whoever holds the configured key: the binding is the profile, the API origin and a
 * credential generation (a keyed digest of `SESS_API_KEY`, see `credential.ts`).
 *
 * `SESS_API_KEY` is read here, on each tool call, never at start-up. A configuration error found
 * at start-up is reported on each call as the same `NOT_CONFIGURED`. This module decides nothing
 * about records: the engine re-checks every loaded record against the binding it returns.
 */

import { optionNames, readOptions } from '../core/contract/options.js';
import {
  type Authority,
  type CallAuthority,
  type HandleStore,
  isSessMcpError,
  type SessApi,
  SessMcpError,
  type StdioBinding,
} from '../index.js';
import { createSessClient } from '../sess/index.js';
import {
  type EnvLike,
  isUnexpandedPlaceholder,
  PLACEHOLDER_KEY_MESSAGE,
  STDIO_ENV,
  type StdioConfig,
} from './config.js';
import { credentialGenerationOf, loadOrCreateCredentialKey } from './credential.js';

/** A store backend that hands out one view per binding (the file store fits). */
export interface StdioStoreFactory {
  forBinding(binding: StdioBinding): HandleStore;
}

/** Options of {@link createStdioAuthority}. */
export interface StdioAuthorityOptions {
  /** The environment `SESS_API_KEY` is read from on each call. */
  env: EnvLike;
  /** The checked configuration, or the `NOT_CONFIGURED` error reading it produced. */
  config: StdioConfig | SessMcpError;
  /** Where records live. Called lazily, on the first tool call. */
  store: (config: StdioConfig) => StdioStoreFactory;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,4096}$/;

/** The option names of {@link StdioAuthorityOptions}; any other key is refused. */
const KNOWN_OPTIONS = optionNames<StdioAuthorityOptions>()('env', 'config', 'store');

/**
 * Create the stdio authority.
 *
 * @example
 * ```ts source="examples/snippets/stdio.examples.ts#createStdioAuthority"
 * const authority = createStdioAuthority({
 *   env: process.env,
 *   config: readStdioConfig(process.env),
 *   store: (c) => createFileHandleStore({ stateDir: c.stateDir, profile: c.profile }),
 * });
 * ```
 */
export function createStdioAuthority(options: StdioAuthorityOptions): Authority {
  const read = readOptions('createStdioAuthority', options, { known: KNOWN_OPTIONS });
  if (options.env === null || typeof options.env !== 'object')
    read.fail('env', 'must be an object of strings');
  if (options.config === null || typeof options.config !== 'object') {
    read.fail('config', 'must be the configuration readStdioConfig returned');
  }
  read.func('store', options.store);
  const { env, config } = options;
  let secret: Promise<Uint8Array> | undefined;
  let stores: StdioStoreFactory | undefined;
  // One client per credential generation, so the client's receipt key-set cache survives calls.
  let client: { generation: string; sess: SessApi } | undefined;

  return {
    async resolve(): Promise<CallAuthority> {
      if (isSessMcpError(config)) throw config;
      const key = env[STDIO_ENV.apiKey];
      if (key === undefined || key === '') {
        throw new SessMcpError(
          'NOT_CONFIGURED',
          `${STDIO_ENV.apiKey} is not set. Put your Sess API key in the ${STDIO_ENV.apiKey} environment variable of the server process (never in a chat), then restart the server.`,
          { retryable: false },
        );
      }
      if (isUnexpandedPlaceholder(key)) {
        throw new SessMcpError('NOT_CONFIGURED', PLACEHOLDER_KEY_MESSAGE, { retryable: false });
      }
      if (!KEY_PATTERN.test(key)) {
        throw new SessMcpError(
          'NOT_CONFIGURED',
          `${STDIO_ENV.apiKey} must be the API key alone: printable characters without spaces or line breaks.`,
          { retryable: false },
        );
      }

      secret ??= loadOrCreateCredentialKey(config.profileDir);
      let keySecret: Uint8Array;
      try {
        keySecret = await secret;
      } catch (error) {
        secret = undefined; // a transient failure may pass; try again on the next call
        throw error;
      }
      const credentialGeneration = credentialGenerationOf(keySecret, key);
      const binding: StdioBinding = {
        kind: 'stdio',
        profile: config.profile,
        apiOrigin: config.apiOrigin,
        credentialGeneration,
      };

      if (client?.generation !== credentialGeneration) {
        client = { generation: credentialGeneration, sess: makeClient(config, key) };
      }
      stores ??= options.store(config);
      return { binding, sess: client.sess, store: stores.forBinding(binding) };
    },
  };
}

function makeClient(config: StdioConfig, key: string): SessApi {
  try {
    return createSessClient({
      origin: config.apiOrigin,
      credential: () => key,
      allowInsecureLocalhost: config.allowInsecureLocalhost,
      ...(config.expectedWorkspaceId === undefined
        ? {}
        : { expectedWorkspaceId: config.expectedWorkspaceId }),
      ...(config.receiptIssuer === undefined ? {} : { receiptIssuer: config.receiptIssuer }),
    });
  } catch (error) {
    // The configuration reader checks every value the client checks, by the same rules; should
    // they ever differ, the client's own message is not repeated in case it quotes a value.
    throw new SessMcpError('NOT_CONFIGURED', 'The Sess client cannot be configured from this environment.', {
      retryable: false,
      cause: error,
    });
  }
}
