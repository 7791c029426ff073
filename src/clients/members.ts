import { generateSecret, hashSecret } from '../crypto/secrets.js';
import { emit, type EventContext } from '../events/emit.js';
import { CONTROL_OR_INVISIBLE } from '../rules/names.js';
import { isPublicClient } from '../rules/client-kind.js';
import { ephemeralKeys } from '../storage/keys.js';
import type { ClientChanges, ClientRecord } from '../storage/types.js';
import type { ServerEvents } from '../events/emitter.js';
import type { Storage } from '../storage/types.js';
import { checkClientFields } from './checks.js';
import { operatorMethod, registerWith, type IssuedClient } from './register.js';
import type { ClientRegistration } from './registration.js';

/*
 * The rules of members' applications (the developer page): what a member may register, how many,
 * how its secret is rotated and how it ends. The page (src/endpoints/developers) reads forms and
 * draws pages; every decision is here, once.
 */

/** The operator's limits on members' applications: `developerApps`, resolved. */
export interface DeveloperAppLimits {
  readonly maxAppsPerMember: number;
  readonly requireApproval: boolean;
  readonly unverifiedReach: number | false;
  readonly scopes?: readonly string[];
  readonly recentLoginMinutes: number;
  readonly maxSecretOverlapMinutes: number;
  readonly maxCreatedPerHour: number;
}

/** What the rules of members' applications need of the server. */
export interface MemberAppDeps {
  readonly storage: Storage;
  readonly clock: () => number;
  readonly events: ServerEvents;
  readonly options: {
    readonly scopes: Readonly<Record<string, string>>;
    readonly developerApps: DeveloperAppLimits;
  };
}

/** What a member's application is, as the page offers it. */
export type MemberAppKind = 'web' | 'native' | 'device';

/** The member acting on the page: their account id, and the teams they belong to now. */
export interface Member {
  id: string;
  teams: readonly string[];
}

/** What a member fills in to create or change an application. */
export interface MemberAppInput {
  applicationName: string;
  kind: MemberAppKind;
  /** A confidential application (it gets a secret); native apps never are. */
  confidential: boolean;
  /** Absent for a device application. */
  redirectUri?: string;
  scopes: string[];
  postLogoutRedirectUris: string[];
  description?: string;
  homepageUri?: string;
  /** The teams whose members alone may use it (each one of the member's); none: anyone. */
  allowedTeams: string[];
}

/** A member's request refused, with a message for the member (the page shows it). */
export class MemberAppRefused extends Error {
  constructor(
    message: string,
    /** The HTTP status of the page that says so: 400 for a field, 403 for a limit, 429 for a rate. */
    readonly status = 400,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'MemberAppRefused';
  }
}

/** The longest name, description and home page URL a member may give. */
const MAX_NAME = 100;
const MAX_DESCRIPTION = 300;
const MAX_URI = 500;

/** The kind of a stored application, as the page shows it. */
export function kindOf(
  client: Pick<ClientRecord, 'grantType' | 'secretHash' | 'redirectUri'>,
): MemberAppKind {
  if (client.grantType === 'device_code') return 'device';
  return isPublicClient(client) && !client.redirectUri.startsWith('https://') ? 'native' : 'web';
}

/** The scopes a member's application may have: `developerApps.scopes`, or every offered one. */
export function scopeAllowance(server: MemberAppDeps): string[] {
  return [...(server.options.developerApps.scopes ?? Object.keys(server.options.scopes))];
}

/** The applications of `ownerId`, oldest first. */
export async function appsOf(server: MemberAppDeps, ownerId: string): Promise<ClientRecord[]> {
  const listed = await operatorMethod(server.storage, 'list')({ ownerId });
  // An adapter may list more than asked (the filter is a hint it may ignore): only the owner's count.
  return listed.filter((client) => client.ownerId === ownerId);
}

/**
 * The application `clientId` if `member` owns it, else `null`: someone else's application and an
 * unknown id look the same, so guessing ids tells nothing.
 */
export async function ownedApp(
  server: MemberAppDeps,
  member: Pick<Member, 'id'>,
  clientId: string,
): Promise<ClientRecord | null> {
  const client = await server.storage.clients.find(clientId);
  return client !== null && client.ownerId === member.id ? client : null;
}

