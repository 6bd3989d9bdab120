import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Actor } from "@/lib/auth/session";
import type { Role } from "@/lib/auth/permissions";

/**
 * An integration test file's own console configuration: written to a temporary file that
 * DLQ_CONSOLE_CONFIG names, with the config cache and the adapters built from an earlier config
 * dropped. `restore` closes the adapters built from it and undoes the rest.
 */
export async function useConsoleConfig(config: unknown): Promise<{ file: string; restore(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), "dlq-test-config-"));
  const file = path.join(dir, "config.json");
  writeFileSync(file, JSON.stringify(config));
  const { resetConfigCache } = await import("@/lib/config");
  const { closeAllAdapters } = await import("@/lib/connections/registry");
  await closeAllAdapters().catch(() => undefined);
  process.env.DLQ_CONSOLE_CONFIG = file;
  resetConfigCache();
  return {
    file,
    async restore() {
      await closeAllAdapters().catch(() => undefined);
      delete process.env.DLQ_CONSOLE_CONFIG;
      resetConfigCache();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh user of each role, as the actor a use case takes. `domain` tells the test files' users apart. */
export async function testActors<R extends Role>(domain: string, roles: readonly R[]): Promise<Record<R, Actor>> {
  const { createUser } = await import("@/lib/auth/users");
  const out = {} as Record<R, Actor>;
  for (const role of roles) {
    const u = await createUser({
      email: `${role}-${randomUUID().slice(0, 8)}@${domain}`,
      role,
      password: "a-long-enough-password",
    });
    out[role] = { id: u.id, email: u.email, name: null, role };
  }
  return out;
}
