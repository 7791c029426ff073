/* What several pages share: a scope as they describe it, a sign-out form. */

/** One scope on the consent page: its name and the description the server was configured with. */
export interface ScopeDescription {
  name: string;
  description: string;
}

/** A sign-out form: POST to `action` with these hidden fields. */
export interface SignOutForm {
  action: string;
  fields: Record<string, string>;
}
