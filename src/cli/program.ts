import { Command, CommanderError, Option } from 'commander';
import { ServerEvents } from '../events/emitter.js';
import type { SqlStorage } from '../storage/sql/adapter.js';
import { redactConnectionString } from '../storage/redact.js';
import { connectStorage, type ConnectStorageOptions } from '../storage/sql/connect.js';
import type { Cli, Io } from './cli.js';
import { addClientCommands } from './clients.js';
import { asCliError, CliError, EXIT, EXIT_CODES_HELP } from './errors.js';
import { positiveInteger } from './format.js';
import { addGrantCommands } from './grants.js';
import { addKeyCommands } from './keys.js';
import { addMemberAppCommands } from './member-apps.js';
import { openAuditFile } from './audit-file.js';

export { CliError, EXIT } from './errors.js';
export type { Cli, Io } from './cli.js';

interface GlobalOptions {
  databaseUrl?: string;
  auditFile?: string;
  json?: boolean;
}

/**
 * The operator's command line: `openid-oauth-bridge <command>`. Every command opens the
 * database, does its work and closes it; `--json` prints one JSON document for scripts;
 * `--audit-file` appends the changes it made to an audit trail.
 */
export function createProgram(
  io: Io,
  env: NodeJS.ProcessEnv = process.env,
  /** How a command opens its database; tests pass one that watches the storage. */
  connect: typeof connectStorage = connectStorage,
): Command {
  const program = new Command('openid-oauth-bridge')
    .description('Operate an openid-oauth-bridge authorization server: its database and its clients.')
    .option(
      '--database-url <url>',
      'sqlite:./file.db or postgres://user@host:5432/db (default: $DATABASE_URL; one of them is required)',
    )
    .option(
      '--audit-file <path>',
      "append each change the command makes to this audit trail, as the server's auditTrail writes it (default: $AUDIT_FILE; none without either)",
    )
    .option('--json', 'print machine-readable JSON')
    .addHelpText('after', EXIT_CODES_HELP)
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();

  const warn = (message: string) => io.err(`warning: ${message}\n`);
  // The command's changes are reported here; the audit file, when named, listens.
  const logger = { warn, error: (message: string) => io.err(`error: ${message}\n`) };
  const events = { events: new ServerEvents(() => logger), clock: Date.now };

  /**
   * Opens the audit file (if named) and the named database, says which on stderr, does the work
   * and closes both, the audit file last, once its lines are written. A database failure becomes
   * one line naming the database and the cause, with exit code 3.
   */
  const withDatabase = async <T>(
    open: Pick<ConnectStorageOptions, 'migrate' | 'checkSchema'>,
    work: (storage: SqlStorage) => Promise<T>,
  ): Promise<T> => {
    const given = program.opts<GlobalOptions>().databaseUrl;
    const databaseUrl = given ?? (env.DATABASE_URL || undefined);
    if (databaseUrl === undefined) {
      throw new CliError(
        'no database named: pass --database-url sqlite:./path/to/oauth.db (or postgres://user@host:5432/db), or set DATABASE_URL. ' +
          '(The demo, npm run demo, uses sqlite:./.data/demo.db.)',
        EXIT.noDatabase,
      );
    }
    io.err(
      `database: ${redactConnectionString(databaseUrl)} (from ${given === undefined ? 'DATABASE_URL' : '--database-url'})\n`,
    );
    // Before the database: a file that cannot be opened refuses the command before any change.
    const audit = openAuditFile(program.opts<GlobalOptions>().auditFile, env, { ...events, logger }, io);
    try {
      let storage: SqlStorage;
      try {
        storage = await connect(databaseUrl, open);
      } catch (err) {
        throw asCliError(err, databaseUrl);
      }
      try {
        return await work(storage);
      } catch (err) {
        throw asCliError(err, databaseUrl);
      } finally {
        await storage.close().catch(() => undefined);
      }
    } finally {
      await audit?.close();
    }
  };
  /**
   * A command's database: migrated first only when asked (`migrate: true`), else refused unless
   * its schema is up to date (connectStorage checks it), so no command creates or migrates one
   * unasked.
   */
  const withStorage = <T>(migrate: boolean, work: (storage: SqlStorage) => Promise<T>): Promise<T> =>
    withDatabase({ migrate }, work);
  const migrateOption = () =>
    new Option('--migrate', 'bring the schema up to date first (as the migrate command does)');
  const print = (json: unknown, text: string) =>
    io.out(program.opts<GlobalOptions>().json === true ? `${JSON.stringify(json, null, 2)}\n` : `${text}\n`);
  const cli: Cli = { withStorage, events, migrateOption, print, warn, confirm: io.confirm?.bind(io) };

  program
    .command('migrate')
    .description('bring the database schema up to date (safe to run twice, and from several hosts at once)')
    .action(() =>
      // Opened as it is (a SQLite file created), then migrated here, to say what ran.
      withDatabase({ checkSchema: false }, async (storage) => {
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
      'delete expired ephemeral entries, tokens that can no longer work, old revoked grants and old per-app usage, in batches (safe to run from several hosts)',
    )
    .option('--batch-size <n>', 'rows deleted per statement', positiveInteger, 1000)
    .option(
      '--usage-retention-days <n>',
      'per-app usage (day counts, last uses) older than this is deleted',
      positiveInteger,
      400,
    )
    .addOption(migrateOption())
    .action((options: { batchSize: number; usageRetentionDays: number; migrate?: boolean }) =>
      withStorage(options.migrate === true, async (storage) => {
        const removed = await storage.prune(Date.now(), {
          batchSize: options.batchSize,
          usageRetentionMs: options.usageRetentionDays * 86_400_000,
        });
        const summary = Object.entries(removed)
          .map(([kind, count]) => `${count} ${kind}`)
          .join(', ');
        print({ removed }, `Removed ${summary}.`);
      }),
    );

  addMemberAppCommands(addClientCommands(program, cli, env), cli);
  addGrantCommands(program, cli);
  addKeyCommands(program, cli, env);
  return program;
}

/**
 * Reports what a run of the program threw and returns its exit code: one `error:` line on stderr
 * (Commander has printed its own), and with `--json` also one JSON document on stdout,
 * `{ "error": { "message", "exit_code" } }`, so that a script reads stdout alone. `--help` exits 0.
 */
export function reportFailure(program: Command, io: Io, err: unknown, argv: readonly string[]): number {
  const commander = err instanceof CommanderError;
  const exitCode = commander ? err.exitCode : err instanceof CliError ? err.exitCode : EXIT.refused;
  const message = (err instanceof Error ? err.message : String(err)).replace(/^error: /, '');
  if (!commander) io.err(`error: ${message}\n`);
  // A wrong argument may stop Commander before it sets the global options: read argv too.
  const json = program.opts<GlobalOptions>().json === true || argv.includes('--json');
  if (json && exitCode !== 0) {
    io.out(`${JSON.stringify({ error: { message, exit_code: exitCode } }, null, 2)}\n`);
  }
  return exitCode;
}
