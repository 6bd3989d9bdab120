import { z } from "zod";
import { ISSUE_STATES } from "@/lib/triage/issue-lifecycle";
import type { IssueEventView, IssueList, IssueView } from "@/lib/issues/use-cases";
import { defineOperation } from "../registry";

/**
 * Failure issues: the lifecycle of each failure group (new, acknowledged, resolved, regressed,
 * ignored), across DLQs. Shapes only: the routes call lib/issues/use-cases.ts, which authorize,
 * mask titles and notes for the token's role and audit every change, as for the pages.
 */

const ref = {
  connectionId: z.string().trim().min(1).max(100),
  queue: z.string().trim().min(1).max(255),
  groupKey: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .meta({ description: "The group's `groupKey` (GET /api/v1/groups, GET /api/v1/issues)." }),
};

const stateSchema = z.enum(ISSUE_STATES);

export const listIssuesQuerySchema = z.object({
  state: z
    .string()
    .regex(new RegExp(`^(${ISSUE_STATES.join("|")})(,(${ISSUE_STATES.join("|")}))*$`))
    .optional()
    .meta({ description: "One state or several, comma-separated (e.g. `new,regressed`)." }),
  assignee: z
    .string()
    .trim()
    .min(1)
    .max(320)
    .optional()
    .meta({ description: "A team or a user's e-mail as assigned; `none` for unassigned issues." }),
  owner: z.string().trim().min(1).max(100).optional().meta({ description: "The team owning the DLQ." }),
  brokerKind: z.enum(["rabbitmq", "sqs", "kafka", "pulsar"]).optional(),
  connectionId: ref.connectionId.optional(),
  queue: ref.queue.optional(),
});

/** The query as listIssues' filter. */
export function issueFilterOf(q: z.output<typeof listIssuesQuerySchema>) {
  return {
    states: q.state ? [...new Set(q.state.split(","))] : undefined,
    assignee: q.assignee,
    owner: q.owner,
    brokerKind: q.brokerKind,
    connectionId: q.connectionId,
    queue: q.queue,
  };
}

const ignoreViewSchema = z
  .union([
    z.object({ mode: z.literal("forever") }),
    z.object({ mode: z.literal("until_time"), until: z.iso.datetime() }),
    z.object({
      mode: z.literal("until_count"),
      letters: z.number().int().meta({ description: "The N of 'until N more letters'." }),
      untilCount: z.number().int().meta({ description: "The value of `letters` at which the ignore ends." }),
      remaining: z.number().int(),
    }),
  ])
  .meta({ id: "IssueIgnore" });

export const issueSchema = z
  .object({
    connectionId: z.string(),
    queue: z.string(),
    groupKey: z.string(),
    brokerKind: z.enum(["rabbitmq", "sqs", "kafka", "pulsar"]).nullable(),
    title: z.string().meta({ description: "The group's label, masked for the token's role." }),
    exceptionClass: z.string().nullable(),
    normalizedMessage: z.string().nullable().meta({ description: "Masked for the token's role." }),
    state: stateSchema,
    stateChangedAt: z.iso.datetime(),
    stateChangedBy: z.string().meta({ description: 'An e-mail, or "system" for the console\'s own changes.' }),
    resolvedAt: z.iso.datetime().nullable(),
    resolveNote: z.string().nullable().meta({ description: "Masked for the token's role." }),
    ignore: ignoreViewSchema.nullable(),
    assignee: z.object({ kind: z.enum(["owner", "user"]), name: z.string() }).nullable(),
    owner: z
      .object({ team: z.string(), contact: z.string(), source: z.enum(["console", "config"]) })
      .nullable()
      .meta({ description: "The team owning the DLQ." }),
    letters: z.number().int().meta({ description: "Letters of the group ever indexed." }),
    present: z.number().int().meta({ description: "Letters of the group in the DLQ now." }),
    growth: z.number().int().meta({ description: "Letters of the group that arrived in the last 24 hours." }),
    firstSeenAt: z.iso.datetime().meta({ description: "Earliest dead-lettered time of its letters." }),
    lastSeenAt: z.iso.datetime().meta({ description: "Latest dead-lettered time of its letters." }),
  })
  .meta({ id: "Issue" });

export const issueListSchema = z
  .object({
    items: z.array(issueSchema).meta({ description: "New and regressed first, then by growth; at most 500." }),
    total: z.number().int().meta({ description: "Issues in the filtered set." }),
    counts: z.record(stateSchema, z.number().int()).meta({ description: "Issues per state, whatever `state` says." }),
  })
  .meta({ id: "IssueList" });

