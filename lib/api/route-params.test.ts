import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Next 16 hands a route handler its dynamic segments already percent-decoded, once (pages get them
 * encoded and decode them with lib/dlq/links.ts decodeParam). A handler that decodes again reads
 * `%252F` as `/`: a name holding `%XX` becomes unreachable, and a double-encoded one reaches
 * another queue (lib/api/v1/path-params.integration.test.ts shows it on the real broker).
 */
const ROOT = path.resolve(__dirname, "../..");

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return routeFiles(p);
    return /^route\.tsx?$/.test(e.name) ? [p] : [];
  });
}

describe("route handlers' params", () => {
  it("are never decoded a second time", () => {
    const files = routeFiles(path.join(ROOT, "app"));
    expect(files.length).toBeGreaterThan(20);
    const decoding = files
      .filter((f) => /\bdecodeParam\b|\bdecodeURI(Component)?\s*\(/.test(readFileSync(f, "utf8")))
      .map((f) => path.relative(ROOT, f));
    expect(decoding).toEqual([]);
  });
});
