import type { Request } from 'express';
import type { AuthorizationServer } from '../../config/server.js';
import { DocumentRefusedError } from '../../clients/documents/loader.js';
import { eventContext } from '../../events/emit.js';
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
  if (documents === undefined || !documents.names(clientId)) return stored;
  return documents.load(clientId, stored, eventContext(req));
}
