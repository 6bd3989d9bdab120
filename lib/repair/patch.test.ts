import { describe, expect, it } from "vitest";
import { patchWithoutValues } from "./patch";

describe("patchWithoutValues", () => {
  it("keeps a JSON Patch's operations and paths and hides every value it writes or tests", () => {
    const patch = {
      kind: "json-patch" as const,
      operations: [
        { op: "test", path: "/card/number", value: "4111111111111111" },
        { op: "replace", path: "/email", value: { to: "a@b.example" } },
        { op: "copy", from: "/a", path: "/b" },
        { op: "remove", path: "/c" },
      ],
    };
    expect(patchWithoutValues(patch)).toEqual({
      kind: "json-patch",
      operations: [
        { op: "test", path: "/card/number", value: "[hidden]" },
        { op: "replace", path: "/email", value: "[hidden]" },
        { op: "copy", from: "/a", path: "/b" },
        { op: "remove", path: "/c" },
      ],
    });
    expect(patch.operations[0].value).toBe("4111111111111111"); // the stored patch is untouched
  });

  it("keeps a merge patch's shape and removals and hides its values", () => {
    expect(
      patchWithoutValues({ kind: "merge-patch", patch: { customer: { email: "a@b.example", phone: null }, n: 3 } }),
    ).toEqual({ kind: "merge-patch", patch: { customer: { email: "[hidden]", phone: null }, n: "[hidden]" } });
  });
});
