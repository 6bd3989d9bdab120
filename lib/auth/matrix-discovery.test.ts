import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { discover, exportedNames, missingRows, staleRows, MATRIX } from "@/test/access-matrix";

/**
 * The matrix tests are only as good as their discovery: a route, action or page added without a
 * row must fail them. Checked on a scratch source tree.
 */
const root = mkdtempSync(path.join(tmpdir(), "matrix-discovery-"));
const put = (file: string, text: string) => {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), text);
};

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("discovery of routes, actions and pages", () => {
  put(
    "app/api/widgets/[id]/route.ts",
    `export const dynamic = "force-dynamic";\nexport async function GET() {}\nexport const DELETE = handler;\n`,
  );
  put(
    "app/api/auth/[...nextauth]/route.ts",
    `const handler = NextAuth(o);\nexport { handler as GET, handler as POST };\n`,
  );
  put(
    "app/widgets/actions.ts",
    `// comment first\n"use server";\n\nexport async function dropWidgetAction() {}\nexport const renameWidgetAction = async () => {};\n`,
  );
  put("app/widgets/page.tsx", `export default function Page() {}\n`);
  put(
    "components/widgets/inline.tsx",
    `export function Form() {\n  async function go() {\n    "use server";\n  }\n}\n`,
  );
  put("lib/widgets/use-cases.ts", `export async function notAnAction() {}\n`);
  const found = discover(root);

  it("finds each exported HTTP method of each route file", () => {
    expect(found.routes).toEqual(
      expect.arrayContaining([
        { file: "api/widgets/[id]/route.ts", method: "GET" },
        { file: "api/widgets/[id]/route.ts", method: "DELETE" },
        { file: "api/auth/[...nextauth]/route.ts", method: "GET" },
        { file: "api/auth/[...nextauth]/route.ts", method: "POST" },
      ]),
    );
    expect(found.routes).toHaveLength(4);
  });

  it('finds every export of a "use server" file, and only there', () => {
    expect(found.actions).toEqual([
      { file: "app/widgets/actions.ts", name: "dropWidgetAction" },
      { file: "app/widgets/actions.ts", name: "renameWidgetAction" },
    ]);
  });

  it("finds pages and flags inline server actions", () => {
    expect(found.pages).toEqual([{ file: "widgets/page.tsx" }]);
    expect(found.inlineActions).toEqual(["components/widgets/inline.tsx"]);
  });

  it("reports each of them as missing from the matrix", () => {
    const missing = missingRows(found, MATRIX);
    expect(missing).toContain("route DELETE app/api/widgets/[id]/route.ts");
    expect(missing).toContain("server action dropWidgetAction in app/widgets/actions.ts");
    expect(missing).toContain("page app/widgets/page.tsx");
    expect(missing.some((m) => m.includes("components/widgets/inline.tsx"))).toBe(true);
    // The real next-auth route has a row; in this scratch tree it is found and covered.
    expect(missing).not.toContain("route GET app/api/auth/[...nextauth]/route.ts");
    expect(staleRows(found, MATRIX).length).toBeGreaterThan(0);
  });

  it("reads export forms it cannot name as a failure, not as nothing", () => {
    expect(exportedNames(`export * from "./x";`)).toContain("*");
    expect(exportedNames(`export { a as GET, type B, c };`)).toEqual(["GET", "c"]);
  });
});
