import "server-only";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import type { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { AppError } from "@/lib/errors";
import { processState } from "@/lib/process-state";

/**
 * The database: the Postgres server named by DATABASE_URL, or, when it is unset, an embedded
 * PGlite database in DLQ_CONSOLE_DATA_DIR (default ./.data/pglite).
 *
 * Nothing is opened at import time (`next build` imports every page module): `getDb()` opens on
 * first use. A PGlite folder must have one owner: a second process opening it corrupts it for good,
 * so the owner holds `<dir>.lock` (with its pid) and everyone else is refused.
 *
 * PGlite and its Prisma adapter are imported only when the embedded database is opened: on
 * Postgres they are never loaded (importing PGlite alone cost a process 32 MB of RSS).
 */
export type DatabaseMode = "postgres" | "pglite";

export function databaseMode(): DatabaseMode {
  return process.env.DATABASE_URL ? "postgres" : "pglite";
}

/** Absolute path of the PGlite folder (standalone server.js changes the working directory). */
export function pgliteDataDir(): string {
  return path.resolve(process.env.DLQ_CONSOLE_DATA_DIR || path.join(".data", "pglite"));
}

function lockPathOf(dataDir: string) {
  return `${dataDir}.lock`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Takes the folder's lock file or throws. A lock left by a dead process is taken over.
 * Returns the release function (idempotent, synchronous so it can run in an `exit` handler).
 */
export function lockPgliteDir(dataDir: string): () => void {
  const lockPath = lockPathOf(dataDir);
  mkdirSync(path.dirname(lockPath), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          if (readFileSync(lockPath, "utf8").trim() === String(process.pid)) unlinkSync(lockPath);
        } catch {
          /* already gone */
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const owner = Number.parseInt(readFileSync(lockPath, "utf8").trim(), 10);
      if (Number.isFinite(owner) && owner !== process.pid && isAlive(owner)) {
        throw new AppError("unavailable:database", {
          message: `PGlite folder ${dataDir} is locked by pid ${owner} (${lockPath})`,
          userMessage: `The embedded database at ${dataDir} is in use by another process (pid ${owner}), most likely the running console. Stop it first (Ctrl-C in its terminal, or kill ${owner}), then run this again.`,
        });
      }
      if (owner === process.pid) {
        throw new AppError("unavailable:database", {
          userMessage: `The embedded database at ${dataDir} is already open in this process.`,
        });
      }
      unlinkSync(lockPath); // stale: its owner is gone
    }
  }
  throw new AppError("unavailable:database", { userMessage: `Could not lock the embedded database at ${dataDir}.` });
}

/** Opens (creating if needed) a PGlite folder under its lock. Callers must `close()` it. */
export async function openPglite(dataDir = pgliteDataDir()): Promise<{ pglite: PGlite; close: () => Promise<void> }> {
  const dir = path.resolve(dataDir);
  mkdirSync(path.dirname(dir), { recursive: true }); // without the parent PGlite only says "External error id#0"
  const release = lockPgliteDir(dir);
  let pglite: PGlite;
  try {
    const { PGlite } = await import("@electric-sql/pglite");
    pglite = new PGlite(dir);
    await pglite.waitReady;
  } catch (e) {
    release();
    throw e;
  }
  return {
    pglite,
    close: async () => {
      try {
        if (!pglite.closed) await pglite.close();
      } finally {
        release();
      }
    },
  };
}

/** Before migrations created the role (a first start), the session stays as it is. */
const EMBEDDED_SESSION_ROLE = `DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'dlq_console_app') THEN SET ROLE dlq_console_app; END IF;
END $$`;

type DbState = { prisma: PrismaClient; close: () => Promise<void> };
/** One client per process, however many copies of this module the bundler makes. */
const db = processState("db", () => ({
  state: null as DbState | null,
  closing: null as Promise<void> | null,
  signalHandlersInstalled: false,
}));

/**
 * PGlite must be closed before exit or recent writes are lost. In the console, lib/shutdown.ts
 * (installed by instrumentation.ts; Next runs with NEXT_MANUAL_SIG_HANDLE=true) closes it on
 * SIGTERM/SIGINT. Where nobody else listens for those signals (scripts), this does it.
 */
function installPgliteShutdown() {
  if (db.signalHandlersInstalled) return;
  db.signalHandlersInstalled = true;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    if (process.listenerCount(signal) > 0) continue;
    process.once(signal, () => {
      void closeDb().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
    });
  }
}

/**
 * Settings of every session the console opens on Postgres (DATABASE_URL's own `options`, if any,
 * take their place). JIT off: the console's queries are index probes of a few milliseconds whose
 * plans can be costed high (a branch that runs only after a key rotation, estimated at every row
 * of the DLQ), and JIT then compiled for 340-710 ms before a 5 ms search of 10,000,000 letters.
 */
export const PG_SESSION_OPTIONS = "-c jit=off";

function openDb(): DbState {
  const connectionString = process.env.DATABASE_URL;
  if (connectionString) {
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString, options: PG_SESSION_OPTIONS }) });
    return { prisma, close: () => prisma.$disconnect() };
  }
  const dir = pgliteDataDir();
  mkdirSync(path.dirname(dir), { recursive: true });
  const release = lockPgliteDir(dir);
  process.once("exit", release);
  // Opened on the client's first query (the import is asynchronous); the lock is taken now.
  const opening = import("@electric-sql/pglite").then(({ PGlite }) => {
    const pglite = new PGlite(dir);
    // Run as the console's role (migration *_audit_roles_and_key: only SELECT and INSERT on audit_log).
    // The process is still the superuser underneath and owns the files: here the audit key and the
    // checkpoints are what protect the chain. PGlite runs queries in order, so this precedes them all.
    void pglite
      .exec(EMBEDDED_SESSION_ROLE)
      .catch((e) =>
        console.error(`[db] could not switch the embedded session to dlq_console_app: ${(e as Error).message}`),
      );
    return pglite;
  });
  opening.catch(() => undefined); // surfaces at the first query, through connect()
  const adapter: Pick<PrismaPGlite, "provider" | "adapterName" | "connect"> = {
    provider: "postgres",
    adapterName: "pglite-prisma-adapter",
    connect: async () => {
      const [{ PrismaPGlite }, pglite] = await Promise.all([import("pglite-prisma-adapter"), opening]);
      return new PrismaPGlite(pglite).connect();
    },
  };
  const prisma = new PrismaClient({ adapter });
  installPgliteShutdown();
  return {
    prisma,
    close: async () => {
      try {
        await prisma.$disconnect();
        const pglite = await opening.catch(() => null);
        if (pglite && !pglite.closed) await pglite.close();
      } finally {
        release();
        process.off("exit", release);
      }
    },
  };
}

/** The process-wide Prisma client, opened on first call. */
export function getDb(): PrismaClient {
  if (db.closing) throw new AppError("unavailable:database", { userMessage: "The console is shutting down." });
  db.state ??= openDb();
  return db.state.prisma;
}

/** Closes the client (and PGlite, releasing its lock). A later `getDb()` opens a new one. */
export async function closeDb(): Promise<void> {
  if (!db.state) return db.closing ?? undefined;
  const current = db.state;
  const closing = current.close().finally(() => {
    if (db.state === current) db.state = null;
    db.closing = null;
  });
  db.closing = closing;
  return closing;
}

/** True when a PGlite folder exists and holds a database (used by scripts to explain first runs). */
export function pgliteDirExists(dataDir = pgliteDataDir()): boolean {
  return existsSync(path.join(dataDir, "PG_VERSION"));
}
