import type { Metadata } from "next";
import { MaskingEditor } from "@/components/masking/masking-editor";
import { RelativeTime } from "@/components/ui/relative-time";
import { authorizePage } from "@/lib/auth/authorize-page";
import { requestMeta, requirePageActor } from "@/lib/auth/session";
import { DETECTORS } from "@/lib/masking/types";
import { viewMaskingConfig } from "@/lib/masking/use-cases";

export const metadata: Metadata = { title: "Masking rules" };
export const dynamic = "force-dynamic";

export default async function MaskingPage() {
  const actor = await requirePageActor("/admin/masking");
  // Before anything streams, so a refusal answers 403 (./forbidden.tsx); audited as masking.view.
  await authorizePage(actor, "masking:manage", { action: "masking.view", meta: await requestMeta() });
  const { config, versions } = await viewMaskingConfig(actor, await requestMeta());
  return (
    <main className="page">
      <div className="page-head">
        <h1>Masking rules</h1>
        <span className="meta">
          Applied on the server to payloads, headers, exception text and exports before they leave it; stored and
          redriven bytes are never changed. Admins see unmasked values only through an audited reveal.
          {config.updatedAt ? (
            <>
              {" "}
              Version {config.version}, <RelativeTime value={config.updatedAt} />
              {config.updatedBy ? ` by ${config.updatedBy}` : " (defaults)"}.
            </>
          ) : null}
        </span>
      </div>
      <MaskingEditor
        rules={config.rules}
        sensitive={config.sensitive}
        version={config.version}
        detectors={[...DETECTORS]}
      />
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
