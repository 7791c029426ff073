import { Command, InvalidArgumentError } from 'commander';
import { connectStorage } from '../storage/sql/connect.js';
import type { SqlStorage } from '../storage/sql/adapter.js';

/** The demo's database: the CLI works on it unless told otherwise. */
export const DEFAULT_DATABASE_URL = 'sqlite:./.data/demo.db';

/** Where a command writes; tests and embedding hosts pass their own. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

interface GlobalOptions {
  databaseUrl?: string;
  json?: boolean;
}

/**
 * The operator's command line: `openid-oauth-bridge <command>`. Every command opens the
 * database, does its work and closes it; `--json` prints one JSON document for scripts.
 */
export function createProgram(io: Io, env: NodeJS.ProcessEnv = process.env): Command {
  const program = new Command('openid-oauth-bridge')
    .description('Operate an openid-oauth-bridge authorization server: its database and its clients.')
    .option(
      '--database-url <url>',
      `sqlite:./file.db or postgres://… (default: $DATABASE_URL, else ${DEFAULT_DATABASE_URL})`,
    )
    .option('--json', 'print machine-readable JSON')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();

  const withStorage = async <T>(migrate: boolean, work: (storage: SqlStorage) => Promise<T>): Promise<T> => {
    const databaseUrl = program.opts<GlobalOptions>().databaseUrl ?? env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
    const storage = await connectStorage(databaseUrl, { migrate });
    try {
      return await work(storage);
    } finally {
      await storage.close();
    }
  };
  const print = (json: unknown, text: string) =>
    io.out(program.opts<GlobalOptions>().json === true ? `${JSON.stringify(json, null, 2)}\n` : `${text}\n`);

  program
    .command('migrate')
    .description('bring the database schema up to date (safe to run twice, and from several hosts at once)')
    .action(() =>
      withStorage(false, async (storage) => {
        const applied = await storage.migrate();
        print(
          { applied },
          applied.length === 0 ? 'The schema is up to date.' : `Applied ${applied.join(', ')}.`,
        );
      }),
    );

  program
    .command('prune')
    .description(
      'delete expired codes, tokens, nonces and sessions, in batches (safe to run from several hosts)',
    )
    .option('--batch-size <n>', 'rows deleted per statement', positiveInteger, 1000)
    .action((options: { batchSize: number }) =>
      withStorage(true, async (storage) => {
        const removed = await storage.prune(Date.now(), { batchSize: options.batchSize });
        const summary = Object.entries(removed)
          .map(([kind, count]) => `${count} ${kind}`)
          .join(', ');
        print({ removed }, `Removed ${summary}.`);
      }),
    );

  return program;
}

export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < 1) {
    throw new InvalidArgumentError('must be a positive integer.');
  }
  return number;
}