/**
 * A member's input, checked: the member's own rules (names without control characters, an https
 * home page, scopes within the allowance, teams the member belongs to, no secret for a native app),
 * then the registration's checks, no weaker than the operator's. Resolves what to register.
 *
 * @throws MemberAppRefused naming what is wrong.
 */
export function checkMemberInput(
  server: MemberAppDeps,
  member: Member,
  input: MemberAppInput,
): ClientRegistration & Pick<ClientRecord, 'description' | 'homepageUri'> {
  const name = input.applicationName.trim();
  if (name === '' || name.length > MAX_NAME || CONTROL_OR_INVISIBLE.test(name)) {
    throw new MemberAppRefused(`The name must have 1 to ${MAX_NAME} characters, with no control characters.`);
  }
  const description = input.description?.trim() || undefined;
  if (
    description !== undefined &&
    (description.length > MAX_DESCRIPTION || CONTROL_OR_INVISIBLE.test(description))
  ) {
    throw new MemberAppRefused(
      `The description must have at most ${MAX_DESCRIPTION} characters, on one line, with no control characters.`,
    );
  }
  const homepageUri = input.homepageUri?.trim() || undefined;
  if (homepageUri !== undefined && !isHomepage(homepageUri)) {
    throw new MemberAppRefused(
      'The home page must be an https URL (at most 500 characters), with no user name or password.',
    );
  }
  if (input.kind === 'native' && input.confidential) {
    throw new MemberAppRefused('A native app cannot keep a secret: make it public (it will use PKCE).');
  }
  if (input.scopes.length === 0) throw new MemberAppRefused('Choose at least one scope.');
  const allowance = scopeAllowance(server);
  const outside = input.scopes.find((scope) => !allowance.includes(scope));
  if (outside !== undefined)
    throw new MemberAppRefused(`The scope ${outside} is not offered to members' applications.`);
  const foreign = input.allowedTeams.find((team) => !member.teams.includes(team));
  if (foreign !== undefined) {
    throw new MemberAppRefused(
      `You are not a member of ~${foreign}: an application can be limited to your own teams only.`,
    );
  }
  const registration: ClientRegistration = {
    applicationName: name,
    grantType: input.kind === 'device' ? 'device_code' : 'authorization_code',
    public: !input.confidential,
    ...(input.kind === 'device' ? {} : { redirectUri: input.redirectUri ?? '' }),
    scopes: [...new Set(input.scopes)],
    postLogoutRedirectUris: input.postLogoutRedirectUris,
    allowedTeams: input.allowedTeams,
  };
  if (input.kind === 'native' && registration.redirectUri?.startsWith('https://')) {
    // Claimed https redirects are a web app's; a native app has a loopback or its own scheme.
    throw new MemberAppRefused(
      'A native app redirects to a loopback address (http://127.0.0.1/…) or its own scheme (com.example.app:/callback).',
    );
  }
  if (input.kind === 'web' && !registration.redirectUri?.startsWith('https://')) {
    throw new MemberAppRefused('A web application redirects to an https URL.');
  }
  try {
    checkClientFields(
      { ...registration, grantType: registration.grantType, public: registration.public === true },
      { offeredScopes: Object.keys(server.options.scopes) },
      true,
    );
  } catch (err) {
    throw refusalOf(err);
  }
  return {
    ...registration,
    ...(description === undefined ? {} : { description }),
    ...(homepageUri === undefined ? {} : { homepageUri }),
  };
}

