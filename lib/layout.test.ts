import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The layout of lib/ (docs/contributing.md#layout), checked on every run: folders import each other in one
 * direction only, and the lower rooms import no feature. A room is a folder under lib/; a file at
 * lib/'s top level is a room of its own. Type-only imports count: a type is a dependency too.
 * Files are checked too: no two files import each other, directly or through others; a broker's
 * folder (lib/brokers/<kind>/) is imported only by itself and the registry; the broker contract
 * (lib/brokers/contract/) imports no adapter.
 */
const LIB = path.resolve(__dirname);

/** Rooms every feature may lean on. Any other folder under lib/ is a feature. */
const FOUNDATION = new Set([
  "generated",
  "crypto",
  "brokers",
  "audit",
  "auth",
  "jobs",
  "masking",
  "use-case",
  "letter",
  "connections",
  "http",
]);
/** Rooms below the features: they never import one. */
const LOWER = ["brokers", "audit", "jobs", "masking", "crypto"];

interface Edge {
  from: string;
  to: string;
  file: string;
  spec: string;
}

const isTest = (file: string) => /\.test\.tsx?$/.test(file);

function sources(dir: string, out: string[] = [], tests = false): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "generated") sources(p, out, tests);
    } else if (/\.tsx?$/.test(e.name) && (tests || !isTest(e.name)) && !e.name.endsWith(".d.ts")) {
      out.push(p);
    }
  }
  return out;
}

/** lib/audit/index.ts -> "audit"; lib/db.ts -> "db.ts". */
function roomOf(file: string): string {
  return path.relative(LIB, file).split(path.sep)[0];
}

function resolveSpec(from: string, spec: string): string | null {
  let abs: string;
  if (spec.startsWith("@/lib/")) abs = path.join(LIB, spec.slice("@/lib/".length));
  else if (spec.startsWith(".")) abs = path.resolve(path.dirname(from), spec);
  else return null;
  if (!abs.startsWith(LIB + path.sep)) return null;
  for (const candidate of [`${abs}.ts`, `${abs}.tsx`, path.join(abs, "index.ts"), abs]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return abs;
}

function edges(): Edge[] {
  const out: Edge[] = [];
  for (const file of sources(LIB)) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true);
    for (const { fileName: spec } of importedFiles) {
      const target = resolveSpec(file, spec);
      if (!target) continue;
      const from = roomOf(file);
      const to = roomOf(target);
      if (from !== to) out.push({ from, to, file: path.relative(LIB, file), spec });
    }
  }
  return out;
}

/** Every import of one file of lib/ by another, tests included, as paths relative to lib/. */
function fileEdges(): Edge[] {
  const out: Edge[] = [];
  for (const file of sources(LIB, [], true)) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true);
    for (const { fileName: spec } of importedFiles) {
      const target = resolveSpec(file, spec);
      if (!target || !fs.existsSync(target)) continue;
      const from = path.relative(LIB, file);
      if (!out.some((e) => e.from === from && e.spec === spec))
        out.push({ from, to: path.relative(LIB, target), file: from, spec });
    }
  }
  return out;
}

/** The broker folder a file of lib/ is in ("brokers/kafka"), or null. */
function brokerFolderOf(file: string): string | null {
  const m = /^brokers\/([^/]+)\//.exec(file.split(path.sep).join("/"));
  return m && m[1] !== "contract" && m[1] !== "contract-suite" ? `brokers/${m[1]}` : null;
}

/**
 * Files outside a broker's folder that may import it: the registry, which maps each kind to its
 * adapter, with the database-backed store it hands the Kafka adapter and the union of every
 * adapter's managed header names it hands them all (which reads each broker's declaration only);
 * and the demo seeder, which fills the demo's brokers with the same kits the tests use. Tests
 * anywhere may import a broker's folder too: they build real adapters and fill real DLQs.
 */
const BROKER_IMPORTERS = new Set([
  "connections/registry.ts",
  "connections/kafka-handled-store.ts",
  "connections/managed-headers.ts",
]);
const BROKER_IMPORTER_ROOMS = ["demo/"];

