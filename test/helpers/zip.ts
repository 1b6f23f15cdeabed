import { createRequire } from 'node:module';

// yazl ships no types; the little of it used here:
interface YazlZipFile {
  addBuffer(buffer: Buffer, name: string, options?: { compress?: boolean; mtime?: Date }): void;
  addEmptyDirectory(name: string, options?: { mtime?: Date }): void;
  end(): void;
  outputStream: NodeJS.ReadableStream;
}
const yazl = createRequire(import.meta.url)('yazl') as { ZipFile: new () => YazlZipFile };

/** A zip written by yazl (a real, independent writer). */
export async function yazlZip(
  files: { name: string; data: Buffer | Uint8Array; compress?: boolean }[],
  dirs: string[] = [],
): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const mtime = new Date('2024-01-01T00:00:00Z');
  for (const d of dirs) zip.addEmptyDirectory(d, { mtime });
  for (const f of files) zip.addBuffer(Buffer.from(f.data), f.name, { compress: f.compress ?? true, mtime });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
