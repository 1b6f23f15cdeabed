import type { Socket } from 'node:net';

/** Node's default limit on a request's line and headers together (`--max-http-header-size`). */
const HEADER_LIMIT_BYTES = 16 * 1024;

/**
 * What a request Node's HTTP parser refuses (before any route sees it) is answered: a JSON body with a
 * `detail` saying what was wrong, as every other 4xx, instead of Node's bare status line. A URL or a
 * header over the limit is 431 (RFC 6585), a request that is not HTTP/1.1 is 400, one whose headers
 * did not arrive in time is 408. The connection is closed after the answer: the parser cannot tell
 * where the next request on it would begin.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, detail] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          `the request line and headers are over ${HEADER_LIMIT_BYTES / 1024} KiB together: shorten the URL (send fewer or shorter query parameters) or the headers`,
        ]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'the request line and headers did not arrive in time']
        : [400, 'Bad Request', `the request is not valid HTTP/1.1 (${err.code ?? 'parse error'})`];
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
}
