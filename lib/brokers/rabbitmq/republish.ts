/**
 * Undo of a discard on RabbitMQ (`BrokerAdapter.republish`): each archived letter is published
 * into the DLQ it was discarded from, through the default exchange (routing key = the DLQ's name),
 * with mandatory and publisher confirms, its body and basic.properties byte for byte as they were
 * delivered (message id, correlation id, every header including x-death), except delivery-mode,
 * which is set to 2 (persistent) so the restored letter survives a broker restart. Its letter id
 * (message id, or the content fingerprint) is therefore the same as before. A letter's position is
 * not kept: it goes to the tail of the DLQ.
 */
import type { ConfirmChannel, ConsumeMessage } from "amqplib";
import { BrokerError } from "@/lib/brokers/contract/errors";
import type { RepublishOptions, RepublishRequest, RepublishResult } from "@/lib/brokers/contract/remove";
import { openEach, republishFailed as failed, unb64 } from "@/lib/brokers/envelope";
import { closeQuietly, mapAmqpError } from "@/lib/brokers/rabbitmq/connection";
import { rawPropertiesOf } from "@/lib/brokers/rabbitmq/raw-headers";
import { parseProperties, userIdRefusal, withPersistentDelivery } from "@/lib/brokers/rabbitmq/amqp-properties";
import { installRawPublish, publishRaw } from "@/lib/brokers/rabbitmq/raw-publish";
import type { RabbitEnvelope } from "@/lib/brokers/rabbitmq/mover";
import type { MoverContext } from "@/lib/brokers/rabbitmq/walk";

interface Pending {
  req: RepublishRequest;
  content: Buffer;
  props: Buffer;
  returned: string | null;
  settled: Promise<string | null>; // null: confirmed
}

export async function* republishRabbit(
  ctx: MoverContext,
  dlq: string,
  requests: RepublishRequest[],
  opts: RepublishOptions = {},
): AsyncGenerator<RepublishResult> {
  await ctx.describe(dlq); // not_found before anything is published
  let ch: ConfirmChannel;
  try {
    ch = await ctx.confirmChannel();
  } catch (e) {
    throw mapAmqpError(e, { endpoint: ctx.endpoint, queue: dlq });
  }
  if (!installRawPublish(ch)) {
    await closeQuietly(ch);
    throw new BrokerError("protocol", {
      userMessage:
        "The console's RabbitMQ client library changed shape: letters cannot be republished byte-exact, so nothing was published.",
    });
  }
  const inflight: Pending[] = [];
  // A basic.return precedes the confirm of the same publish: match it to the in-flight publish with these exact bytes.
  const onReturn = (m: ConsumeMessage) => {
    const raw = rawPropertiesOf(m.properties);
    const f = m.fields as unknown as { replyCode?: number; replyText?: string };
    const hit = inflight.find(
      (p) => p.returned === null && p.content.equals(m.content) && (!raw || raw.equals(p.props)),
    );
    if (hit)
      hit.returned = `RabbitMQ returned it as unroutable (${f.replyCode ?? "?"} ${f.replyText ?? ""}): queue "${dlq}" is not there to take it. It is still in the archive.`;
  };
  ch.on("return", onReturn);
  let channelError: unknown = null;
  ch.on("error", (e: unknown) => {
    channelError ??= e;
  });
  const maxInFlight = Math.max(1, ctx.maxInFlight ?? 64);
  const settle = async (p: Pending): Promise<RepublishResult> => {
    const reason = await p.settled;
    if (reason) return failed(p.req, reason);
    return { id: p.req.id, outcome: "published", how: "published", letterId: null, reason: null };
  };
  try {
    for (const o of openEach<RabbitEnvelope>("rabbitmq", requests, opts.signal)) {
      if (channelError) break;
      while (inflight.length >= maxInFlight) yield await settle(inflight.shift()!);
      if ("failed" in o) {
        yield o.failed;
        continue;
      }
      const { req, env } = o;
      let props: Buffer;
      try {
        const raw = unb64(env.properties);
        const refused = userIdRefusal(parseProperties(raw), ctx.username);
        if (refused) {
          yield failed(req, `${refused} It was not published and is still in the archive.`);
          continue;
        }
        props = withPersistentDelivery(raw);
      } catch (e) {
        yield failed(
          req,
          `The archived properties cannot be published (${(e as Error).message}). It is still in the archive.`,
        );
        continue;
      }
      const content = Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength);
      const p: Pending = { req, content, props, returned: null, settled: Promise.resolve(null) };
      p.settled = new Promise<string | null>((resolve) => {
        try {
          publishRaw(ch, "", dlq, content, props, (err) => {
            if (err)
              resolve(`RabbitMQ did not confirm it (${(err as Error).message ?? err}). It is still in the archive.`);
            else resolve(p.returned);
          });
        } catch (e) {
          resolve(`It could not be published: ${(e as Error).message}. It is still in the archive.`);
        }
      });
      inflight.push(p);
    }
    while (inflight.length > 0) yield await settle(inflight.shift()!);
    if (channelError) throw mapAmqpError(channelError, { endpoint: ctx.endpoint, queue: dlq });
  } finally {
    ch.off("return", onReturn);
    await closeQuietly(ch);
  }
}
