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
    return this.request('GET', path, { headers });
  }

  /**
   * Send a request on the connection. `body` is sent with a Content-Length (unless `headers` set
   * one); `chunks` are sent chunked, one write each. The answer is read even when it arrives before
   * the body was all sent, as a server that refuses early answers.
   */
  request(
    method: string,
    path: string,
    opts: { headers?: Record<string, string>; body?: Uint8Array; chunks?: Uint8Array[] } = {},
  ): Promise<KeepAliveResponse> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...this.headers, ...opts.headers };
      if (opts.body && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length'))
        headers['content-length'] = String(opts.body.length);
      const req = http.request(this.baseUrl + path, { method, agent: this.#agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('socket', (socket) => this.sockets.add(socket));
      req.on('error', reject);
      if (opts.body) req.write(opts.body);
      for (const chunk of opts.chunks ?? []) req.write(chunk);
      req.end();
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
