import type { ClientRecord } from '../../storage/types.js';
import type { MemberAppInput, MemberAppKind } from '../../clients/members.js';
import { kindOf } from '../../clients/members.js';
import { isPublicClient } from '../../rules/client-kind.js';
import type { DeveloperAppValues } from '../../pages/developer-types.js';

/*
 * The developer page's application form: its fields as the page names them, read into what the
 * member asked for, and the values that fill the form again.
 */

/** The form's fields a draft keeps across a sign-in: everything but the CSRF and submission ids. */
export function draftFields(params: ReadonlyMap<string, string>): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of params) {
    if (name !== 'csrf' && name !== 'submission' && name !== 'client_id') fields[name] = value;
  }
  return fields;
}

/**
 * What the member filled in. The kind and confidentiality come from the form when creating, and
 * from the stored application when changing it (`fixed`): a new kind is a new application.
 */
export function inputOf(params: ReadonlyMap<string, string>, fixed?: ClientRecord): MemberAppInput {
  const kind = fixed ? kindOf(fixed) : kindParam(params.get('kind'));
  const confidential = fixed ? !isPublicClient(fixed) : params.get('client_type') === 'confidential';
  const redirectUri = params.get('redirect_uri')?.trim();
  return {
    applicationName: params.get('name') ?? '',
    kind,
    confidential,
    ...(kind === 'device' || !redirectUri ? {} : { redirectUri }),
    scopes: checked(params, 'scope.'),
    allowedTeams: checked(params, 'team.'),
    postLogoutRedirectUris: (params.get('post_logout_redirect_uris') ?? '').split(/\s+/).filter(Boolean),
    ...(params.get('description') ? { description: params.get('description')! } : {}),
    ...(params.get('homepage') ? { homepageUri: params.get('homepage')! } : {}),
  };
}

/** The form filled in again with what the member sent. */
export function valuesOf(params: ReadonlyMap<string, string>, fixed?: ClientRecord): DeveloperAppValues {
  const input = inputOf(params, fixed);
  return {
    applicationName: input.applicationName,
    kind: input.kind,
    confidential: input.confidential,
    redirectUri: params.get('redirect_uri') ?? '',
    scopes: input.scopes,
    postLogoutRedirectUris: input.postLogoutRedirectUris.join('\n'),
    description: input.description ?? '',
    homepageUri: input.homepageUri ?? '',
    teams: input.allowedTeams,
  };
}

/** The form filled in with a stored application. */
export function storedValues(client: ClientRecord): DeveloperAppValues {
  return {
    applicationName: client.applicationName,
    kind: kindOf(client),
    confidential: !isPublicClient(client),
    redirectUri: client.redirectUri,
    scopes: client.scopes,
    postLogoutRedirectUris: (client.postLogoutRedirectUris ?? []).join('\n'),
    description: client.description ?? '',
    homepageUri: client.homepageUri ?? '',
    teams: client.allowedTeams ?? [],
  };
}

/** The empty create form: a confidential web application. */
export const EMPTY_VALUES: DeveloperAppValues = {
  applicationName: '',
  kind: 'web',
  confidential: true,
  redirectUri: '',
  scopes: [],
  postLogoutRedirectUris: '',
  description: '',
  homepageUri: '',
  teams: [],
};

function kindParam(value: string | undefined): MemberAppKind {
  return value === 'native' || value === 'device' ? value : 'web';
}

/** The names of the checked boxes `prefix<name>` (`scope.realms`, `team.builders`). */
function checked(params: ReadonlyMap<string, string>, prefix: string): string[] {
  return [...params]
    .filter(([name, value]) => name.startsWith(prefix) && value === 'on')
    .map(([name]) => name.slice(prefix.length));
}
