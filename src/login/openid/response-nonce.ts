/** `YYYY-MM-DDTHH:MM:SSZ` then up to 235 printable ASCII characters, 255 in all (section 10.1). */
const NONCE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z[\x21-\x7e]*$/;

/**
 * The time stamp of an `openid.response_nonce`, in epoch milliseconds, or `null` if the nonce is
 * malformed (bad format, over 255 characters, or an impossible date such as February 30).
 *
 * @example
 * parseResponseNonce('2005-05-15T17:11:51ZUNIQUE'); // 1116177111000
 * @see OpenID 2.0 section 10.1
 */
export function parseResponseNonce(nonce: string): number | null {
  if (nonce.length > 255) return null;
  const m = NONCE.exec(nonce);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const time = Date.UTC(year, month - 1, day, hour, minute, second);
  const back = new Date(time);
  // Date.UTC rolls over out-of-range parts; a round trip catches them.
  const exact =
    back.getUTCFullYear() === year &&
    back.getUTCMonth() === month - 1 &&
    back.getUTCDate() === day &&
    back.getUTCHours() === hour &&
    back.getUTCMinutes() === minute &&
    back.getUTCSeconds() === second;
  return exact ? time : null;
}
