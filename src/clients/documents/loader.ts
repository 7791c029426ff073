import { emit, type EventContext, type EventTarget } from '../../events/emit.js';
import { FetchRefusedError } from '../../net/bounded-fetch.js';
import { pinnedFetch } from '../../net/pinned-fetch.js';
import { traceOutbound } from '../../observability/channels.js';
import type { LoadedClient } from '../../rules/client-kind.js';
import type { ClientChanges, ClientRecord, Storage } from '../../storage/types.js';
import {
  documentClientIdProblem,
  documentLifetime,
  InvalidClientDocumentError,
  parseClientMetadataDocument,
  type ClientMetadataDocument,
} from './document.js';

/** The limits and trust policy of {@link documentClients} (`clientMetadataDocuments`, resolved). */
export interface DocumentClientOptions {
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly minCacheSeconds: number;
  readonly maxCacheSeconds: number;
  readonly allowHosts?: readonly string[];
  readonly refuseHosts: readonly string[];
  readonly acceptDocument?: (document: ClientMetadataDocument) => boolean | Promise<boolean>;
  readonly allowLoopbackOrigins: readonly string[];
  readonly ca: readonly string[];
}

/** What {@link documentClients} needs of the server. */
export interface DocumentClientDeps extends EventTarget {
  readonly storage: Storage;
  readonly logger: { warn(message: string, details?: unknown): void };
  /** The scopes the server offers: what a document client may ask for. */
  readonly offeredScopes: () => readonly string[];
}

/** Why a document was refused (the `client_document.refused` event's `reason`). */
export type DocumentRefusalReason = 'client_id' | 'host' | 'address' | 'fetch' | 'document' | 'policy';

/** A client metadata document that cannot be used; the message is safe to show on a page. */
export class DocumentRefusedError extends Error {
  override readonly name = 'DocumentRefusedError';

  constructor(
    readonly reason: DocumentRefusalReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The clients named by the URLs of their metadata documents. */
export interface DocumentClients {
  /** Whether `clientId` is meant as a document's URL (it is an https URL): {@link load} decides. */
  names(clientId: string): boolean;
  /**
   * The client `clientId` names, given the row `stored` the request read under it: a client the
   * operator registered (or one disabled) as it is, without a fetch; otherwise the client of its
   * document, fetched at most once at a time per URL and used for its cache lifetime, saved in
   * the clients store when new or changed.
   *
   * @throws {DocumentRefusedError} reported as a `client_document.refused` event.
   */
  load(
    clientId: string,
    stored: ClientRecord | null,
    context: EventContext,
    /** Runs before a fetch this request would start (a rate limit); what it throws is the answer. */
    beforeFetch?: () => Promise<void>,
  ): Promise<LoadedClient>;
}

interface Cached {
  document: ClientMetadataDocument;
  client: LoadedClient;
  expiresAt: number;
}

/** Documents kept per instance at most: an attacker can serve any number of valid ones. */
const MAX_CACHED = 1000;

/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): one instance per
 * server, holding the documents it fetched (a cache bounded in time and size) and the fetches in
 * progress, so concurrent first uses of a URL make one fetch. A refusal is never cached.
 *
 * @example
 * const documents = documentClients(options.clientMetadataDocuments, { storage, clock, events, logger, offeredScopes });
 * const client = await documents.load('https://app.example/oauth/client.json', null, {});
 */
export function documentClients(options: DocumentClientOptions, deps: DocumentClientDeps): DocumentClients {
  const cache = new Map<string, Cached>();
  const inFlight = new Map<string, Promise<Cached>>();

  const refused = (clientId: string, context: EventContext, err: DocumentRefusedError): never => {
    emit(deps, {
      type: 'client_document.refused',
      clientId,
      reason: err.reason,
      description: err.message,
      ...context,
    });
    throw err;
  };

  async function refresh(
    clientId: string,
    stored: ClientRecord | null,
    context: EventContext,
  ): Promise<Cached> {
    let document: ClientMetadataDocument;
    let lifetime: number;
    try {
      ({ document, lifetime } = await fetchDocument(clientId, options));
      await decide(document, options, deps);
    } catch (err) {
      if (err instanceof DocumentRefusedError) refused(clientId, context, err);
      throw err;
    }
    const client = await save(deps, document, stored, context);
    const entry = { document, client, expiresAt: deps.clock() + lifetime * 1000 };
    if (client.document !== undefined) {
      cache.delete(clientId);
      cache.set(clientId, entry);
      if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value!);
    }
    return entry;
  }

