/**
 * Driving the developer page (`developerRouter`) as a member's browser does: sign in at the
 * development provider, fill in the forms the pages draw, read what they show.
 */
import supertest from 'supertest';
import { expect } from 'vitest';
import { developerRouter } from '../../src/index.js';
import type { TestApp } from './app.js';
import { parseForms, pathOf, signInAtProvider, type HtmlForm } from './flow.js';

export type Browser = ReturnType<typeof supertest.agent>;

/** Mounts the developer page on a test app (after its other routers: each passes on what is not its own). */
export function mountDeveloperPage(t: TestApp): void {
  t.app.use(developerRouter(t.server));
}

/** A new browser of its own (its own cookies), for a second member. */
export function newBrowser(t: TestApp): Browser {
  return supertest.agent(t.baseUrl);
}

/** Signs `user` in on the developer page through the provider selection, as a person does. */
export async function signInAsMember(t: TestApp, user = 'alice', browser: Browser = t.agent): Promise<void> {
  const page = await browser.get('/developers');
  expect(page.status).toBe(200);
  expect(page.text).toContain('Sign in to continue to the developer page');
  const href = /<a href="([^"]+)">/.exec(page.text)![1]!.replaceAll('&amp;', '&');
  const toProvider = await browser.get(pathOf(href));
  expect(toProvider.status).toBe(302);
  const callback = await browser.get(pathOf(await signInAtProvider(toProvider.headers.location!, user)));
  expect(callback.status).toBe(303);
  expect(callback.headers.location).toBe(`${t.baseUrl}/developers`);
}

/** The form of `html` whose action ends with `suffix`. */
export function formEndingWith(html: string, suffix: string): HtmlForm {
  const form = parseForms(html).find((candidate) => candidate.action.endsWith(suffix));
  expect(form, `a form posting to …${suffix}`).toBeDefined();
  return form!;
}

/** What a member fills in on the create form; `scopes` and `teams` become ticked boxes. */
export interface AppFields {
  name?: string;
  kind?: 'web' | 'native' | 'device';
  client_type?: 'confidential' | 'public';
  redirect_uri?: string;
  scopes?: string[];
  teams?: string[];
  description?: string;
  homepage?: string;
  post_logout_redirect_uris?: string;
  [extra: string]: string | string[] | undefined;
}

/** The form body of `fields`, with the hidden fields of `form` (CSRF, submission id). */
export function formBody(form: HtmlForm, fields: AppFields): Record<string, string> {
  const { scopes = [], teams = [], ...rest } = fields;
  const hidden = Object.fromEntries(
    ['csrf', 'submission', 'client_id']
      .filter((name) => form.fields[name] !== undefined)
      .map((name) => [name, form.fields[name]!]),
  );
  return {
    ...hidden,
    ...(Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >),
    ...Object.fromEntries(scopes.map((scope) => [`scope.${scope}`, 'on'])),
    ...Object.fromEntries(teams.map((team) => [`team.${team}`, 'on'])),
  };
}

/** A confidential web application's fields, as a member fills them in. */
export const WEB_APP: AppFields = {
  name: 'Realm Stats',
  kind: 'web',
  client_type: 'confidential',
  redirect_uri: 'https://stats.example/callback',
  scopes: ['realms'],
};

/** Posts `body` to the page's own origin, as the browser sends a form of the page. */
export function postForm(t: TestApp, browser: Browser, action: string, body: Record<string, string>) {
  return browser.post(pathOf(action)).type('form').set('Origin', new URL(t.baseUrl).origin).send(body);
}

/** Opens the create form and sends it filled in with `fields`: resolves the answer, and the form sent. */
export async function createApp(t: TestApp, fields: AppFields = WEB_APP, browser: Browser = t.agent) {
  const page = await browser.get('/developers/new');
  expect(page.status).toBe(200);
  const form = formEndingWith(page.text, '/developers/new');
  const body = formBody(form, fields);
  const res = await postForm(t, browser, form.action, body);
  return { res, body, form };
}

/** The client id and, on the one page that shows it, the secret of an application's page. */
export function credentialsOf(html: string): { clientId: string; clientSecret?: string } {
  const clientId = /<code id="client-id">([^<]+)<\/code>/.exec(html)?.[1];
  expect(clientId, 'the page shows the client id').toBeDefined();
  const secret = /<code class="secret" id="client-secret">([^<]+)<\/code>/.exec(html)?.[1];
  return { clientId: clientId!, ...(secret === undefined ? {} : { clientSecret: secret }) };
}
