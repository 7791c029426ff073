import { Parser } from 'htmlparser2';

/** What an HTML page says about OpenID 2.0 (section 7.3.3) and Yadis (Yadis 1.0 section 6.2.5). */
export interface HtmlDiscovery {
  /** `href` of `<link rel="openid2.provider">`, as written. */
  provider: string | null;
  /** `href` of `<link rel="openid2.local_id">`, as written. */
  localId: string | null;
  /** `content` of `<meta http-equiv="X-XRDS-Location">`, as written. */
  xrdsLocation: string | null;
}

/**
 * Reads the OpenID `<link>` and Yadis `<meta>` elements of an HTML document's head. Elements after
 * `</head>` or `<body>` are ignored: the spec requires them in the head, and a page body may hold
 * text its owner does not control (a profile's "about me", say).
 *
 * @see OpenID 2.0 section 7.3.3, Yadis 1.0 section 6.2.5
 */
export function parseHtmlDiscovery(html: string): HtmlDiscovery {
  const found: HtmlDiscovery = { provider: null, localId: null, xrdsLocation: null };
  let done = false;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (done) return;
        if (name === 'body') {
          done = true;
        } else if (name === 'link' && typeof attribs.href === 'string') {
          const rels = (attribs.rel ?? '').toLowerCase().split(/\s+/);
          if (rels.includes('openid2.provider')) found.provider ??= attribs.href.trim();
          if (rels.includes('openid2.local_id')) found.localId ??= attribs.href.trim();
        } else if (name === 'meta' && (attribs['http-equiv'] ?? '').toLowerCase() === 'x-xrds-location') {
          found.xrdsLocation ??= (attribs.content ?? '').trim() || null;
        }
      },
      onclosetag(name) {
        if (name === 'head') done = true;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  return found;
}
