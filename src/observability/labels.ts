import type { Figure } from './figures.js';

/*
 * The label sets of one figure, made once each and handed out again: a request that is counted
 * allocates nothing, and a sink can keep its series by the label set's identity. Values are looked
 * up level by level (a map per label), never joined into a key.
 */

type Level = Map<string, Level | Readonly<Record<string, string>>>;

/**
 * The label sets of `figure`: `of(a, b, c)` is the one whose labels, in the figure's order, have
 * those values; an `undefined` value leaves its label out.
 */
export class LabelSets {
  readonly #names: readonly string[];
  readonly #root: Level = new Map();

  constructor(figure: Figure) {
    this.#names = figure.labels;
  }

  of(a?: string, b?: string, c?: string): Readonly<Record<string, string>> {
    const values = this.#names.length;
    let level = this.#root;
    let found: Level | Readonly<Record<string, string>> | undefined;
    for (let i = 0; i < values; i++) {
      const value = (i === 0 ? a : i === 1 ? b : c) ?? '\u0000';
      found = level.get(value);
      if (found === undefined) {
        found = i === values - 1 ? this.#make(a, b, c) : new Map();
        level.set(value, found);
      }
      if (i < values - 1) level = found as Level;
    }
    return (found ?? {}) as Readonly<Record<string, string>>;
  }

  #make(a?: string, b?: string, c?: string): Readonly<Record<string, string>> {
    const labels: Record<string, string> = {};
    [a, b, c].slice(0, this.#names.length).forEach((value, i) => {
      if (value !== undefined) labels[this.#names[i]!] = value;
    });
    return Object.freeze(labels);
  }
}
