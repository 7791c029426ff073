/**
 * The configured provider with exactly this identifier or name: the allow-list every route checks
 * before anything is contacted.
 */
export function findProvider<P extends { readonly identifier: string; readonly name: string }>(
  server: { readonly options: { readonly providers: readonly P[] } },
  identifierOrName: string,
): P | undefined {
  return server.options.providers.find(
    (p) => p.identifier === identifierOrName || p.name === identifierOrName,
  );
}
