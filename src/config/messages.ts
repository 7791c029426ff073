import type { z } from 'zod';
import { MAX_PROVIDER_NAME_LENGTH } from '../rules/names.js';

/**
 * Turns the zod issues of the options into lines a newcomer can act on: the option's path, the
 * value given (never a secret's value) and what to do. An unknown option gets the closest known
 * one as a suggestion ("did you mean"), or the list of options at that level.
 */

type Issue = z.core.$ZodIssue;

/** What to do, by option path (indices removed), when the zod message alone does not say it. */
const HINTS: Record<string, string> = {
  baseUrl:
    'set it to the absolute URL where the routers are mounted, without query or fragment, e.g. https://auth.example.com',
  storage:
    'pass memoryStorage() (tests), await connectStorage(process.env.DATABASE_URL) (SQLite, PostgreSQL) or an adapter implementing the storage contract',
  providers:
    "list the OpenID 2.0 providers users may log in at, e.g. [{ name: 'Example ID', identifier: 'https://id.example.com/' }]",
  'providers.name': `give each provider a name of 1 to ${MAX_PROVIDER_NAME_LENGTH} characters, shown on the selection page`,
  'providers.identifier': "set it to the provider's OpenID 2.0 discovery URL, e.g. https://id.example.com/",
  session: 'pass { secret: process.env.SESSION_SECRET } (at least 32 random characters)',
  dynamicRegistration:
    'pass true, false (the default), or { initialAccessTokens, scopes, unusedTtl, rateLimit } (docs/dynamic-registration.md)',
  'session.secret':
    'set it to at least 32 random characters kept out of the code, e.g. process.env.SESSION_SECRET; make one with: node -e "console.log(crypto.randomBytes(32).toString(\'base64url\'))" (or pass your own express-session as session.middleware)',
};

/** Options whose value must never appear in a message. */
const SECRET_PATHS = new Set([
  'session.secret',
  'oidc.keySecret',
  'oidc.keys',
  'dynamicRegistration.initialAccessTokens',
]);

/** Objects whose unknown options may be misspelled secrets: their values are never shown. */
const SECRET_OBJECTS = new Set(['session', 'oidc', 'dynamicRegistration']);

/** The lines for one issue (usually one; one per key for unknown keys). */
export function describeIssue(issue: Issue, input: unknown, schema: z.ZodType): string[] {
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeys(schema, path);
    return issue.keys.map((key) => {
      const at = [...path, key].join('.');
      const suggestion = closest(key, known);
      const value = show(valueAt(input, [...path, key]), SECRET_OBJECTS.has(path.join('.')));
      return suggestion === undefined
        ? `${at}: unknown option (got ${value}); the options${path.length ? ` of ${path.join('.')}` : ''} are ${known.join(', ')}`
        : `${at}: unknown option (got ${value}); did you mean ${[...path, suggestion].join('.')}?`;
    });
  }
  const name = path.join('.') || '(options)';
  const generic = path.filter((p) => !/^\d+$/.test(p)).join('.');
  const value = valueAt(input, path);
  const missing = value === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_union');
  const message = missing ? 'is required' : issue.message;
  // A storage object that lacks methods: the message lists them, which is what to do.
  if (generic === 'storage' && !missing) return [`${name}: ${message}`];
  const hint = HINTS[generic];
  return [`${name}: ${message} (got ${show(value, SECRET_PATHS.has(generic))})${hint ? `; ${hint}` : ''}`];
}

function valueAt(input: unknown, path: readonly string[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** A short, safe rendering of a value given. */
function show(value: unknown, secret: boolean): string {
  if (value === undefined) return 'nothing';
  if (secret) {
    if (typeof value === 'string') return `a string of ${value.length} characters`;
    if (Array.isArray(value)) return `an array of ${value.length}`;
    if (typeof value === 'object' && value !== null) return 'an object';
  }
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  const name = (value as object).constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'an object';
}

type Def = { type: string; shape?: Record<string, unknown>; element?: unknown } & Record<string, unknown>;
const defOf = (schema: unknown) => (schema as { _zod?: { def?: Def } })._zod?.def;

/** The keys the schema allows at `path` (an object nested in wrappers, arrays and unions). */
function knownKeys(schema: z.ZodType, path: readonly string[]): string[] {
  let current: unknown[] = [schema];
  for (const key of path) {
    current = unwrap(current).flatMap((s) => {
      const def = defOf(s)!;
      if (def.type === 'array') return /^\d+$/.test(key) ? [def.element] : [];
      return def.shape && key in def.shape ? [def.shape[key]] : [];
    });
  }
  return [...new Set(unwrap(current).flatMap((s) => Object.keys(defOf(s)!.shape ?? {})))];
}

/** The object and array schemas of `schemas`, unwrapped from defaults, optionals, pipes and unions. */
function unwrap(schemas: unknown[]): unknown[] {
  return schemas.flatMap((schema): unknown[] => {
    const def = defOf(schema);
    if (!def) return [];
    if (def.type === 'object' || def.type === 'array') return [schema];
    if (def.type === 'union') return unwrap(def.options as unknown[]);
    if (def.type === 'pipe') return unwrap([def.in]);
    return 'innerType' in def ? unwrap([def.innerType]) : [];
  });
}

/** The known key closest to `key` by edit distance, if close enough to be a misspelling. */
export function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        previous[j]! + 1,
        row[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = row;
  }
  return previous[b.length]!;
}
