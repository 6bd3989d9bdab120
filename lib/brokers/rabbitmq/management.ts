/**
 * Minimal client for the RabbitMQ management HTTP API: the calls discovery and queue facts need.
 * Failures are typed so the adapter can degrade (configured DLQs still served, with a warning).
 */
export interface MgmtQueue {
  name: string;
  vhost: string;
  type?: string; // classic | quorum | stream
  arguments?: Record<string, unknown>;
  effective_policy_definition?: Record<string, unknown> | unknown[];
  policy?: string | null;
  messages?: number;
  messages_ready?: number;
  messages_unacknowledged?: number;
  consumers?: number;
}

export interface MgmtBinding {
  source: string;
  destination: string;
  destination_type: "queue" | "exchange";
  routing_key: string;
  arguments?: Record<string, unknown>;
}

export interface MgmtExchange {
  name: string;
  type: string;
}

export class ManagementError extends Error {
  constructor(
    readonly kind: "unreachable" | "auth" | "not_found" | "protocol",
    message: string,
  ) {
    super(message);
    this.name = "ManagementError";
  }
}

export class ManagementClient {
  private readonly auth: string;
  constructor(
    private readonly baseUrl: string,
    username: string,
    password: string,
    private readonly timeoutMs = 5000,
  ) {
    this.auth = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
  }

  private async get<T>(path: string): Promise<T> {
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl.endsWith("/") ? this.baseUrl : `${this.baseUrl}/`), {
        headers: { authorization: this.auth, accept: "application/json" },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new ManagementError("unreachable", `management API at ${this.baseUrl} did not answer: ${(e as Error).message}`);
    }
    if (res.status === 401 || res.status === 403) throw new ManagementError("auth", `management API refused the credentials (${res.status})`);
    if (res.status === 404) throw new ManagementError("not_found", `management API: ${path} not found`);
    if (!res.ok) throw new ManagementError("protocol", `management API answered ${res.status} for ${path}`);
    return (await res.json()) as T;
  }

  /** The broker's version ("3.10.8", "4.0.5"): it decides whether quorum queues have a default delivery limit. */
  async brokerVersion(): Promise<string | null> {
    const o = await this.get<{ rabbitmq_version?: unknown }>("api/overview?columns=rabbitmq_version");
    return typeof o.rabbitmq_version === "string" ? o.rabbitmq_version : null;
  }

  listQueues(vhost: string): Promise<MgmtQueue[]> {
    const cols = "name,vhost,type,arguments,effective_policy_definition,policy,messages,messages_ready,messages_unacknowledged,consumers";
    return this.get(`api/queues/${encodeURIComponent(vhost)}?columns=${cols}`);
  }

  getQueue(vhost: string, name: string): Promise<MgmtQueue> {
    return this.get(`api/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(name)}?msg_rates=false`);
  }

  listBindings(vhost: string): Promise<MgmtBinding[]> {
    return this.get(`api/bindings/${encodeURIComponent(vhost)}`);
  }

  listExchanges(vhost: string): Promise<MgmtExchange[]> {
    return this.get(`api/exchanges/${encodeURIComponent(vhost)}?columns=name,type`);
  }
}
