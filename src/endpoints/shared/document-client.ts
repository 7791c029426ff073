import type { Request } from 'express';
import type { AuthorizationServer } from '../../config/server.js';
import { DocumentRefusedError } from '../../clients/documents/loader.js';
import { eventContext } from '../../events/emit.js';
import { ephemeralKeys } from '../../storage/keys.js';
import { addressKey, countInWindow, overLimit } from './client-rate-limit.js';
import type { LoadedClient } from '../../rules/client-kind.js';
import type { ClientRecord } from '../../storage/types.js';

export { DocumentRefusedError };

/**
 * The client a request names: the row `stored` read under `clientId`, or, when client metadata
 * documents are on and `clientId` is a document's URL, the client of that document (fetched or
 * cached, kept in the clients store; an operator's client under the id stays as it is). Every
 * endpoint that loads a client by its id goes through here.
 *
 * @throws {DocumentRefusedError} the document cannot be used: the caller answers with its own
 * error (a page, `invalid_client`), never a redirect to a URI the document lists.
 */
export function namedClient(
  server: AuthorizationServer,
  clientId: string,
  stored: ClientRecord | null,
  req: Request,
): LoadedClient | null | Promise<LoadedClient> {
  const documents = server.clientDocuments;
  // With documents off, a client made from one is not registered here: its document is no longer
  // read, nor its trust policy applied.
  if (documents === undefined) return stored?.registeredVia === 'document' ? null : stored;
  if (!documents.names(clientId)) return stored;
  return documents.load(clientId, stored, eventContext(req), () => limitFetches(server, req));
}

/**
 * A fetch of a document is work any visitor can cause with a made-up `client_id`: counted per
 * address, past `clientMetadataDocuments.maxFetchesPerMinute` it is refused with 429.
 */
async function limitFetches(server: AuthorizationServer, req: Request): Promise<void> {
  const max = server.options.clientMetadataDocuments?.maxFetchesPerMinute ?? false;
  if (max === false) return;
  const key = ephemeralKeys.rateLimit(`document:address:${addressKey(server, req) ?? 'unknown'}`);
  const wait = await countInWindow(server, key, max, 60_000);
  if (wait !== undefined) {
    const description = 'Too many client metadata documents were fetched for this address. Try again later.';
    throw overLimit(server, req, { limit: 'client_document_fetch', per: 'address' }, description, wait);
  }
}
