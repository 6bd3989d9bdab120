/** Case-insensitive glob (`*` any characters, `?` one) compiled to an anchored RegExp. */
export function globRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`, "is");
}

const cache = new Map<string, RegExp>();

export function globMatch(glob: string, value: string): boolean {
  let re = cache.get(glob);
  if (!re) {
    re = globRegExp(glob);
    if (cache.size > 2000) cache.clear();
    cache.set(glob, re);
  }
  return re.test(value);
}
