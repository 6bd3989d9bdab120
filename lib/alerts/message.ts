import { issueHref } from "@/lib/issues/ui-links";

/**
 * Alert messages as Slack-compatible JSON (`text`, plus `blocks`). Pure. Every interpolated word
 * (DLQ and connection names, owner, finding text) is data: control characters become spaces and
 * Slack's markup characters are escaped, so a DLQ named `<!channel>` or `<https://evil|click>`
 * is shown as written, never as a mention or a link.
 */
export type AlertEvent = "fire" | "resolve" | "test";

export interface AlertMessageInput {
  event: AlertEvent;
  rule: { name: string; condition: string };
  dlq: { connectionId: string; queue: string } | null;
  owner: { team: string; contact: string } | null;
  /** What the rule saw, in words: "depth 250", "oldest letter 3 h old (as of the scan 12 min ago)". */
  value: string | null;
  /** Link to the DLQ's page (absolute when the console's URL is known); to the group's view when `group` is set. */
  link: string | null;
  at: Date;
  /**
   * The failure group a group rule fired for, its texts already masked for the audience (a
   * viewer of the DLQ): the sender cannot know who reads the channel.
   */
  group?: AlertGroup | null;
}

export interface AlertGroup {
  /** The group's label: exception, normalised message, top frame. */
  title: string;
  exceptionClass: string | null;
  message: string | null;
}

export interface SlackMessage {
  text: string;
  blocks: Array<Record<string, unknown>>;
}

const MAX_FIELD = 300;

/** Plain text for Slack mrkdwn: one line, bounded, `&`, `<`, `>` escaped as Slack asks. */
export function slackText(value: string, max = MAX_FIELD): string {
  const oneLine = value.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").trim();
  const chars = Array.from(oneLine);
  const cut = chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : oneLine;
  return cut.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * A link Slack renders; the URL is ours (console origin + encoded path), its `|` and `>` still
 * escaped. A relative path (the console's URL is not configured) cannot be a link: shown as text.
 */
function slackLink(url: string, label: string): string {
  if (!/^https?:\/\//.test(url)) return `${slackText(label, 80)}: ${slackText(url, 2000)} (on the console)`;
  const safe = url.replace(/[\u0000-\u0020<>|]/g, (c) => encodeURIComponent(c));
  return `<${safe}|${slackText(label, 80)}>`;
}

const HEADLINE: Record<AlertEvent, string> = {
  fire: ":rotating_light: Firing",
  resolve: ":white_check_mark: Resolved",
  test: ":test_tube: Test message",
};

export function buildAlertMessage(m: AlertMessageInput): SlackMessage {
  const rule = slackText(m.rule.name, 100);
  const condition = slackText(m.rule.condition);
  const where = m.dlq ? `${slackText(m.dlq.queue)} on ${slackText(m.dlq.connectionId, 63)}` : null;
  const head =
    m.event === "test"
      ? `${HEADLINE.test} from DLQ Console for rule "${rule}" (${condition}). Alerts of this rule will arrive here.`
      : `${HEADLINE[m.event]}: ${where ?? "a DLQ"}: ${condition} (rule "${rule}")`;
  const lines = [head];
  const g = m.group ?? null;
  if (g) {
    lines.push(`Group: ${slackText(g.title)}`);
    if (g.exceptionClass) lines.push(`Exception: ${slackText(g.exceptionClass)}`);
    if (g.message) lines.push(`Message: ${slackText(g.message)}`);
  }
  if (m.value) lines.push(`${m.event === "resolve" ? "Now" : "Seen"}: ${slackText(m.value)}`);
  if (m.dlq)
    lines.push(`Owner: ${m.owner ? `${slackText(m.owner.team, 100)} (${slackText(m.owner.contact)})` : "none set"}`);
  if (m.link) lines.push(slackLink(m.link, g ? "Open the group in DLQ Console" : "Open the DLQ in DLQ Console"));
  const text = lines.join("\n");

  const fields: Array<{ type: "mrkdwn"; text: string }> = [];
  if (m.dlq) {
    fields.push({ type: "mrkdwn", text: `*DLQ*\n${slackText(m.dlq.queue)}` });
    fields.push({ type: "mrkdwn", text: `*Connection*\n${slackText(m.dlq.connectionId, 63)}` });
    fields.push({
      type: "mrkdwn",
      text: `*Owner*\n${m.owner ? `${slackText(m.owner.team, 100)}\n${slackText(m.owner.contact)}` : "none set"}`,
    });
  }
  if (m.value)
    fields.push({ type: "mrkdwn", text: `*${m.event === "resolve" ? "Now" : "Value"}*\n${slackText(m.value)}` });
  const blocks: Array<Record<string, unknown>> = [{ type: "section", text: { type: "mrkdwn", text: head } }];
  if (g) {
    const about = [`*Group*\n${slackText(g.title)}`];
    if (g.exceptionClass) about.push(`*Exception*\n${slackText(g.exceptionClass)}`);
    if (g.message) about.push(`*Message*\n${slackText(g.message)}`);
    blocks.push({ type: "section", text: { type: "mrkdwn", text: about.join("\n") } });
  }
  if (fields.length) blocks.push({ type: "section", fields });
  const context = [`Rule "${rule}"`, `at ${m.at.toISOString().slice(0, 19).replace("T", " ")} UTC`];
  if (m.link) context.push(slackLink(m.link, "Open in DLQ Console"));
  blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: context.join(" · ") }] });
  return { text, blocks };
}

/** A failure group's page (lib/issues/ui-links.ts) under the console's public URL, or relative when it is not set. */
export function groupLink(
  connectionId: string,
  queue: string,
  groupKey: string,
  publicUrl: string | undefined = process.env.NEXTAUTH_URL,
): string {
  return absolute(issueHref({ connectionId, queue, groupKey }), publicUrl);
}

/** `/dlqs/<connection>/<queue>` under the console's public URL (NEXTAUTH_URL's origin), or relative when it is not set. */
export function dlqLink(
  connectionId: string,
  queue: string,
  publicUrl: string | undefined = process.env.NEXTAUTH_URL,
): string {
  return absolute(`/dlqs/${encodeURIComponent(connectionId)}/${encodeURIComponent(queue)}`, publicUrl);
}

function absolute(path: string, publicUrl: string | undefined): string {
  if (!publicUrl) return path;
  try {
    const origin = new URL(publicUrl).origin;
    return origin === "null" ? path : `${origin}${path}`;
  } catch {
    return path;
  }
}
