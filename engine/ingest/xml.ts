/**
 * The streaming XML layer of the GPX and TCX readers (engine/ingest/gpx.ts, engine/ingest/tcx.ts):
 * a file's bytes → open/close events with local names, its attributes and each element's own text.
 * No tree is built: a reader keeps the one point it is reading.
 *
 * The parser is saxes (a non-validating SAX parser in pure JavaScript), chosen because it is safe by
 * construction against the XML attacks on parsers that process a DTD:
 *   - it does not process the document type declaration: a `<!DOCTYPE …>` is skipped as text and
 *     entities it declares are never defined, so it never expands a user-defined entity (no
 *     "billion laughs": `&lol9;` is an undefined entity, an error at once) and never fetches or reads
 *     an external entity (no XXE: it has no file or network access at all);
 *   - only the five predefined entities (`&amp;` …) and character references are expanded.
 * On top of that this layer refuses any DOCTYPE outright (`invalid_xml`: GPX and TCX files have none),
 * and caps what a file can make it hold:
 *   - MAX_XML_DEPTH nested elements (the deepest real GPX/TCX value lies 10 levels down: a TCX
 *     MultiSportSession leg's TPX Speed): deeper is `xml_too_deep`, found as the element opens;
 *   - MAX_ELEMENT_TEXT characters kept of one element's text (a value is a number, a time or a name;
 *     the rest is counted, not kept) and MAX_XML_TEXT characters of text in the whole file
 *     (`xml_too_large`); the number of points is capped by the readers (limits.ts MAX_RECORDS).
 *
 * Namespaces are not resolved (saxes runs with `xmlns: false`): elements and attributes are matched
 * by their local name, the part after any prefix, so `gpxtpx:hr`, `ns3:hr` and a bare `hr` are one
 * element. The readers match them only under the parents they know (a trkpt's `extensions`, a TCX
 * trackpoint's `Extensions`), so a same-named element elsewhere is not taken for them.
 *
 * The bytes are decoded as UTF-8 (a BOM is dropped), the encoding of every GPX and TCX producer
 * known; the values read are ASCII either way. Malformed XML (unclosed or mismatched tags, text
 * after the root, an undefined entity) is `invalid_xml`, naming the line and column.
 */
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { IngestError } from './recording.ts';

export const MAX_XML_DEPTH = 32;
export const MAX_ELEMENT_TEXT = 1024;
export const MAX_XML_TEXT = 64 * 1024 * 1024;
const CHUNK = 256 * 1024;
const NO_ATTRIBUTES: Readonly<Record<string, string>> = Object.freeze({});

export interface XmlHandler {
  /** An element opens: its local name, its attributes by local name; `path` holds the local names of its ancestors and itself. */
  open(name: string, attributes: Readonly<Record<string, string>>, path: readonly string[]): void;
  /** An element closes: its local name, its own text (trimmed; only text directly inside it, at most MAX_ELEMENT_TEXT characters); `path` as at its opening. */
  close(name: string, text: string, path: readonly string[]): void;
}

/** The local part of a qualified name: `gpxtpx:hr` → `hr`. */
export function localName(qualified: string): string {
  const colon = qualified.indexOf(':');
  return colon < 0 ? qualified : qualified.slice(colon + 1);
}

/** The name of the root element of XML text (after an XML declaration, comments, processing instructions), or undefined. */
export function rootElement(text: string): string | undefined {
  const rest = text.replace(/^\uFEFF/, '').replace(/^(?:\s+|<\?[\s\S]*?\?>|<!--[\s\S]*?-->)*/, '');
  const m = /^<([A-Za-z_][\w.:-]*)/.exec(rest);
  return m ? localName(m[1]!) : undefined;
}

/** Read the whole of `bytes` as XML, calling `handler` for each element; throws IngestError (invalid_xml, xml_too_deep, xml_too_large). */
export function readXml(bytes: Uint8Array, handler: XmlHandler): void {
  const parser = new SaxesParser({ xmlns: false, position: true });
  const path: string[] = [];
  let text = '';
  let textLength = 0;
  let total = 0;
  let failure: IngestError | undefined;
  const stop = (error: IngestError) => {
    failure ??= error;
    throw failure;
  };
  parser.on('error', (error) => stop(new IngestError('invalid_xml', `The XML is malformed: ${error.message}`)));
  parser.on('doctype', () =>
    stop(
      new IngestError(
        'invalid_xml',
        'The XML has a document type declaration (<!DOCTYPE …>): it is not processed, and GPX and TCX files have none.',
      ),
    ),
  );
  parser.on('opentag', (tag: SaxesTagPlain) => {
    if (path.length >= MAX_XML_DEPTH)
      stop(new IngestError('xml_too_deep', `The XML nests elements more than ${MAX_XML_DEPTH} levels deep (line ${parser.line}).`));
    const name = localName(tag.name);
    path.push(name);
    text = '';
    textLength = 0;
    let attributes: Record<string, string> = NO_ATTRIBUTES;
    for (const key in tag.attributes) {
      if (attributes === NO_ATTRIBUTES) attributes = {};
      attributes[localName(key)] = tag.attributes[key]!;
    }
    handler.open(name, attributes, path); // (a self-closing element's closetag follows at once)
  });
  parser.on('text', (chunk: string) => {
    total += chunk.length;
    if (total > MAX_XML_TEXT)
      stop(new IngestError('xml_too_large', `The XML holds more than ${MAX_XML_TEXT.toLocaleString('en-US')} characters of text.`));
    if (textLength === 0) text = chunk.length <= MAX_ELEMENT_TEXT ? chunk : chunk.slice(0, MAX_ELEMENT_TEXT);
    else if (textLength < MAX_ELEMENT_TEXT) text += chunk.slice(0, MAX_ELEMENT_TEXT - textLength);
    textLength += chunk.length;
  });
  parser.on('closetag', (tag: SaxesTagPlain) => {
    const name = localName(tag.name);
    handler.close(name, text.trim(), path);
    path.pop();
    text = '';
    textLength = 0;
  });
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });
  try {
    for (let at = 0; at < bytes.byteLength; at += CHUNK) {
      parser.write(decoder.decode(bytes.subarray(at, at + CHUNK), { stream: true }));
    }
    parser.write(decoder.decode());
    parser.close();
  } catch (error) {
    throw failure ?? error; // a reader's own IngestError, or a bug
  }
}
