/**
 * The named types of the public API's signatures, read with the TypeScript compiler from the
 * sources: what each exported function, constructor and public class member takes or returns.
 * Shared by test/package/named-types.test.ts.
 */
import { join } from 'node:path';
import ts from 'typescript';

export const ROOT = join(import.meta.dirname, '..', '..');

/** The package's entries (package.json "exports") and the source file of each. */
export const ENTRIES = {
  'openid-oauth-bridge': 'src/index.ts',
  'openid-oauth-bridge/pages': 'src/pages/index.ts',
  'openid-oauth-bridge/openid': 'src/openid/index.ts',
  'openid-oauth-bridge/testing': 'src/testing/index.ts',
  'openid-oauth-bridge/redis': 'src/storage/redis/index.ts',
  'openid-oauth-bridge/storage': 'src/storage/index.ts',
} as const;

export type Entry = keyof typeof ENTRIES;

/** A type of the library's own that a signature names. */
export interface SignatureType {
  name: string;
  /** The entries that export it (empty: none does). */
  exportedFrom: Entry[];
  /** Where signatures name it, e.g. `openid-oauth-bridge: requireBearer(options)`. */
  usedBy: string[];
}

const NAMED =
  ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Class | ts.SymbolFlags.Enum;
const HIDDEN = ts.ModifierFlags.Private | ts.ModifierFlags.Protected;

/**
 * Walks each exported function's and class's signatures: parameter and return types, through
 * unions, intersections, type arguments (`Promise<X>`, `Partial<X>`), and the members of
 * anonymous types (an inline callback's parameters, an object literal's properties), down to the
 * first named type. A named type of the library's own is where the walk stops: an app names it
 * as a whole (`const options: RequireBearerOptions = …`); its own fields are reached through it.
 */
export function signatureTypes(): SignatureType[] {
  const src = join(ROOT, 'src');
  const program = ts.createProgram(
    Object.values(ENTRIES).map((file) => join(ROOT, file)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
    },
  );
  const checker = program.getTypeChecker();
  const target = (symbol: ts.Symbol) =>
    symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const own = (symbol: ts.Symbol) =>
    symbol.declarations?.some((d) => d.getSourceFile().fileName.startsWith(src)) ?? false;

  const exportsOf = new Map<Entry, ts.Symbol[]>();
  const exportedFrom = new Map<ts.Symbol, Entry[]>();
  for (const [entry, file] of Object.entries(ENTRIES) as [Entry, string][]) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(join(ROOT, file))!)!;
    const symbols = checker.getExportsOfModule(module);
    exportsOf.set(entry, symbols);
    for (const symbol of symbols) {
      const t = target(symbol);
      exportedFrom.set(t, [...(exportedFrom.get(t) ?? []), entry]);
    }
  }

  const found = new Map<ts.Symbol, SignatureType>();
  const typeArguments = (type: ts.Type): readonly ts.Type[] => [
    ...(type.aliasTypeArguments ?? []),
    ...(type.flags & ts.TypeFlags.Object && (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference
      ? checker.getTypeArguments(type as ts.TypeReference)
      : []),
  ];

  const walk = (type: ts.Type, where: string, seen: Set<ts.Type>): void => {
    if (seen.has(type)) return;
    seen.add(type);
    const candidate = type.aliasSymbol ?? (type.flags & ts.TypeFlags.Object ? type.getSymbol() : undefined);
    const named = candidate && candidate.flags & NAMED ? candidate : undefined;
    if (named && own(named)) {
      const entry = found.get(named) ?? {
        name: named.name,
        exportedFrom: exportedFrom.get(named) ?? [],
        usedBy: [],
      };
      if (!entry.usedBy.includes(where)) entry.usedBy.push(where);
      found.set(named, entry);
    }
    for (const argument of typeArguments(type)) walk(argument, where, seen);
    if (named) return;
    if (type.isUnionOrIntersection()) {
      for (const member of type.types) walk(member, where, seen);
    } else if (type.flags & ts.TypeFlags.Object) {
      for (const signature of type.getCallSignatures()) walkSignature(signature, where, seen);
      for (const property of type.getProperties()) {
        walk(checker.getTypeOfSymbol(property), `${where}.${property.name}`, seen);
      }
    }
  };
  const walkSignature = (signature: ts.Signature, where: string, seen: Set<ts.Type>) => {
    for (const parameter of signature.getParameters()) {
      walk(checker.getTypeOfSymbol(parameter), `${where}(${parameter.name})`, seen);
    }
    walk(signature.getReturnType(), `${where}()`, seen);
  };

  for (const [entry, symbols] of exportsOf) {
    for (const symbol of symbols) {
      const t = target(symbol);
      const at = `${entry}: ${symbol.name}`;
      if (t.flags & ts.SymbolFlags.Function) {
        for (const s of checker.getTypeOfSymbol(t).getCallSignatures()) walkSignature(s, at, new Set());
      }
      if (!(t.flags & ts.SymbolFlags.Class)) continue;
      for (const s of checker.getTypeOfSymbol(t).getConstructSignatures()) {
        walkSignature(s, `${entry}: new ${symbol.name}`, new Set());
      }
      for (const member of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(t))) {
        const declaration = member.valueDeclaration;
        if (!declaration || !own(member) || ts.getCombinedModifierFlags(declaration) & HIDDEN) continue;
        if (member.name.startsWith('#') || member.name.startsWith('__')) continue;
        walk(checker.getTypeOfSymbol(member), `${at}#${member.name}`, new Set());
      }
    }
  }
  return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
}
