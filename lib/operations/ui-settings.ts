import "server-only";
import { loadConfig } from "@/lib/config";

/** The sampler settings pages show figures with (no secrets): when "lost in" is urgent, how often figures refresh. */
export function operationsDisplaySettings(): { deadlineWarnHours: number; sampleIntervalSeconds: number } {
  const { deadlineWarnHours, sampleIntervalSeconds } = loadConfig().operations;
  return { deadlineWarnHours, sampleIntervalSeconds };
}

/** Configured connections by id and name, for filters (no URLs, no credentials). */
export function connectionChoices(): Array<{ id: string; name: string }> {
  return loadConfig().connections.map((c) => ({ id: c.id, name: c.name ?? c.id }));
}
