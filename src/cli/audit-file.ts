import { auditTrail, type AuditSource, type AuditTrail } from '../observability/audit.js';
import type { Io } from './cli.js';
import { CliError } from './errors.js';

/**
 * The command's audit trail (issue 41): `--audit-file`, else `$AUDIT_FILE`, else none. The
 * server's own writer ({@link auditTrail}), on the command's events, so that the operator's
 * changes land in the file the servers write, in the same line format: `by: "operator"`, and no
 * `request_id` (no request made them). Opened before anything is changed, so that a path that
 * cannot be written refuses the command instead of losing its line; the caller closes it before
 * the process ends, which waits for every line to be written.
 */
export function openAuditFile(
  given: string | undefined,
  env: NodeJS.ProcessEnv,
  source: AuditSource,
  io: Io,
): AuditTrail | undefined {
  const file = given ?? (env.AUDIT_FILE || undefined);
  if (file === undefined) return undefined;
  const from = given === undefined ? 'AUDIT_FILE' : '--audit-file';
  let trail: AuditTrail;
  try {
    trail = auditTrail(source, { file });
  } catch (err) {
    throw new CliError(
      `cannot open the audit file ${file} (from ${from}): ${(err as Error).message}; nothing was changed`,
    );
  }
  io.err(`audit file: ${file} (from ${from})\n`);
  return trail;
}
