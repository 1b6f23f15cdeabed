import http from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

const APP_JS = readFileSync(new URL('./spa/app.js', import.meta.url));

export interface SpaServer {
  /** The SPA's origin, e.g. http://127.0.0.1:40123: another port than the service, so another origin. */
  origin: string;
  /** Where the service sends the user back (register it as the application's redirect URI). */
  redirectUri: string;
  /** Set once the application is registered: the page hands it to the script. */
  clientId: string;
  close(): Promise<void>;
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * A tiny static host for the single-page app in `spa/app.js`: `/` (a Connect button) and `/callback`
 * serve the same page, `/app.js` its script. Its own Content-Security-Policy allows scripts from
 * itself only and fetches to the service only, as a real deployment of such an app would.
 */
export async function startSpaServer(serviceUrl: string): Promise<SpaServer> {
  const spa = { clientId: '' } as SpaServer;
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      return res.end(APP_JS);
    }
    if (path !== '/' && path !== '/callback') {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; script-src 'self'; connect-src ${new URL(serviceUrl).origin}; base-uri 'none'; form-action 'none'`,
    });
    res.end(`<!doctype html>
<html><head><meta charset="utf-8"><title>Ride viewer</title>
<meta name="service" content="${escapeAttr(serviceUrl)}"><meta name="client-id" content="${escapeAttr(spa.clientId)}">
<script src="/app.js" defer></script></head>
<body><h1>Ride viewer</h1><button id="connect" type="button">Connect your training data</button><pre id="state"></pre></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  spa.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  spa.redirectUri = `${spa.origin}/callback`;
  spa.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return spa;
}
