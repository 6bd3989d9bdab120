/**
 * One lazily opened AMQP connection per adapter. It is reopened on the next use after RabbitMQ
 * closes it (restart, network), and every connection and channel has an 'error' listener so a
 * broker going away never becomes an unhandled 'error' event that kills the process.
 */
import amqp, { type Channel, type ChannelModel } from "amqplib";
import { BrokerError } from "@/lib/brokers/contract/errors";
import { installRawHeaderHook } from "@/lib/brokers/rabbitmq/raw-headers";
import { installBatchedWrites } from "@/lib/brokers/rabbitmq/raw-publish";

export interface AmqpEndpoint {
  url: string; // without credentials
  username: string;
  password: string;
  connectTimeoutMs?: number;
}

export function vhostOf(url: string): string {
  const p = new URL(url).pathname;
  return p && p !== "/" ? decodeURIComponent(p.slice(1)) : "/";
}

function describeEndpoint(url: string) {
  const u = new URL(url);
  return `${u.hostname}:${u.port || (u.protocol === "amqps:" ? 5671 : 5672)}`;
}

type AmqpFailure = { code?: number | string; message?: string } | undefined;

/** 405 RESOURCE_LOCKED: another connection holds this exclusive queue (the read lock's "busy"). */
export function isResourceLocked(e: unknown): boolean {
  const err = e as AmqpFailure;
  return err?.code === 405 || /RESOURCE.LOCKED/.test(err?.message ?? "");
}

/** 403 ACCESS_REFUSED and its kin: the user lacks a permission on this resource or vhost. */
export function isAccessRefused(e: unknown): boolean {
  const err = e as AmqpFailure;
  return err?.code === 403 || /ACCESS.REFUSED|NOT_ALLOWED|access to vhost/.test(err?.message ?? "");
}

/** Maps amqplib and socket errors to typed broker errors with an operator-facing message. */
export function mapAmqpError(e: unknown, ctx: { endpoint: string; queue?: string }): BrokerError {
  if (e instanceof BrokerError) return e;
  const err = e as { code?: number | string; message?: string };
  const msg = err?.message ?? String(e);
  if (err?.code === 404 || /NOT.FOUND - no queue/.test(msg)) {
    return new BrokerError("not_found", {
      message: msg,
      cause: e,
      userMessage: `Queue "${ctx.queue ?? "?"}" does not exist on RabbitMQ at ${ctx.endpoint}. It may have been deleted.`,
    });
  }
  if (/exclusive use/.test(msg)) {
    return new BrokerError("throttled", {
      message: msg,
      cause: e,
      userMessage: `Queue "${ctx.queue ?? "?"}" is being read by another consumer right now. Try again in a moment.`,
    });
  }
  if (isAccessRefused(e)) {
    return new BrokerError("auth", {
      message: msg,
      cause: e,
      userMessage: `RabbitMQ at ${ctx.endpoint} refused the console's credentials or vhost. Check the user, password and vhost in the connection settings.`,
    });
  }
  if (
    typeof err?.code === "string" ||
    /ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|ECONNRESET|Socket closed|Connection closed|Channel closed|Channel ended|connect timeout|IllegalOperationError/i.test(
      msg,
    )
  ) {
    return new BrokerError("unreachable", {
      message: msg,
      cause: e,
      userMessage: `RabbitMQ at ${ctx.endpoint} cannot be reached. Check that the broker is running; the console reconnects by itself when it is back.`,
    });
  }
  return new BrokerError("protocol", {
    message: msg,
    cause: e,
    userMessage: `RabbitMQ at ${ctx.endpoint} answered unexpectedly. The error was logged.`,
  });
}

export class AmqpConnection {
  private model: ChannelModel | null = null;
  private opening: Promise<ChannelModel> | null = null;
  private closed = false;
  readonly endpoint: string;

  constructor(private readonly ep: AmqpEndpoint) {
    this.endpoint = describeEndpoint(ep.url);
  }

  private urlWithCredentials(): string {
    const u = new URL(this.ep.url);
    u.username = encodeURIComponent(this.ep.username);
    u.password = encodeURIComponent(this.ep.password);
    return u.toString();
  }

  async get(): Promise<ChannelModel> {
    if (this.closed)
      throw new BrokerError("unreachable", { userMessage: "The connection to RabbitMQ was closed by the console." });
    if (this.model) return this.model;
    this.opening ??= this.open().finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  private async open(): Promise<ChannelModel> {
    let model: ChannelModel;
    try {
      model = await amqp.connect(this.urlWithCredentials(), {
        timeout: this.ep.connectTimeoutMs ?? 5000,
        clientProperties: { connection_name: "dlq-console" },
      });
    } catch (e) {
      throw mapAmqpError(e, { endpoint: this.endpoint });
    }
    model.on("error", () => {
      // Reported through 'close'; the next use reconnects.
    });
    model.on("close", () => {
      if (this.model === model) this.model = null;
    });
    installRawHeaderHook(model);
    installBatchedWrites(model);
    this.model = model;
    return model;
  }

  /** A fresh channel; a channel-level failure (404, 403) closes only this channel. */
  async channel(): Promise<Channel> {
    for (let attempt = 0; ; attempt++) {
      const model = await this.get();
      try {
        const ch = await model.createChannel();
        ch.on("error", () => {
          // Channel errors surface as rejected operations.
        });
        return ch;
      } catch (e) {
        // The connection died between get() and createChannel(): retry once on a new one.
        if (this.model === model) this.model = null;
        if (attempt >= 1) throw mapAmqpError(e, { endpoint: this.endpoint });
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const m = this.model ?? (this.opening ? await this.opening.catch(() => null) : null);
    this.model = null;
    if (m) await m.close().catch(() => undefined);
  }
}

/**
 * Closes a channel and never throws. Also returns when the channel closes any other way: amqplib
 * leaves close()'s promise pending for ever when the connection dies before the broker's
 * close-ok, and a channel closed by the broker or with its connection has its unacked letters
 * back in the queue anyway.
 */
export async function closeQuietly(ch: Channel | null | undefined): Promise<void> {
  if (!ch) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      ch.off("close", done);
      resolve();
    };
    ch.once("close", done);
    ch.close().then(done, done);
  });
}
