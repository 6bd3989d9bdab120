"use server";

import { revalidatePath } from "next/cache";
import type { ActionResult } from "@/lib/errors";
import { runAction } from "@/lib/use-case/run-action";
import {
  createAlertRule,
  deleteAlertRule,
  sendTestAlert,
  updateAlertRule,
  type AlertRuleView,
} from "@/lib/alerts/use-cases";

// The use cases authorize (ops:manage) before they validate anything, so a refused caller is
// refused and audited whatever it sent.

/** Creates an alert rule (admins). Audited `alert.rule_create`. */
export async function createAlertRuleAction(input: unknown): Promise<ActionResult<AlertRuleView>> {
  return runAction(
    (actor, meta) => createAlertRule(actor, meta, input as never),
    () => revalidatePath("/alerts"),
  );
}

/** Changes an alert rule (admins); an empty webhook URL keeps the saved one. Audited `alert.rule_update`. */
export async function updateAlertRuleAction(input: unknown): Promise<ActionResult<AlertRuleView>> {
  return runAction(
    (actor, meta) => updateAlertRule(actor, meta, input as never),
    (r) => {
      revalidatePath("/alerts");
      revalidatePath(`/alerts/${r.id}`);
    },
  );
}

/** Deletes an alert rule with its states and delivery log (admins). Audited `alert.rule_delete`. */
export async function deleteAlertRuleAction(input: unknown): Promise<ActionResult<{ id: string }>> {
  return runAction(
    (actor, meta) => deleteAlertRule(actor, meta, input as never),
    () => revalidatePath("/alerts"),
  );
}

/** Sends one test message to a rule's webhook now (admins). Audited `alert.test_send`. */
export async function sendTestAlertAction(
  input: unknown,
): Promise<ActionResult<{ delivered: boolean; statusCode: number | null; error: string | null }>> {
  return runAction(
    (actor, meta) => sendTestAlert(actor, meta, input as never),
    () => {
      const id = (input as { id?: unknown } | null)?.id;
      if (typeof id === "string") revalidatePath(`/alerts/${encodeURIComponent(id)}`);
    },
  );
}
