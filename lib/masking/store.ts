import "server-only";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { Prisma, PrismaClient } from "@/lib/generated/prisma/client";
import { DEFAULT_MASKING_RULES } from "./defaults";
import { validateMaskingRules, validateSensitiveDlqs, type MaskingRule, type SensitiveDlq } from "./types";

export interface MaskingConfig {
  rules: MaskingRule[];
  sensitive: SensitiveDlq[];
  version: number;
  updatedBy: string | null;
  updatedAt: string | null;
}

function toConfig(row: {
  version: number;
  rules: unknown;
  sensitive: unknown;
  createdBy: string | null;
  createdAt: Date;
}): MaskingConfig {
  return {
    rules: row.rules as MaskingRule[],
    sensitive: row.sensitive as SensitiveDlq[],
    version: row.version,
    updatedBy: row.createdBy,
    updatedAt: row.createdAt.toISOString(),
  };
}

/** The configuration in force (highest version); the first call stores the defaults as version 1. */
export async function loadMaskingConfig(db: PrismaClient = getDb()): Promise<MaskingConfig> {
  let row = await db.maskingConfigVersion.findFirst({ orderBy: { version: "desc" } });
  if (!row) {
    await db.maskingConfigVersion.createMany({
      data: [
        {
          version: 1,
          rules: DEFAULT_MASKING_RULES as unknown as Prisma.InputJsonArray,
          sensitive: [],
          createdBy: null,
        },
      ],
      skipDuplicates: true,
    });
    row = await db.maskingConfigVersion.findFirstOrThrow({ orderBy: { version: "desc" } });
  }
  return toConfig(row);
}

/** Earlier versions, newest first, for the admin page's history. */
export async function listMaskingVersions(
  limit = 20,
  db: PrismaClient = getDb(),
): Promise<Array<{ version: number; rules: number; sensitive: number; by: string | null; at: string }>> {
  const rows = await db.maskingConfigVersion.findMany({ orderBy: { version: "desc" }, take: limit });
  return rows.map((r) => ({
    version: r.version,
    rules: Array.isArray(r.rules) ? r.rules.length : 0,
    sensitive: Array.isArray(r.sensitive) ? r.sensitive.length : 0,
    by: r.createdBy,
    at: r.createdAt.toISOString(),
  }));
}

export function checkMaskingConfig(input: { rules: unknown; sensitive: unknown }): {
  rules: MaskingRule[];
  sensitive: SensitiveDlq[];
} {
  try {
    return { rules: validateMaskingRules(input.rules), sensitive: validateSensitiveDlqs(input.sensitive) };
  } catch (e) {
    throw new AppError("bad_request:masking", {
      userMessage: e instanceof Error ? e.message : "The masking rules are not valid.",
    });
  }
}

/**
 * Stores a new version. `expectedVersion` guards against overwriting a concurrent edit; the
 * version primary key makes two saves of the same next version fail rather than both win.
 */
export async function saveMaskingConfig(
  input: { rules: MaskingRule[]; sensitive: SensitiveDlq[] },
  by: string,
  expectedVersion?: number,
  db: PrismaClient = getDb(),
): Promise<MaskingConfig> {
  const current = await loadMaskingConfig(db);
  const conflict = () =>
    new AppError("conflict:masking", {
      userMessage: "Someone changed the masking rules since you opened them. Reload and apply your change again.",
    });
  if (expectedVersion !== undefined && expectedVersion !== current.version) throw conflict();
  const n = await db.maskingConfigVersion.createMany({
    data: [
      {
        version: current.version + 1,
        rules: input.rules as unknown as Prisma.InputJsonArray,
        sensitive: input.sensitive as unknown as Prisma.InputJsonArray,
        createdBy: by,
      },
    ],
    skipDuplicates: true,
  });
  if (n.count !== 1) throw conflict();
  return loadMaskingConfig(db);
}
