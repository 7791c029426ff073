/** Protocol constants of OpenID Authentication 2.0 (final, 5 December 2007). */

/** `openid.ns` of every OpenID 2.0 message (section 4.1.2). */
export const OPENID2_NS = 'http://specs.openid.net/auth/2.0';

/** Asks the OP to choose the identifier (section 9.1). */
export const IDENTIFIER_SELECT = 'http://specs.openid.net/auth/2.0/identifier_select';

/** XRDS service type of an OP Identifier Element (section 7.3.2.1.1). */
export const SERVER_TYPE = 'http://specs.openid.net/auth/2.0/server';

/** XRDS service type of a Claimed Identifier Element (section 7.3.2.1.2). */
export const SIGNON_TYPE = 'http://specs.openid.net/auth/2.0/signon';

/** Media type of Yadis documents (Yadis 1.0 section 6.2.4). */
export const XRDS_MEDIA_TYPE = 'application/xrds+xml';
