/**
 * FIT files written byte by byte, for the shapes the SDK's encoder never writes: big-endian
 * definitions, developer fields, compressed timestamps, 12-byte headers. Its CRC is this file's own
 * (the FIT SDK's nibble table), independent of the product's.
 */
export class FitWriter {
  private readonly bytes: number[] = [];
  define(
    local: number,
    global: number,
    fields: [num: number, size: number, base: number][],
    opts: { bigEndian?: boolean; developer?: [num: number, size: number, index: number][] } = {},
  ) {
    const dev = opts.developer;
    this.bytes.push(0x40 | (dev ? 0x20 : 0) | local, 0, opts.bigEndian ? 1 : 0);
    this.bytes.push(...(opts.bigEndian ? [global >> 8, global & 0xff] : [global & 0xff, global >> 8]));
    this.bytes.push(fields.length, ...fields.flat());
    if (dev) this.bytes.push(dev.length, ...dev.flat());
    return this;
  }
  data(local: number, ...payload: number[]) {
    this.bytes.push(local, ...payload);
    return this;
  }
  compressed(local: number, offset: number, ...payload: number[]) {
    this.bytes.push(0x80 | (local << 5) | (offset & 0x1f), ...payload);
    return this;
  }
  finish(headerSize: 12 | 14 = 14): Uint8Array {
    const out = new Uint8Array(headerSize + this.bytes.length + 2);
    const view = new DataView(out.buffer);
    out[0] = headerSize;
    out[1] = 0x20;
    view.setUint16(2, 2132, true);
    view.setUint32(4, this.bytes.length, true);
    out.set([0x2e, 0x46, 0x49, 0x54], 8);
    if (headerSize === 14) view.setUint16(12, crc(out, 0, 12), true);
    out.set(this.bytes, headerSize);
    view.setUint16(headerSize + this.bytes.length, crc(out, 0, headerSize + this.bytes.length), true);
    return out;
  }
}
export function crc(buf: Uint8Array, start: number, end: number): number {
  const table = [
    0x0000, 0xcc01, 0xd801, 0x1400, 0xf001, 0x3c00, 0x2800, 0xe401, 0xa001, 0x6c00, 0x7800, 0xb401, 0x5000, 0x9c01, 0x8801, 0x4400,
  ];
  let c = 0;
  for (let i = start; i < end; i++) {
    for (const nibble of [buf[i]! & 0xf, buf[i]! >> 4]) {
      const tmp = table[c & 0xf]!;
      c = ((c >> 4) & 0x0fff) ^ tmp ^ table[nibble]!;
    }
  }
  return c;
}
