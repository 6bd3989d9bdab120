import { describe, expect, it } from "vitest";
import { AUDIT_ACTIONS } from "@/lib/audit/actions";
import { auditCategoryOf, groupAuditActions, parseAuditCategories } from "./categories";

describe("audit categories", () => {
  it("puts sign-ins, letter views, payload reveals and lists under access", () => {
    for (const a of [
      "auth.sign_in",
      "auth.sign_in_failed",
      "auth.sign_out",
      "letter.view",
      "letter.payload_view",
      "letter.payload_download",
      "payload.reveal",
      "dlq.open",
      "dlq.list",
      "audit.view",
      "audit.export",
      "archive.view",
      "redrive.plan",
      "discard.plan",
      "ops.overview",
      "triage.search",
      "token.list_all",
      "user.list",
    ])
      expect([a, auditCategoryOf(a)]).toEqual([a, "access"]);
  });

  it("puts what changes letters or jobs under operations, and what changes the console under administration", () => {
    for (const a of [
      "redrive.start",
      "letter.redrive",
      "letter.discard",
      "discard.start",
      "letter.repair",
      "archive.restore",
      "triage.scan_start",
      "group.skip",
      "finding.acknowledge",
      "dlq.read_risky_confirmed",
      "job.failed",
    ])
      expect([a, auditCategoryOf(a)]).toEqual([a, "operations"]);
    for (const a of [
      "user.create",
      "user.set_password",
      "masking.save",
      "triage.rules_save",
      "alert.rule_create",
      "token.create",
      "audit.verify",
    ])
      expect([a, auditCategoryOf(a)]).toEqual([a, "administration"]);
  });

  it("never hides an action it does not know: it counts as an operation", () => {
    expect(auditCategoryOf("something.new")).toBe("operations");
  });

  it("gives every known action a category and groups them with their labels", () => {
    const groups = groupAuditActions(Object.keys(AUDIT_ACTIONS));
    expect(groups.map((g) => g.category)).toEqual(["operations", "administration", "access"]);
    expect(groups.flatMap((g) => g.actions)).toHaveLength(Object.keys(AUDIT_ACTIONS).length);
    expect(groups.find((g) => g.category === "access")!.actions).toContainEqual({
      action: "letter.view",
      label: "Viewed a letter",
    });
  });

  it("reads the categories of a URL, defaulting to operations and administration", () => {
    expect(parseAuditCategories(undefined)).toEqual(["operations", "administration"]);
    expect(parseAuditCategories("access")).toEqual(["access"]);
    expect(parseAuditCategories("all")).toBe("all");
    expect(parseAuditCategories("bogus")).toEqual(["operations", "administration"]);
  });
});
