import { Option } from 'commander';
import { SCOPE_TOKEN } from '../rules/scopes.js';
import { CliError } from './errors.js';

/** The scopes a server with OpenID Connect serves whatever its `scopes` option says. */
const STANDARD_SCOPES: readonly string[] = ['openid', 'profile'];

/**
 * `--offered-scopes`: the scopes the server offers. The CLI reads only the database and its
 * environment; the server's `scopes` option is in the host's code, so the operator says it here.
 */
export function offeredScopesOption(): Option {
  return new Option(
    '--offered-scopes <scopes>',
    'the scopes your server offers, space-separated: the keys of its scopes option, with openid and profile when OpenID Connect is on (default: $OFFERED_SCOPES); a --scope or --default-scope outside them is refused. Without it, scopes other than openid and profile are not checked and a warning says so',
  );
}

/**
 * Refuses a scope the server does not offer, when the operator named what it offers
 * (`--offered-scopes`, else `$OFFERED_SCOPES`); otherwise warns, on stderr, about every scope the
 * CLI cannot check, since the server refuses it at once (`invalid_scope`) and a typo would be
 * found only by the client's developer.
 */
export function checkOfferedScopes(
  given: string | undefined,
  env: NodeJS.ProcessEnv,
  scopes: readonly string[],
  warn: (message: string) => void,
): void {
  const source = given === undefined ? 'OFFERED_SCOPES' : '--offered-scopes';
  const list = given ?? (env.OFFERED_SCOPES || undefined);
  if (list === undefined) {
    const unchecked = [...new Set(scopes)].filter((scope) => !STANDARD_SCOPES.includes(scope));
    if (unchecked.length > 0) {
      warn(
        `not checked: ${unchecked.join(' ')}. The CLI cannot know which scopes your server offers (its scopes option is in your code), and a request for a scope it does not offer is refused (invalid_scope). Set OFFERED_SCOPES (or pass --offered-scopes) to the scopes it offers, e.g. OFFERED_SCOPES="openid profile ${unchecked[0]}", to have them checked here.`,
      );
    }
    return;
  }
  const offered = list.split(/[\s,]+/).filter(Boolean);
  const malformed = offered.find((scope) => !SCOPE_TOKEN.test(scope));
  if (offered.length === 0 || malformed !== undefined) {
    throw new CliError(
      `${source} must list the scopes your server offers, separated by spaces, not ${JSON.stringify(list)}`,
    );
  }
  const unoffered = [...new Set(scopes)].filter((scope) => !offered.includes(scope));
  if (unoffered.length > 0) {
    throw new CliError(
      `${unoffered.map((scope) => JSON.stringify(scope)).join(', ')} ${unoffered.length === 1 ? 'is not a scope' : 'are not scopes'} your server offers (${source}: ${offered.join(' ')}): correct it, or add it to the server's scopes option first (and to ${source}); nothing was changed`,
    );
  }
}
