/*
 * What an object must have to be a storage: the contract's required methods (docs/storage.md),
 * checked once when the server is built, naming what is missing.
 */

/** The 14 required methods of the storage contract, by store. */
const REQUIRED_METHODS = {
  ephemeral: ['get', 'set', 'add', 'take', 'replace', 'increment', 'delete'],
  clients: ['find'],
  users: ['findOrCreate'],
  grants: ['list', 'save'],
  tokens: ['save', 'saveAll', 'find'],
} as const;

/** The required methods `value` lacks, as `store.method`. */
export function missingStorageMethods(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return ['(the storage object itself)'];
  return Object.entries(REQUIRED_METHODS).flatMap(([store, methods]) => {
    const target = (value as Record<string, Record<string, unknown> | undefined>)[store];
    return methods.filter((m) => typeof target?.[m] !== 'function').map((m) => `${store}.${m}`);
  });
}
