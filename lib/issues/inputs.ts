import { z } from "zod";
import type { BrokerKind } from "@/lib/brokers/contract/capabilities";
import { ISSUE_STATES, MAX_IGNORE_LETTERS, type OperatorChange } from "@/lib/triage/issue-lifecycle";

/**
 * What the failure-issue use cases take, as zod schemas: the pages' actions and the v1 API parse
 * with the same ones, so both accept and refuse the same inputs.
 */

const BROKER_KINDS = ["rabbitmq", "sqs", "kafka", "pulsar"] as const satisfies readonly BrokerKind[];

const name = (max: number) => z.string().trim().min(1).max(max);

export const issueRefSchema = z.object({
  connectionId: name(100),
  queue: name(255),
  groupKey: name(200),
});
export type IssueRef = z.output<typeof issueRefSchema>;

export const ignoreSchema = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("forever") }),
  z.object({ mode: z.literal("until_time"), until: z.coerce.date() }),
  z.object({ mode: z.literal("until_count"), letters: z.coerce.number().int().min(1).max(MAX_IGNORE_LETTERS) }),
]);

export const stateChangeSchema = z.discriminatedUnion("state", [
  z.object({ state: z.literal("acknowledged") }),
  z.object({
    state: z.literal("resolved"),
    note: z.string().trim().max(500).nullish().meta({ description: 'e.g. "in the next release".' }),
  }),
  z.object({ state: z.literal("ignored"), ignore: ignoreSchema }),
]);
export type StateChangeInput = z.input<typeof stateChangeSchema>;

export function operatorChangeOf(c: z.output<typeof stateChangeSchema>): OperatorChange {
  if (c.state === "acknowledged") return { to: "acknowledged" };
  if (c.state === "resolved") return { to: "resolved", note: c.note ?? null };
  return { to: "ignored", ignore: c.ignore };
}

/** "none": issues nobody is assigned to. */
export const UNASSIGNED = "none";

export const issueFilterSchema = z.object({
  states: z.array(z.enum(ISSUE_STATES)).max(ISSUE_STATES.length).optional(),
  /** An assignee's name (a team or a user's e-mail), or "none". */
  assignee: name(320).optional(),
  /** The team owning the DLQ (the operations owners). */
  owner: name(100).optional(),
  brokerKind: z.enum(BROKER_KINDS).optional(),
  connectionId: name(100).optional(),
  queue: name(255).optional(),
});
export type IssueFilter = z.output<typeof issueFilterSchema>;

export const assigneeSchema = z
  .object({ kind: z.enum(["owner", "user"]), name: name(320) })
  .nullable()
  .meta({ description: "A team from the DLQ owners, or a console user's e-mail; null unassigns." });
export type Assignee = NonNullable<z.output<typeof assigneeSchema>>;

export const noteSchema = z.object({ text: z.string().trim().min(1, "Write the note.").max(4000) });

export const MAX_LINK_LENGTH = 2000;

/**
 * A link an operator adds to an issue: http or https only, without a user or password in it,
 * stored as typed (trimmed) and shown as text beside its host.
 */
export const linkSchema = z.object({
  url: z
    .string()
    .trim()
    .min(1, "Give the link.")
    .max(MAX_LINK_LENGTH)
    .refine((v) => linkHost(v) !== null, "Give an http or https link, without a user name or password in it."),
});

/** The host of an http(s) link, or null when it is not one (or carries credentials). */
export function linkHost(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return null;
  if (u.username || u.password || !u.host) return null;
  return u.host;
}
