import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import type { SchemaEngine as SchemaEngineT } from "@prisma/schema-engine-wasm";

/**
 * @prisma/schema-engine-wasm is built for bundlers (`import * as wasm from "./x.wasm"`), which plain
 * Node cannot do. We load its JS glue (schema_engine_bg.js), instantiate the .wasm ourselves with the
 * glue as its import module, hand the exports back to the glue, and run wasm-bindgen's start hook.
 */
type Glue = typeof import("@prisma/schema-engine-wasm") & { __wbg_set_wasm(exports: unknown): void };

let gluePromise: Promise<Glue> | null = null;

async function loadGlue(): Promise<Glue> {
  const require = createRequire(path.join(process.cwd(), "package.json"));
  const gluePath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
  const pkgDir = path.dirname(gluePath);
  const glue = (await import(pathToFileURL(gluePath).href)) as Glue;
  const bytes = readFileSync(path.join(pkgDir, "schema_engine_bg.wasm"));
  const module = await WebAssembly.compile(bytes);
  // Every import the module declares comes from the glue file ("./schema_engine_bg.js").
  const imports: WebAssembly.Imports = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    imports[imp.module] ??= glue as unknown as WebAssembly.ModuleImports;
  }
  const instance = await WebAssembly.instantiate(module, imports);
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports as { __wbindgen_start?: () => void }).__wbindgen_start?.();
  return glue;
}

export type { SchemaEngineT as SchemaEngine };

/** Opens a schema engine that talks to the database through a Prisma driver adapter factory. */
export async function openSchemaEngine(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  schema?: { path: string; content: string },
): Promise<SchemaEngineT> {
  gluePromise ??= loadGlue();
  const glue = await gluePromise;
  const bound = bindMigrationAwareSqlAdapterFactory(adapterFactory);
  const log = (msg: string) => {
    if (process.env.DEBUG_SCHEMA_ENGINE) console.error("[schema-engine]", msg);
  };
  return glue.SchemaEngine.new({ datamodels: schema ? [[schema.path, schema.content]] : undefined }, log, bound);
}
