import { runEach } from '../storage/batch.js';
import type { BatchOperation, BatchResults, Storage } from '../storage/types.js';

/**
 * Runs `operations` with the adapter's {@link Storage.batch} when it has one (one transaction,
 * and on PostgreSQL one round trip), else calls the methods one by one, in the same order: then
 * the last of them stays the commit point, and a failure before it leaves the earlier writes
 * done, as the rules of a commit point allow (nothing half done is ever returned to anyone).
 */
export function runBatch<const T extends readonly BatchOperation[]>(
  storage: Storage,
  operations: T,
): Promise<BatchResults<T>> {
  return storage.batch ? storage.batch(operations) : runEach(storage, operations);
}
