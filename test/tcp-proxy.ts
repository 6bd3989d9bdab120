// A TCP proxy for tests that take a broker away without stopping it (others share it).
import net from "node:net";

/** A TCP proxy to a broker on loopback that can stop passing the broker's answers, drop everything, and come back on the same port. */
export class CuttableProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  /** Each broker-side socket and the console-side socket its bytes go to. */
  private readonly fromBroker = new Map<net.Socket, net.Socket>();
  port = 0;

  constructor(private readonly brokerPort: number) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const broker = net.connect(this.brokerPort, "127.0.0.1");
      for (const s of [client, broker]) {
        this.sockets.add(s);
        s.on("error", () => undefined);
        s.on("close", () => {
          this.sockets.delete(s);
          this.fromBroker.delete(s);
          client.destroy();
          broker.destroy();
        });
      }
      this.fromBroker.set(broker, client);
      client.pipe(broker);
      broker.pipe(client);
    });
    await new Promise<void>((resolve, reject) =>
      server.once("error", reject).listen(this.port, "127.0.0.1", () => resolve()),
    );
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** The broker's answers stop reaching the console; what the console sends still goes through. */
  freeze(): void {
    // Unpiped as well as paused: a pipe resumes its source whenever the destination drains.
    for (const [b, c] of this.fromBroker) {
      b.unpipe(c);
      b.pause();
    }
  }

  /**
   * What the console sends stops reaching the broker (held here, and lost at cut()): acks already
   * "sent" by the console never arrive, as when a connection breaks right after them.
   */
  holdRequests(): void {
    for (const [b, c] of this.fromBroker) {
      c.unpipe(b);
      c.pause();
    }
  }

  /** The broker's answers flow again (what was held back arrives first). */
  thaw(): void {
    for (const [b, c] of this.fromBroker) b.pipe(c);
  }

  /** Every connection reset; new ones refused until restore(). */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  restore(): Promise<void> {
    return this.start();
  }
}
