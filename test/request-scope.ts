/**
 * Runs `fn` the way Next runs a route handler or a server action: inside a request scope for `req`,
 * so cookies() and headers() read it. For integration tests that call handlers and actions directly
 * with real sessions (the access matrix, the alerts actions).
 */
export async function inRequestScope<T>(req: Request, fn: () => Promise<T>): Promise<T> {
  const { workAsyncStorage } = await import("next/dist/server/app-render/work-async-storage.external");
  const { workUnitAsyncStorage } = await import("next/dist/server/app-render/work-unit-async-storage.external");
  const { createRequestStoreForAPI } = await import("next/dist/server/async-storage/request-store");
  const url = new URL(req.url);
  const requestStore = createRequestStoreForAPI(
    req as never,
    { pathname: url.pathname, search: url.search } as never,
    { tags: [], expirationsByCacheKind: new Map() } as never,
    undefined,
    { previewModeId: "", previewModeEncryptionKey: "", previewModeSigningKey: "" },
    undefined,
  );
  const workStore = {
    route: url.pathname,
    page: url.pathname,
    incrementalCache: {},
    cacheLifeProfiles: {},
    pendingRevalidatedTags: [],
  };
  return workAsyncStorage.run(workStore as never, () => workUnitAsyncStorage.run(requestStore, fn));
}