/** An https URL with a host and no credentials, short enough to show. */
function isHomepage(value: string): boolean {
  if (value.length > MAX_URI || CONTROL_OR_INVISIBLE.test(value)) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

/** The registration checks' field names, as the form labels them. */
const FIELD_LABELS: Record<string, string> = {
  applicationName: 'The name',
  redirectUri: 'The redirect URI',
  postLogoutRedirectUris: 'A post-logout redirect URI',
  scopes: 'The scopes',
  allowedTeams: 'The teams',
};

/** A registration check's refusal, for the member: its message in the form's words. */
function refusalOf(err: unknown): MemberAppRefused {
  if (!(err instanceof TypeError && err.message.startsWith('openid-oauth-bridge: '))) throw err;
  const message = err.message.slice('openid-oauth-bridge: '.length);
  const field = /^\w+/.exec(message)?.[0] ?? '';
  const worded =
    FIELD_LABELS[field] === undefined ? message : FIELD_LABELS[field] + message.slice(field.length);
  return new MemberAppRefused(
    worded.charAt(0).toUpperCase() + worded.slice(1) + (worded.endsWith('.') ? '' : '.'),
  );
}

/**
 * Why `member` may not create an application now, or `undefined`: one of their applications is
 * suspended (the operator disabled it), or they have as many as `developerApps.maxAppsPerMember`.
 */
export function creationRefusal(server: MemberAppDeps, mine: readonly ClientRecord[]): string | undefined {
  if (mine.some((client) => client.disabled)) {
    return 'The operator has suspended your applications: you cannot create another one.';
  }
  const max = server.options.developerApps.maxAppsPerMember;
  if (mine.length >= max)
    return `You have ${max} applications, as many as a member may: delete one to create another.`;
  return undefined;
}

/**
 * Creates `member`'s application, after the limits: not suspended, under the number of
 * applications a member may have, under the number created per hour. The one way a member's
 * application is written ({@link registerWith}); a confidential one's secret is resolved once.
 * Reports `app.created`.
 *
 * @throws MemberAppRefused for a limit.
 */
export async function createMemberApp(
  server: MemberAppDeps,
  member: Member,
  checked: ReturnType<typeof checkMemberInput>,
  context: EventContext,
): Promise<IssuedClient> {
  const refusal = creationRefusal(server, await appsOf(server, member.id));
  if (refusal !== undefined) throw new MemberAppRefused(refusal, 403);
  const settings = server.options.developerApps;
  const now = server.clock();
  const counter = await server.storage.ephemeral.increment(
    ephemeralKeys.rateLimit(`developer-create:${member.id}`),
    now + 3_600_000,
    now,
  );
  if (counter.count > settings.maxCreatedPerHour) {
    const retryAfter = Math.max(1, Math.ceil((counter.expiresAt - now) / 1000));
    throw new MemberAppRefused(
      `You have created ${settings.maxCreatedPerHour} applications in the last hour: try again later.`,
      429,
      retryAfter,
    );
  }
  const { description, homepageUri, ...registration } = checked;
  const issued = await registerWith(
    server,
    registration,
    {},
    {
      createdAt: now,
      ownerId: member.id,
      ...(settings.requireApproval ? { awaitingApproval: true } : {}),
      ...(description === undefined ? {} : { description }),
      ...(homepageUri === undefined ? {} : { homepageUri }),
    },
  );
  emit(server, {
    type: 'app.created',
    clientId: issued.clientId,
    ownerId: member.id,
    confidential: issued.clientSecret !== undefined,
    awaitingApproval: settings.requireApproval,
    ...context,
  });
  return issued;
}

/**
 * Changes `client` (a member's) to `checked`: its kind stays (a new kind is a new application).
 * Reports `app.updated` with the names of the fields that changed.
 */
export async function updateMemberApp(
  server: MemberAppDeps,
  client: ClientRecord,
  checked: ReturnType<typeof checkMemberInput>,
  context: EventContext,
): Promise<ClientRecord> {
  const changes: ClientChanges = {
    applicationName: checked.applicationName,
    ...(client.grantType === 'device_code' ? {} : { redirectUri: checked.redirectUri ?? client.redirectUri }),
    scopes: checked.scopes ?? client.scopes,
    defaultScopes: client.defaultScopes?.filter((scope) => checked.scopes?.includes(scope)) ?? null,
    postLogoutRedirectUris: checked.postLogoutRedirectUris ?? [],
    allowedTeams: checked.allowedTeams ?? [],
    description: checked.description ?? null,
    homepageUri: checked.homepageUri ?? null,
  };
  // Narrowed scopes narrow the default ones; none left means all of them.
  if (changes.defaultScopes?.length === 0) changes.defaultScopes = null;
  const changed = Object.entries(changes)
    .filter(([field, value]) => !sameValue((client as unknown as Record<string, unknown>)[field], value))
    .map(([field]) => field);
  const updated = await operatorMethod(server.storage, 'update')(client.clientId, changes);
  if (updated === null) throw new MemberAppRefused('This application no longer exists.', 404);
  if (changed.length) {
    emit(server, {
      type: 'app.updated',
      clientId: client.clientId,
      ownerId: client.ownerId!,
      changed,
      ...context,
    });
  }
  return updated;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
  return (a ?? null) === (b ?? null);
}

/**
 * Gives `client` a new secret, resolved once. The old one keeps working for `overlapMinutes` (at
 * most `developerApps.maxSecretOverlapMinutes`; 0: it stops at once). Reports
 * `app.secret_rotated`.
 */
export async function rotateMemberSecret(
  server: MemberAppDeps,
  client: ClientRecord,
  overlapMinutes: number,
  context: EventContext,
): Promise<string> {
  if (isPublicClient(client)) throw new MemberAppRefused('A public application has no secret.');
  const max = server.options.developerApps.maxSecretOverlapMinutes;
  if (!Number.isInteger(overlapMinutes) || overlapMinutes < 0 || overlapMinutes > max) {
    throw new MemberAppRefused(`The old secret may keep working for at most ${max} minutes.`);
  }
  const secret = generateSecret();
  const expiresAt = server.clock() + overlapMinutes * 60_000;
  await operatorMethod(server.storage, 'update')(client.clientId, {
    secretHash: hashSecret(secret),
    previousSecret: overlapMinutes > 0 ? { hash: client.secretHash!, expiresAt } : null,
  });
  emit(server, {
    type: 'app.secret_rotated',
    clientId: client.clientId,
    ownerId: client.ownerId!,
    ...(overlapMinutes > 0 ? { previousValidUntil: expiresAt } : {}),
    ...context,
  });
  return secret;
}

/**
 * Deletes a member's application, with its grants: every token and code of it stops working at
 * once, as the operator's `clients remove` does. Reports `app.deleted`.
 */
export async function deleteMemberApp(
  server: MemberAppDeps,
  client: ClientRecord,
  context: EventContext,
): Promise<void> {
  await operatorMethod(server.storage, 'remove')(client.clientId);
  emit(server, { type: 'app.deleted', clientId: client.clientId, ownerId: client.ownerId!, ...context });
}

/** How far an application reaches: the members who trust it now, and the latest consent given. */
export interface Reach {
  members: number;
  lastAuthorizedAt?: number;
}

/** {@link Reach} of `clientId`, from its grants. */
export async function reachOf(server: MemberAppDeps, clientId: string): Promise<Reach> {
  const standing = (await server.storage.grants.list({ clientId })).filter(
    (grant) => grant.revokedAt === null,
  );
  const last = Math.max(0, ...standing.map((grant) => grant.updatedAt));
  return { members: standing.length, ...(last > 0 ? { lastAuthorizedAt: last } : {}) };
}

/**
 * Whether `userId` would exceed the reach cap of `client`: a member's application the operator
 * has not verified may be trusted by at most `developerApps.unverifiedReach` members. Someone who
 * trusts it already is within it. Resolves the cap reached, or `undefined`. Two people consenting
 * at the same moment may both pass at the cap's last place: the cap is a brake on an unreviewed
 * application's spread, not an exact count.
 */
export async function reachCapped(
  server: MemberAppDeps,
  client: Pick<ClientRecord, 'clientId' | 'ownerId' | 'verified'>,
  userId: string,
): Promise<number | undefined> {
  const cap = server.options.developerApps.unverifiedReach;
  if (cap === false || client.ownerId == null || client.verified === true) return undefined;
  const standing = (await server.storage.grants.list({ clientId: client.clientId })).filter(
    (grant) => grant.revokedAt === null,
  );
  if (standing.some((grant) => grant.userId === userId)) return undefined;
  return standing.length >= cap ? cap : undefined;
}

/**
 * Who made a member's application, as the consent page names them: the display name of their
 * latest login, else their identifier (the OpenID claimed identifier), else their account id (a
 * member the host signs in is known by the host's id alone).
 */
export async function makerName(server: MemberAppDeps, ownerId: string): Promise<string> {
  const claims = await server.storage.users.findClaims?.(ownerId);
  if (typeof claims?.name === 'string' && claims.name !== '') return claims.name;
  const user = await server.storage.users.find?.(ownerId);
  return user?.identifier ?? ownerId;
}
