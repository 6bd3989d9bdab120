import { describe, expect, it } from "vitest";
import { auditFields } from "./batch";

describe("auditFields", () => {
  const entry = { action: "discard.start", outcome: "success" as const, details: { jobId: "j1" } };

  it("names the API token a row was written for, whichever use case wrote it", () => {
    const f = auditFields({
      ...entry,
      actor: { id: "u1", email: "Ops@Example.test", role: "operator", tokenId: "t-123" },
    });
    expect(f.details).toEqual({ jobId: "j1", tokenId: "t-123" });
    expect(f.actorEmail).toBe("ops@example.test");
  });

  it("adds nothing for a browser session", () => {
    expect(auditFields({ ...entry, actor: { id: "u1", email: "ops@example.test", role: "operator" } }).details).toEqual(
      { jobId: "j1" },
    );
  });
});
