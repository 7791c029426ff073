/**
 * A browser for scripts outside vitest (the soak) and for tests across instances: a cookie jar,
 * and a load balancer's view of the app (every instance calls itself `baseUrl`; the caller picks
 * which instance answers each request). No assertions here: callers check what they get.
 */
import { parseDocument } from 'htmlparser2';

export class Browser {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly baseUrl: string) {}

  /** Sends `url` (absolute on `baseUrl`, or a path) to the instance at `origin`. */
  async request(origin: string, url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url, this.baseUrl);
    if (target.origin !== new URL(this.baseUrl).origin) throw new Error(`not on the app: ${url}`);
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    }
    const res = await fetch(`${origin}${target.pathname}${target.search}`, {
      ...init,
      headers,
      redirect: 'manual',
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return res;
  }
}

export interface Form {
  action: string;
  fields: Record<string, string>;
}

/** The first form of a page: its action and the values of its inputs; `null` without one. */
export function firstForm(html: string): Form | null {
  type Node = { name?: string; attribs?: Record<string, string>; children?: Node[] };
  let form: Form | null = null;
  const walk = (node: Node, inForm: boolean) => {
    let inside = inForm;
    if (node.name === 'form' && form === null) {
      form = { action: node.attribs?.action ?? '', fields: {} };
      inside = true;
    }
    if (inside && form && node.name === 'input' && node.attribs?.name) {
      form.fields[node.attribs.name] = node.attribs.value ?? '';
    }
    for (const child of node.children ?? []) walk(child, inside);
  };
  walk(parseDocument(html) as unknown as Node, false);
  return form;
}

/** The first link of a page, unescaped. */
export function firstLink(html: string): string | null {
  const href = /<a href="([^"]+)">/.exec(html)?.[1];
  return href === undefined ? null : href.replaceAll('&amp;', '&');
}

/**
 * Signs in at the development provider as `user`: loads its login form, submits it, and returns
 * the callback URL it redirects back to.
 */
export async function signInAtDevelopmentProvider(providerUrl: string, user: string): Promise<string> {
  const page = await fetch(providerUrl);
  const form = firstForm(await page.text());
  if (page.status !== 200 || form === null) throw new Error(`provider login page: ${page.status}`);
  const body = new URLSearchParams({ ...form.fields, dev_user: user, dev_action: 'signin' });
  const answer = await fetch(form.action, { method: 'POST', body, redirect: 'manual' });
  const location = answer.headers.get('location');
  if (answer.status !== 302 || location === null) throw new Error(`provider sign-in: ${answer.status}`);
  return location;
}
