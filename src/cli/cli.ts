import type { Option } from 'commander';
import type { EventTarget } from '../events/emit.js';
import type { SqlStorage } from '../storage/sql/adapter.js';

/** Where a command writes; tests and embedding hosts pass their own. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /**
   * Asks the operator a yes/no question; absent where nobody can answer (not a terminal), where
   * a command that would ask needs `--yes` instead.
   */
  confirm?(question: string): Promise<boolean>;
}

/** What every command uses: the database, the `--migrate` option, its events, and output. */
export interface Cli {
  withStorage<T>(migrate: boolean, work: (storage: SqlStorage) => Promise<T>): Promise<T>;
  /**
   * The command's events, where the operator's functions report each change (`client.updated`,
   * `signing_key.rotated`, ...): the `--audit-file` listens to them. Pass `{ storage, ...events }`
   * to the operator's functions, `events` to the key functions.
   */
  events: EventTarget;
  migrateOption(): Option;
  print(json: unknown, text: string): void;
  /** One `warning: ` line on stderr (with `--json`, too: stdout stays one JSON document). */
  warn(message: string): void;
  /** {@link Io.confirm}: absent outside a terminal. */
  confirm: Io['confirm'];
}
