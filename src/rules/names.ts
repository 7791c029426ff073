/**
 * The syntax of names every layer checks: provider names, team names. A leaf module (no imports),
 * so that any part of the library can use it without a cycle.
 */

/**
 * The longest name of a provider, in characters: the options refuse a longer one; the selection
 * page shows it and the login state carries it.
 */
export const MAX_PROVIDER_NAME_LENGTH = 100;

/**
 * A control or invisible formatting character (a NUL, a right-to-left override): refused in the
 * names and contacts a client gives of itself, which the consent page shows and SQL stores.
 */
export const CONTROL_OR_INVISIBLE = /[\p{Cc}\p{Cf}]/u;

/** A Launchpad team's name (without the `~`): what `query_membership` and `is_member` list. */
export const TEAM_NAME = /^[a-z0-9][a-z0-9+.-]{0,63}$/;