export function toIssueList(r: IssueList): z.output<typeof issueListSchema> {
  return issueListSchema.parse({ items: r.issues, total: r.total, counts: r.counts });
}

export const listIssuesOperation = defineOperation({
  method: "get",
  tag: "Issues",
  path: "/issues",
  operationId: "listIssues",
  summary: "Failure groups across DLQs, with their state",
  description:
    "Every failure group the triage index found, across DLQs, with its lifecycle state, assignee, letter counts and first and last seen. Filters are on the console's own fields (state, assignee, owner, broker, DLQ), never on masked text; titles are masked for the token's role. Needs triage:read (every role).",
  problems: [400, 403],
  query: listIssuesQuerySchema,
  response: issueListSchema,
});

export const changeIssueStateBodySchema = z
  .object({
    ...ref,
    state: z.enum(["acknowledged", "resolved", "ignored"]),
    note: z.string().max(500).optional().meta({ description: 'Resolved only: e.g. "in the next release".' }),
    ignore: z
      .union([
        z.object({ mode: z.literal("forever") }),
        z.object({ mode: z.literal("until_time"), until: z.iso.datetime({ offset: true }) }),
        z.object({ mode: z.literal("until_count"), letters: z.number().int().min(1) }),
      ])
      .optional()
      .meta({ description: "Ignored only: forever, until a time to come, or until N more letters." }),
  })
  .meta({ id: "IssueStateChange" });

export function stateChangeOf(b: z.output<typeof changeIssueStateBodySchema>) {
  if (b.state === "resolved") return { state: "resolved" as const, note: b.note ?? null };
  if (b.state === "ignored") return { state: "ignored" as const, ignore: b.ignore as never };
  return { state: "acknowledged" as const };
}

export const changedIssueSchema = z
  .object({ issue: issueSchema, changed: z.boolean().meta({ description: "False when the issue was already so." }) })
  .meta({ id: "ChangedIssue" });

export const changeIssueStateOperation = defineOperation({
  method: "post",
  tag: "Issues",
  path: "/issues/state",
  operationId: "changeIssueState",
  summary: "Acknowledge, resolve or ignore a failure group",
  description:
    "Sets a group's state. Resolved: a letter dead-lettered after the resolve makes it regressed. Ignored: forever, until a time (it then ends), or until N more letters. New and regressed are set by the console only. Needs issues:write (operators and admins); audited `issue.state_change`.",
  problems: [400, 403, 404],
  body: changeIssueStateBodySchema,
  response: changedIssueSchema,
});

const issueEventSchema = z
  .object({
    id: z.string(),
    kind: z.enum(["state", "note", "link", "assign"]),
    fromState: stateSchema.nullable(),
    toState: stateSchema.nullable(),
    text: z
      .string()
      .nullable()
      .meta({ description: "The note, or why the state changed; masked for the token's role." }),
    link: z.object({ url: z.string(), host: z.string().nullable() }).nullable(),
    actor: z.string().nullable(),
    actorRole: z.string().nullable(),
    at: z.iso.datetime(),
  })
  .meta({ id: "IssueEvent" });

export function toIssueEvent(e: IssueEventView): z.output<typeof issueEventSchema> {
  return issueEventSchema.parse(e);
}

export function toChangedIssue(r: { issue: IssueView; changed: boolean }): z.output<typeof changedIssueSchema> {
  return changedIssueSchema.parse(r);
}

export const addIssueNoteOperation = defineOperation({
  method: "post",
  tag: "Issues",
  path: "/issues/notes",
  operationId: "addIssueNote",
  summary: "Add a note to a failure group",
  description:
    "Stored as typed, shown as text; readers whose role masks values see them masked. Needs issues:write (operators and admins); audited `issue.note`.",
  problems: [400, 403, 404],
  body: z.object({ ...ref, text: z.string().max(4000) }).meta({ id: "IssueNote" }),
  status: 201,
  response: issueEventSchema,
});

export const addIssueLinkOperation = defineOperation({
  method: "post",
  tag: "Issues",
  path: "/issues/links",
  operationId: "addIssueLink",
  summary: "Add a link to a failure group",
  description:
    "An http or https URL (no user name or password in it), shown as text with its host. Needs issues:write (operators and admins); audited `issue.link`.",
  problems: [400, 403, 404],
  body: z.object({ ...ref, url: z.string().max(2000) }).meta({ id: "IssueLink" }),
  status: 201,
  response: issueEventSchema,
});
