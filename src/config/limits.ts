/**
 * Limits shared by the options and the parts that keep what the options allowed. A leaf module
 * (no imports), so that any part of the library can use it without a cycle.
 */

/**
 * The longest name of a provider, in characters: the options refuse a longer one; the selection
 * page shows it and the login state carries it.
 */
export const MAX_PROVIDER_NAME_LENGTH = 100;
