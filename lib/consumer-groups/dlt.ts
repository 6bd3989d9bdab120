import { globMatch } from "@/lib/glob";

/** Where a group's skipped records go when no `consumerGroups.dlts` entry names its group. */
export const DEFAULT_GROUP_DLT = "{topic}.DLT";

export interface GroupDltSettings {
  /** First entry whose `group` glob matches the group id wins; `{topic}` in `dlt` is the record's topic. */
  dlts: ReadonlyArray<{ group: string; dlt: string }>;
}

/**
 * The DLT a consumer group's skipped records of `topic` go to (lib/config.ts `consumerGroups.dlts`):
 * the first entry whose group glob matches `groupId` (the console's globs: `*` any run, `?` one
 * character, case-insensitive), with every `{topic}` replaced by `topic`; default "{topic}.DLT".
 */
export function dltNameFor(settings: GroupDltSettings | undefined, groupId: string, topic: string): string {
  const entry = settings?.dlts.find((e) => globMatch(e.group, groupId));
  return (entry?.dlt ?? DEFAULT_GROUP_DLT).replaceAll("{topic}", topic);
}
