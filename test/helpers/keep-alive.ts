import http from 'node:http';
import type { Socket } from 'node:net';

export interface KeepAliveResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One keep-alive connection, as a polling client holds it: every request goes over the same socket,
 * each sent when the previous answer has arrived. `sockets` counts the sockets used (1 when the
 * connection was kept throughout).
 */
export class KeepAliveConnection {
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  readonly sockets = new Set<Socket>();

  constructor(
    readonly baseUrl: string,
    readonly headers: Record<string, string> = {},
  ) {}

  get(path: string, headers: Record<string, string> = {}): Promise<KeepAliveResponse> {
    return new Promise((resolve, reject) => {
      const req = http.request(this.baseUrl + path, { agent: this.#agent, headers: { ...this.headers, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('socket', (socket) => this.sockets.add(socket));
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
