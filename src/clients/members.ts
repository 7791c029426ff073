import { CONTROL_OR_INVISIBLE, READABLE } from '../rules/names.js';
import { isPublicClient } from '../rules/client-kind.js';
import type { ClientRecord, Storage } from '../storage/types.js';
import type { ServerEvents } from '../events/emitter.js';
import { checkClientFields } from './checks.js';
import { clientsOwnedBy } from './operator.js';
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
export function appsOf(server: MemberAppDeps, ownerId: string): Promise<ClientRecord[]> {
  return clientsOwnedBy(server.storage, ownerId);
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
  if (name.length > MAX_NAME || !READABLE.test(name) || CONTROL_OR_INVISIBLE.test(name)) {
    throw new MemberAppRefused(
      `The name must have 1 to ${MAX_NAME} characters, with a letter or a digit, and no control or invisible characters.`,
    );
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
  const typed = input.homepageUri?.trim() || undefined;
  if (typed !== undefined && !isHomepage(typed)) {
    throw new MemberAppRefused(
      'The home page must be an https URL (at most 500 characters), with no user name or password.',
    );
  }
  // Shown as the URL parser writes it: a host in punycode ("p\u0430ypal.com" is xn--pypal-4ve.com).
  const homepageUri = typed === undefined ? undefined : new URL(typed).href;
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
