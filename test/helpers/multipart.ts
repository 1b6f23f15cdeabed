/** A multipart/form-data body written by hand, so a test controls each part's headers. */
export interface Part {
  name: string;
  /** A file part when given. */
  filename?: string;
  /** The part's Content-Type; none at all when omitted (what python `requests` sends for a file tuple without one). */
  type?: string;
  data: Uint8Array | string;
}

export function multipartBody(
  parts: Part[],
  boundary = `----test${Math.random().toString(16).slice(2)}`,
): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename !== undefined) head += `; filename="${part.filename}"`;
    head += '\r\n';
    if (part.type) head += `Content-Type: ${part.type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.from(part.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
