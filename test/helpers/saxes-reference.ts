import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { localName, MAX_ELEMENT_TEXT } from '../../engine/ingest/xml.ts';

/**
 * The reference for engine/ingest/xml.ts: the same events (open with local names and attributes,
 * close with the element's own text, trimmed and capped) from saxes, a conforming XML parser we did
 * not write. `events` lists them as strings; a document saxes refuses is `{ error }`.
 */
export function saxesEvents(text: string): { events: string[] } | { error: string } {
  const parser = new SaxesParser({ xmlns: false, position: true });
  const events: string[] = [];
  const path: string[] = [];
  let own = '';
  let length = 0;
  let failure: string | undefined;
  parser.on('error', (e) => {
    failure ??= e.message;
    throw e;
  });
  parser.on('doctype', () => {
    failure ??= 'doctype';
    throw new Error('doctype');
  });
  parser.on('opentag', (tag: SaxesTagPlain) => {
    const name = localName(tag.name);
    path.push(name);
    own = '';
    length = 0;
    const attributes = Object.entries(tag.attributes).map(([k, v]) => `${localName(k)}=${JSON.stringify(v)}`);
    events.push(`open ${path.join('/')} ${attributes.join(' ')}`);
  });
  parser.on('text', (chunk: string) => {
    if (length < MAX_ELEMENT_TEXT) own += chunk.slice(0, MAX_ELEMENT_TEXT - length);
    length += chunk.length;
  });
  parser.on('cdata', (chunk: string) => {
    if (length < MAX_ELEMENT_TEXT) own += chunk.slice(0, MAX_ELEMENT_TEXT - length);
    length += chunk.length;
  });
  parser.on('closetag', (tag: SaxesTagPlain) => {
    events.push(`close ${path.join('/')} ${JSON.stringify(own.trim())}`);
    void tag;
    path.pop();
    own = '';
    length = 0;
  });
  try {
    parser.write(text.replace(/^\uFEFF/, ''));
    parser.close();
  } catch (e) {
    return { error: failure ?? (e as Error).message };
  }
  return { events };
}
