const BASE = "http://console.invalid";

/**
 * Where to go after sign-in: a path on this console, or "/". The value is parsed the way a browser
 * will read it (tabs and newlines dropped, backslashes as slashes), so "/\t/evil.example" or
 * "/\\evil.example", which a prefix check takes for paths, cannot leave the origin.
 */
export function safeCallbackPath(raw: string | string[] | undefined | null): string {
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (!v?.startsWith("/")) return "/";
  let url: URL;
  try {
    url = new URL(v, BASE);
  } catch {
    return "/";
  }
  if (url.origin !== BASE) return "/";
  return `${url.pathname}${url.search}${url.hash}`;
}
