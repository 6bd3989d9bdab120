/**
 * A producer on one Pulsar topic through the WebSocket API: several messages may be in flight at
 * once (each confirmation is matched to its message by the frame's context); Pulsar stores one
 * producer's messages in the order sent.
 */
import { BrokerError } from "@/lib/brokers/contract/errors";
import { b64 } from "@/lib/brokers/envelope";
import { PulsarSocket, shortName, topicPath, type PulsarEndpoint, type TopicName } from "@/lib/brokers/pulsar/client";

/** One message to publish: the payload as read, never re-serialised. */
export interface OutgoingMessage {
  payload: Uint8Array;
  properties: Record<string, string>;
  key: string | null;
  eventTime: string | null;
}

export class Producer {
  private seq = 0;
  private readonly waiting = new Map<
    string,
    { resolve: (id: string) => void; reject: (e: BrokerError) => void; timer: NodeJS.Timeout }
  >();
  private pumping = false;
  private constructor(
    private readonly socket: PulsarSocket,
    private readonly ep: PulsarEndpoint,
  ) {}

  static async open(ep: PulsarEndpoint, t: TopicName): Promise<Producer> {
    return new Producer(
      await PulsarSocket.open(
        ep,
        `producer/persistent/${topicPath(t)}?sendTimeoutMillis=${ep.timeoutMs}`,
        `publish to topic ${shortName(t)}`,
      ),
      ep,
    );
  }

  /** The new message's id (WebSocket form) once Pulsar confirmed it was stored; rejects with a BrokerError when refused or unconfirmed. */
  send(msg: OutgoingMessage): Promise<string> {
    const context = String(++this.seq);
    const confirmed = new Promise<string>((resolve, reject) => {
      const limit = this.ep.timeoutMs + 5000;
      const timer = setTimeout(() => {
        this.waiting.delete(context);
        reject(
          new BrokerError("unreachable", {
            userMessage: `Pulsar did not confirm the copy within ${Math.round(limit / 1000)} s; it may or may not have been stored. The letter stays in the DLQ.`,
          }),
        );
      }, limit);
      this.waiting.set(context, { resolve, reject, timer });
    });
    try {
      this.socket.send({
        payload: b64(msg.payload),
        properties: msg.properties,
        context,
        ...(msg.key !== null ? { key: msg.key } : {}),
        ...(msg.eventTime ? { eventTime: msg.eventTime } : {}),
      });
    } catch (e) {
      this.settle(context, e instanceof BrokerError ? e : this.socket.closedError());
    }
    void this.pump();
    return confirmed;
  }

  private settle(context: string, outcome: string | BrokerError): void {
    const w = this.waiting.get(context);
    if (!w) return;
    this.waiting.delete(context);
    clearTimeout(w.timer);
    if (typeof outcome === "string") w.resolve(outcome);
    else w.reject(outcome);
  }

  /** Reads confirmations while any message waits for one. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    while (this.waiting.size > 0) {
      const f = await this.socket.next(1000);
      if (!f) {
        if (this.socket.endedWith) for (const c of [...this.waiting.keys()]) this.settle(c, this.socket.closedError());
        continue;
      }
      const context = String(f.context ?? "");
      if (f.result === "ok" && typeof f.messageId === "string") this.settle(context, f.messageId);
      else
        this.settle(
          context,
          new BrokerError("bad_request", {
            message: JSON.stringify(f),
            userMessage: `Pulsar refused the copy (${String(f.result)}${f.errorMsg ? `: ${String(f.errorMsg).slice(0, 200)}` : ""}).`,
          }),
        );
    }
    this.pumping = false;
  }

  close() {
    return this.socket.close();
  }
}