  return {
    names: (clientId) => clientId.startsWith('https://'),
    async load(clientId, stored, context, beforeFetch) {
      // The operator's client (or one the operator disabled) is never replaced by a document.
      if (stored && (!madeFromDocument(stored) || stored.disabled)) return stored;
      const cached = cache.get(clientId);
      if (cached && cached.expiresAt > deps.clock() && stored && sameClient(stored, cached.client)) {
        return { ...stored, document: cached.client.document! };
      }
      let running = inFlight.get(clientId);
      if (!running) {
        await beforeFetch?.();
        // Another request may have started the fetch meanwhile: join it rather than fetch twice.
        running = inFlight.get(clientId);
      }
      if (!running) {
        running = refresh(clientId, stored, context).finally(() => inFlight.delete(clientId));
        inFlight.set(clientId, running);
      }
      return (await running).client;
    },
  };
}

/** Fetches and reads the document at `clientId`, with its cache lifetime in seconds. */
async function fetchDocument(
  clientId: string,
  options: DocumentClientOptions,
): Promise<{ document: ClientMetadataDocument; lifetime: number }> {
  const problem = documentClientIdProblem(clientId);
  if (problem !== null) throw new DocumentRefusedError('client_id', `The client_id ${problem}.`);
  const url = new URL(clientId);
  if (!hostAllowed(url.hostname, options)) {
    throw new DocumentRefusedError('host', `Client metadata documents on ${url.host} are not accepted here.`);
  }
  let res;
  try {
    // Traced without the URL: a document's URL is its client's id.
    res = await traceOutbound(
      { call: 'client_document_fetch' },
      () =>
        pinnedFetch(url, {
          timeoutMs: options.timeoutMs,
          maxBytes: options.maxBytes,
          allowLoopback: options.allowLoopbackOrigins.includes(url.origin),
          ca: options.ca,
        }),
      (answer) => (answer.status === 200 ? undefined : 'status'),
    );
  } catch (err) {
    if (!(err instanceof FetchRefusedError)) throw err;
    const reason = err.reason === 'address' ? 'address' : 'fetch';
    throw new DocumentRefusedError(
      reason,
      `The client metadata document could not be fetched: ${err.message}.`,
      {
        cause: err,
      },
    );
  }
  if (res.status !== 200) {
    const redirect = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : '';
    throw new DocumentRefusedError(
      'fetch',
      `The client metadata document at ${url.host} answered ${res.status}${redirect}.`,
    );
  }
  try {
    const document = parseClientMetadataDocument(clientId, res.body);
    const lifetime = documentLifetime(
      res.headers['cache-control'],
      options.minCacheSeconds,
      options.maxCacheSeconds,
    );
    return { document, lifetime };
  } catch (err) {
    if (!(err instanceof InvalidClientDocumentError)) throw err;
    throw new DocumentRefusedError('document', `The client metadata document is not valid: ${err.message}.`);
  }
}

/** Whether `hostname` passes `allowHosts` and `refuseHosts`. */
function hostAllowed(hostname: string, options: DocumentClientOptions): boolean {
  const matches = (pattern: string) =>
    pattern.startsWith('*.') ? hostname.endsWith(pattern.slice(1)) : hostname === pattern;
  if (options.refuseHosts.some(matches)) return false;
  return options.allowHosts === undefined || options.allowHosts.some(matches);
}