/** Strongly connected groups of nodes (Tarjan): each is a set of rooms, or files, that import one another. */
function cycles(all: Edge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of all) {
    if (!next.has(e.from)) next.set(e.from, new Set());
    if (!next.has(e.to)) next.set(e.to, new Set());
    next.get(e.from)!.add(e.to);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}

const isFeature = (room: string) => !room.endsWith(".ts") && !FOUNDATION.has(room);

describe("lib/ layout", () => {
  const all = edges();

  it("sees the imports it checks (the walk is not empty)", () => {
    expect(all.some((e) => e.from === "dlq" && e.to === "use-case")).toBe(true);
    expect(all.some((e) => e.from === "masking" && e.to === "text.ts")).toBe(true);
  });

  it("has no rooms that import each other, directly or through other rooms", () => {
    const report = cycles(all).map((group) => {
      const inside = all.filter((e) => group.includes(e.from) && group.includes(e.to));
      return `${group.join(" <-> ")}:\n${inside.map((e) => `  ${e.file} imports ${e.spec}`).join("\n")}`;
    });
    expect(report).toEqual([]);
  });

  it("keeps the lower rooms and the top-level files free of features", () => {
    const lower = (room: string) => LOWER.includes(room) || room.endsWith(".ts");
    const composition = new Set(["worker.ts", "shutdown.ts"]);
    const bad = all
      .filter((e) => lower(e.from) && !composition.has(e.from) && isFeature(e.to))
      .map((e) => `${e.file} imports ${e.spec}`);
    expect(bad).toEqual([]);
  });

  it("keeps the database out of the broker boundary", () => {
    const bad = all
      .filter((e) => e.from === "brokers" && (e.to === "db.ts" || e.to === "generated"))
      .map((e) => `${e.file} imports ${e.spec}`);
    expect(bad).toEqual([]);
  });

  describe("files", () => {
    const files = fileEdges();

    it("sees the imports it checks (the walk is not empty)", () => {
      expect(files.some((e) => e.from === "connections/registry.ts" && e.to === "brokers/kafka/adapter.ts")).toBe(true);
      expect(files.some((e) => e.from === "brokers/contract/adapter.ts" && e.to === "brokers/contract/letter.ts")).toBe(
        true,
      );
    });

    it("has no files that import each other, directly or through other files", () => {
      const report = cycles(files).map((group) => {
        const inside = files.filter((e) => group.includes(e.from) && group.includes(e.to));
        return `${group.length} files: ${group.join(", ")}:\n${inside.map((e) => `  ${e.file} imports ${e.spec}`).join("\n")}`;
      });
      expect(report).toEqual([]);
    });

    it("lets only the registry and the broker's own files import a broker's folder", () => {
      const bad = files
        .filter((e) => {
          const folder = brokerFolderOf(e.to);
          if (!folder || brokerFolderOf(e.from) === folder) return false;
          if (isTest(e.from) || BROKER_IMPORTERS.has(e.from)) return false;
          return !BROKER_IMPORTER_ROOMS.some((room) => e.from.startsWith(room));
        })
        .map((e) => `${e.file} imports ${e.spec}`);
      expect(bad).toEqual([]);
    });

    it("lets the union of managed header names read each broker's declaration and nothing else of it", () => {
      const read = files.filter((e) => e.from === "connections/managed-headers.ts" && brokerFolderOf(e.to) !== null);
      expect(read.length).toBeGreaterThan(0);
      const bad = read
        .filter((e) => path.basename(e.to) !== "managed-headers.ts")
        .map((e) => `${e.file} imports ${e.spec}`);
      expect(bad).toEqual([]);
    });

    it("keeps the broker contract free of adapters", () => {
      const bad = files
        .filter((e) => e.from.startsWith("brokers/contract/") && brokerFolderOf(e.to) !== null)
        .map((e) => `${e.file} imports ${e.spec}`);
      expect(bad).toEqual([]);
    });
  });
});
