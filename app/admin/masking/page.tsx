import type { Metadata } from "next";
import { MaskingEditor } from "@/components/masking/masking-editor";
import { Problem } from "@/components/ui/problem";
import { RelativeTime } from "@/components/ui/relative-time";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { asAppError } from "@/lib/dlq/app-error";
import { DETECTORS } from "@/lib/masking/types";
import { viewMaskingConfig } from "@/lib/masking/use-cases";

export const metadata: Metadata = { title: "Masking rules" };
export const dynamic = "force-dynamic";

export default async function MaskingPage() {
  const actor = await requirePageActor("/admin/masking");
  let data: Awaited<ReturnType<typeof viewMaskingConfig>>;
  try {
    data = await viewMaskingConfig(actor, await requestMeta());
  } catch (e) {
    const err = asAppError(e);
    if (err?.type !== "forbidden") throw e;
    return (
      <main className="page" data-testid="forbidden">
        <Problem title="403 · Only admins manage masking rules." back={{ href: "/", label: "← Back to the DLQs" }}>
          <p>{err.userMessage}</p>
        </Problem>
      </main>
    );
  }
  const { config, versions } = data;
  return (
    <main className="page">
      <div className="page-head">
        <h1>Masking rules</h1>
        <span className="meta">
          Applied on the server to payloads, headers, exception text and exports before they leave it; stored and redriven bytes are never changed.
          Admins see unmasked values only through an audited reveal.
          {config.updatedAt ? (
            <>
              {" "}
              Version {config.version}, <RelativeTime value={config.updatedAt} />
              {config.updatedBy ? ` by ${config.updatedBy}` : " (defaults)"}.
            </>
          ) : null}
        </span>
      </div>
      <MaskingEditor rules={config.rules} sensitive={config.sensitive} version={config.version} detectors={[...DETECTORS]} />
      <section className="card section" data-testid="masking-versions">
        <h2>Versions</h2>
        <table className="grid">
          <thead>
            <tr>
              <th>Version</th>
              <th>Rules</th>
              <th>Sensitive DLQs</th>
              <th>By</th>
              <th>When</th>
            </tr>
          </thead>
          <tbody>
            {versions.map((v) => (
              <tr key={v.version}>
                <td>{v.version}</td>
                <td>{v.rules}</td>
                <td>{v.sensitive}</td>
                <td>{v.by ?? <span className="muted">defaults</span>}</td>
                <td>
                  <RelativeTime value={v.at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </main>
  );
}
