import { ClientIdTakenError, UnknownClientError } from '../clients/register.js';
import { redactConnectionString } from '../storage/redact.js';
import { databaseError, DatabaseError } from '../storage/sql/connect.js';

/** The exit codes of the command, as `--help` lists them. */
export const EXIT = {
  ok: 0,
  /** A wrong argument, or input refused: an invalid redirect URI, a taken or unknown client_id. */
  refused: 1,
  /** No database named (neither --database-url nor DATABASE_URL). */
  noDatabase: 2,
  /** The database failed: unreachable, authentication, no such database, schema not set up. */
  database: 3,
} as const;

/** A failure of a command: one line on stderr, and its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.refused,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const EXIT_CODES_HELP = `
Database:
  Every command works on the database named by --database-url, else $DATABASE_URL, and
  prints which one on stderr. With neither, it refuses. Only \`migrate\` (or --migrate on a
  command that writes) changes the schema; the other commands never do.

Audit trail:
  With --audit-file, else $AUDIT_FILE, every change a command makes is appended to that file as
  a JSON line (by: "operator"), as the server's auditTrail writes it; never a secret. A file that
  cannot be opened refuses the command before anything is changed.

Exit codes:
  0  done
  1  refused: a wrong argument, an invalid redirect URI or scope, a client_id taken or unknown,
     an audit file that cannot be opened
  2  no database named: pass --database-url or set DATABASE_URL
  3  the database failed: unreachable, authentication refused, no such database, or its schema
     is not set up (run: openid-oauth-bridge migrate)
`;

/** The refusal of a command on a client that is not registered. */
export function unknownClient(clientId: string): CliError {
  return new CliError(`no client has client_id ${clientId} (see: clients list)`);
}

/**
 * What a command threw, as one line and an exit code: the database's failures (named with the
 * database) exit 3, refused input 1.
 */
export function asCliError(err: unknown, databaseUrl: string): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof ClientIdTakenError) {
    return new CliError(
      `client_id ${err.clientId} is already registered in ${redactConnectionString(databaseUrl)}: choose another --client-id, or change that client with: clients update ${err.clientId}`,
    );
  }
  if (err instanceof UnknownClientError) return unknownClient(err.clientId);
  if (err instanceof TypeError) return new CliError(err.message.replace(/^openid-oauth-bridge: /, ''));
  const described = databaseError(err, databaseUrl);
  if (described instanceof DatabaseError && described.failure === 'duplicate') {
    return new CliError(described.message.replace(/^openid-oauth-bridge: /, ''));
  }
  const fromDriver = typeof (err as { code?: unknown } | null)?.code === 'string';
  if (described instanceof DatabaseError && (described.failure !== 'other' || fromDriver)) {
    return new CliError(described.message.replace(/^openid-oauth-bridge: /, ''), EXIT.database);
  }
  return new CliError((err as Error)?.message ?? String(err));
}
