import "server-only";
import { getDb } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { Prisma, PrismaClient } from "@/lib/generated/prisma/client";
import { DEFAULT_CLASSIFICATION_RULES, validateRules, type ClassificationRule } from "@/lib/triage";

export type { ClassificationRule };

export interface RuleSet {
  rules: ClassificationRule[];
  version: number;
  updatedBy: string | null;
  updatedAt: string | null;
}

const ROW_ID = 1;

/** The current rules; the first call stores the defaults (so the table shows what is in force). */
export async function loadRules(db: PrismaClient = getDb()): Promise<RuleSet> {
  let row = await db.triageRuleSet.findUnique({ where: { id: ROW_ID } });
  if (!row) {
    await db.triageRuleSet.createMany({
      data: [{ id: ROW_ID, rules: DEFAULT_CLASSIFICATION_RULES as unknown as Prisma.InputJsonArray, version: 1 }],
      skipDuplicates: true,
    });
    row = await db.triageRuleSet.findUniqueOrThrow({ where: { id: ROW_ID } });
  }
  return {
    rules: row.rules as unknown as ClassificationRule[],
    version: row.version,
    updatedBy: row.updatedBy,
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Checks the list with validateRules; throws `bad_request:rules` with its reason. */
export function checkRules(input: unknown): ClassificationRule[] {
  if (Array.isArray(input) && input.length > 500)
    throw new AppError("bad_request:rules", { userMessage: "At most 500 rules." });
  try {
    return validateRules(input);
  } catch (e) {
    throw new AppError("bad_request:rules", {
      userMessage: e instanceof Error ? e.message : "The rules are not valid.",
    });
  }
}

/** Replaces the whole list atomically; `expectedVersion` guards against overwriting a concurrent edit. */
export async function replaceRules(
  rules: ClassificationRule[],
  by: string,
  expectedVersion?: number,
  db: PrismaClient = getDb(),
): Promise<RuleSet> {
  const current = await loadRules(db);
  if (expectedVersion !== undefined && expectedVersion !== current.version) {
    throw new AppError("conflict:rules", {
      userMessage: "Someone changed the rules since you opened them. Reload and apply your change again.",
    });
  }
  const n = await db.triageRuleSet.updateMany({
    where: { id: ROW_ID, version: current.version },
    data: {
      rules: rules as unknown as Prisma.InputJsonArray,
      version: current.version + 1,
      updatedBy: by,
      updatedAt: new Date(),
    },
  });
  if (n.count !== 1)
    throw new AppError("conflict:rules", {
      userMessage: "Someone changed the rules at the same moment. Reload and apply your change again.",
    });
  return loadRules(db);
}