/** The host's `acceptDocument`: `false`, or anything it throws (logged), refuses the client. */
async function decide(
  document: ClientMetadataDocument,
  options: DocumentClientOptions,
  deps: DocumentClientDeps,
): Promise<void> {
  if (!options.acceptDocument) return;
  let accepted: boolean;
  try {
    accepted = (await options.acceptDocument(document)) === true;
  } catch (err) {
    deps.logger.warn(
      `clientMetadataDocuments.acceptDocument threw for ${document.clientId}; the client is refused`,
      err,
    );
    accepted = false;
  }
  if (!accepted) {
    throw new DocumentRefusedError('policy', 'This server does not accept this client application.');
  }
}

/** Whether a stored client was made from a metadata document (never the operator's own). */
function madeFromDocument(client: ClientRecord): boolean {
  return client.registeredVia === 'document';
}

/** The stored row of a document's client (a public code client that must use PKCE). */
function recordOf(
  document: ClientMetadataDocument,
  offered: readonly string[],
  createdAt: number,
): ClientRecord {
  const asked = document.scope?.split(' ').filter(Boolean);
  const scopes = asked === undefined ? [...offered] : asked.filter((scope) => offered.includes(scope));
  return {
    clientId: document.clientId,
    applicationName: document.clientName,
    redirectUri: document.redirectUris[0]!,
    grantType: 'authorization_code',
    secretHash: null,
    scopes,
    defaultScopes: null,
    contacts: document.contacts ?? [],
    disabled: false,
    requirePkce: true,
    createdAt,
    registeredVia: 'document',
    // Anyone can name a new document: a client no token was issued to is pruned after a day.
    unusedExpiresAt: createdAt + DOCUMENT_UNUSED_MS,
  };
}

/** How long a document's client no token was issued to is kept (`storage.prune` removes it). */
const DOCUMENT_UNUSED_MS = 86_400_000;

/** The fields a document decides, as the store keeps them. */
const DOCUMENT_FIELDS = ['applicationName', 'redirectUri', 'scopes', 'contacts'] as const;

function sameClient(stored: ClientRecord, made: ClientRecord): boolean {
  return DOCUMENT_FIELDS.every(
    (field) => JSON.stringify(stored[field] ?? []) === JSON.stringify(made[field] ?? []),
  );
}

/**
 * Saves the document's client: created when absent; updated when its document changed (never
 * enabled again if the operator disabled it meanwhile). A client created meanwhile by another
 * instance is updated; one the operator registered under the id meanwhile wins, without document.
 */
async function save(
  deps: DocumentClientDeps,
  document: ClientMetadataDocument,
  stored: ClientRecord | null,
  context: EventContext,
): Promise<LoadedClient> {
  const { clients } = deps.storage;
  const made = recordOf(document, deps.offeredScopes(), deps.clock());
  const facts = { redirectUris: document.redirectUris, grantTypes: document.grantTypes };
  const saved = (created: boolean) =>
    emit(deps, {
      type: 'client_document.saved',
      clientId: made.clientId,
      applicationName: made.applicationName,
      redirectUris: document.redirectUris,
      created,
      ...context,
    });
  let current = stored;
  if (current === null) {
    try {
      await clients.create!(made);
      saved(true);
      return { ...made, document: facts };
    } catch (err) {
      current = await clients.find(made.clientId);
      if (current === null) throw err;
      if (!madeFromDocument(current) || current.disabled) return current;
    }
  }
  if (sameClient(current, made)) return { ...current, document: facts };
  const changes: ClientChanges = Object.fromEntries(DOCUMENT_FIELDS.map((field) => [field, made[field]]));
  const updated = await clients.update!(made.clientId, changes);
  // Removed meanwhile: made again, as a first use would.
  if (updated === null) return save(deps, document, null, context);
  saved(false);
  return { ...updated, document: facts };
}
