import type { BatchOperation, BatchOperationResults, BatchResults, Storage } from './types.js';

/**
 * Runs the operations of a batch one by one through their own methods, in order: what the
 * library does for an adapter without {@link Storage.batch}, and what an adapter's batch does for
 * a storage assembled from its stores and another adapter's (the SQL durable stores with
 * `redisEphemeralStore`).
 */
export async function runEach<const T extends readonly BatchOperation[]>(
  storage: BatchStores,
  operations: T,
): Promise<BatchResults<T>> {
  const results: unknown[] = [];
  for (const operation of operations) results.push(await runOperation(storage, operation));
  return results as BatchResults<T>;
}

/** The stores a batch's operations run on. */
export type BatchStores = Pick<Storage, 'ephemeral' | 'tokens' | 'clients' | 'grants'>;

/** Runs one operation of a batch through its own method. */
export async function runOperation(
  storage: BatchStores,
  operation: BatchOperation,
): Promise<BatchOperationResults[BatchOperation['op']]> {
  switch (operation.op) {
    case 'tokens.save':
      await storage.tokens.save(operation.token);
      return undefined;
    case 'tokens.saveFrom': {
      const found = await storage.tokens.find(operation.from);
      const from = found?.token;
      if (from === undefined || from.type !== 'refresh_token' || from.clientId !== operation.clientId)
        return false;
      const { clientId, userId, grantId, scopes } = from;
      await storage.tokens.save({ ...operation.token, clientId, userId, grantId, scopes });
      return true;
    }
    case 'ephemeral.set':
      await storage.ephemeral.set(operation.key, operation.value, operation.expiresAt, operation.now);
      return undefined;
    case 'ephemeral.take':
      return storage.ephemeral.take(operation.key, operation.now);
    case 'ephemeral.add':
      return storage.ephemeral.add(operation.key, operation.value, operation.expiresAt, operation.now);
    case 'clients.find':
      return storage.clients.find(operation.clientId);
    case 'tokens.find':
      return storage.tokens.find(operation.tokenHash);
    case 'grants.find': {
      const [grant] = await storage.grants.list({ userId: operation.userId, clientId: operation.clientId });
      return grant ?? null;
    }
    case 'ephemeral.get':
      return storage.ephemeral.get(operation.key, operation.now);
  }
}
