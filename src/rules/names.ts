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
 * A control or invisible character: a NUL, a right-to-left override, a line or paragraph
 * separator, a private-use or lone surrogate code point, a character meant to be ignored (a
 * Hangul filler, a combining grapheme joiner, a variation selector, except the one that gives an
 * emoji its colour), or a pile of four combining marks and more. Refused in the names and
 * contacts a client gives of itself, which the consent page shows and SQL stores: each could hide
 * one name inside another ("Pay\u3164pal").
 */
export const CONTROL_OR_INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}]|(?!\uFE0F)\p{Default_Ignorable_Code_Point}|(?<!\p{Extended_Pictographic})\uFE0F|\p{M}{4,}/u;

/** What a name a person reads must have: a letter or a digit (not only blanks and symbols). */
export const READABLE = /[\p{L}\p{N}]/u;

/** A Launchpad team's name (without the `~`): what `query_membership` and `is_member` list. */
export const TEAM_NAME = /^[a-z0-9][a-z0-9+.-]{0,63}$/;
