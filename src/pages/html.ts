import escapeHtml from 'escape-html';

/** HTML that has already been escaped or is trusted markup. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/**
 * What {@link html} takes between `${…}`: text and numbers are escaped, {@link SafeHtml} (and a list
 * of it) is inserted as is, `null` and `undefined` show nothing.
 */
export type Interpolation = string | number | SafeHtml | readonly SafeHtml[] | null | undefined;

/**
 * Tagged template that escapes every interpolated value unless it is already `SafeHtml`, so a
 * page cannot forget to escape an application name or a message. Exported for hosts that replace
 * a page (`pages: { consent: (data) => html\`...\`.value }`).
 *
 * @example
 * html`<h1>Do you trust ${data.applicationName}?</h1>`.value
 */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new SafeHtml(out);
}

function render(value: Interpolation): string {
  if (value === null || value === undefined) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map((item: SafeHtml) => item.value).join('');
  return escapeHtml(String(value));
}
