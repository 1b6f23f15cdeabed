/**
 * The XML layer of the GPX and TCX readers (engine/ingest/gpx.ts, engine/ingest/tcx.ts): a file's
 * bytes → open/close events with local names, its attributes and each element's own text. No tree
 * is built: a reader keeps the one point it is reading.
 *
 * It is a small non-validating XML 1.0 parser of its own, written for the one shape these files have
 * (hundreds of thousands of short elements holding numbers), and safe by construction against the
 * attacks on parsers that process a DTD, because it processes none:
 *   - a document type declaration (`<!DOCTYPE …>`) is refused outright (`invalid_xml`: GPX and TCX
 *     files have none), so no entity a file declares is ever defined, let alone expanded (no "billion
 *     laughs"), and nothing outside the file is ever read or fetched (no XXE: this module has no file
 *     or network access at all);
 *   - only the five predefined entities (`&amp;` …) and character references are expanded; any other
 *     `&name;` is an undefined entity, `invalid_xml` at once.
 * It replaced saxes (a conforming SAX parser) when a CPU profile put saxes' character-by-character
 * tokenizer at nearly half of a TCX file's parse: this one finds markup with `indexOf`, compares a
 * closing tag with its opening one in place, and cuts an element's text out of the file only when the
 * element closes. What it checks is what a well-formed document needs and these files could get wrong:
 * tags that open and close in order, one root element and no text outside it, attribute syntax (quoted
 * values, no `<`, no attribute twice), entity and character references, comments, CDATA sections and
 * processing instructions closed, and no character XML forbids (NUL and the other C0 controls but
 * tab, line feed and carriage return; U+FFFE, U+FFFF), which would otherwise reach the database.
 *
 * Caps on what a file can make it hold:
 *   - MAX_XML_DEPTH nested elements (the deepest real GPX/TCX value lies 10 levels down: a TCX
 *     MultiSportSession leg's TPX Speed): deeper is `xml_too_deep`, found as the element opens;
 *   - MAX_ELEMENT_TEXT characters kept of one element's text (a value is a number, a time or a name;
 *     the rest is counted, not kept) and MAX_XML_TEXT characters of text in the whole file
 *     (`xml_too_large`), MAX_XML_BYTES bytes in all; the number of points is capped by the readers
 *     (limits.ts MAX_RECORDS).
 *
 * Namespaces are not resolved: elements and attributes are matched by their local name, the part
 * after any prefix, so `gpxtpx:hr`, `ns3:hr` and a bare `hr` are one element. The readers match them
 * only under the parents they know (a trkpt's `extensions`, a TCX trackpoint's `Extensions`), so a
 * same-named element elsewhere is not taken for them.
 *
 * The bytes are decoded as UTF-8 (a BOM is dropped), the encoding of every GPX and TCX producer
 * known; the values read are ASCII either way. Malformed XML is `invalid_xml`, naming the line and
 * column.
 */
import { IngestError } from './recording.ts';

export const MAX_XML_DEPTH = 32;
export const MAX_ELEMENT_TEXT = 1024;
export const MAX_XML_TEXT = 64 * 1024 * 1024;
export const MAX_XML_BYTES = 256 * 1024 * 1024;
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

/** Characters XML 1.0 does not allow anywhere in a document. */
const FORBIDDEN_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
const XML_DECLARATION =
  /^<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(["'])1\.[0-9]+\1(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(["'])[A-Za-z][A-Za-z0-9._-]*\2)?(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*(["'])(?:yes|no)\3)?[ \t\r\n]*\?>$/;
const PREDEFINED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** A name's first character: a letter, `_`, `:` or any character beyond ASCII (XML's NameStartChar, loosely). */
function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58 || c >= 0xc0;
}

/** A name's other characters: also digits, `-`, `.` and `·`. */
function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 0xb7;
}

/** An attribute value's literal tabs, line feeds and carriage returns as spaces. */
function spaced(value: string): string {
  return /[\t\n\r]/.test(value) ? value.replace(/[\t\n\r]/g, ' ') : value;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13;
}

/** Read the whole of `bytes` as XML, calling `handler` for each element; throws IngestError (invalid_xml, xml_too_deep, xml_too_large). */
export function readXml(bytes: Uint8Array, handler: XmlHandler): void {
  if (bytes.byteLength > MAX_XML_BYTES)
    throw new IngestError('xml_too_large', `The XML file is larger than ${MAX_XML_BYTES / 1024 / 1024} MiB.`);
  new XmlReader(new TextDecoder('utf-8').decode(bytes), handler).read();
}

class XmlReader {
  /** The qualified names of the open elements, and their local names (the handler's `path`). */
  private readonly open: string[] = [];
  private readonly path: string[] = [];
  private rootSeen = false;
  /** All the text read so far, for MAX_XML_TEXT. */
  private total = 0;
  /** The current element's text since its last tag: one run of the file [runStart, runEnd) until a second run or a reference makes it a string. */
  private runStart = 0;
  private runEnd = 0;
  private text: string | undefined;
  private textLength = 0;
  /** The next `&` and the next `]]>` at or after some position read (positions only grow, so each is searched for once). */
  private readonly next = { '&': -1, ']]>': -1 };

  constructor(
    private readonly s: string,
    private readonly handler: XmlHandler,
  ) {}

  read(): void {
    const { s } = this;
    const forbidden = s.search(FORBIDDEN_CHARACTER);
    if (forbidden >= 0)
      this.fail(`a character XML does not allow (U+${s.charCodeAt(forbidden).toString(16).toUpperCase().padStart(4, '0')})`, forbidden);
    const n = s.length;
    let i = 0;
    while (i < n) {
      const lt = s.indexOf('<', i);
      const end = lt < 0 ? n : lt;
      if (end > i) this.textRun(i, end);
      if (lt < 0) break;
      const c = s.charCodeAt(lt + 1);
      if (c === 47) i = this.closeTag(lt);
      else if (c === 33) i = this.declaration(lt);
      else if (c === 63) i = this.processingInstruction(lt);
      else i = this.openTag(lt);
    }
    if (this.open.length) this.fail(`the element <${this.open[this.open.length - 1]}> is not closed`, n);
    if (!this.rootSeen) this.fail('there is no root element', n);
  }

  private textRun(from: number, to: number): void {
    const { s } = this;
    this.total += to - from;
    if (this.total > MAX_XML_TEXT)
      throw new IngestError('xml_too_large', `The XML holds more than ${MAX_XML_TEXT.toLocaleString('en-US')} characters of text.`);
    if (this.open.length === 0) {
      for (let k = from; k < to; k++) if (!isSpace(s.charCodeAt(k))) this.fail('text outside the root element', k);
      return;
    }
    const cdataEnd = this.nextOf(']]>', from);
    if (cdataEnd + 2 < to) this.fail('"]]>" in text (it ends only a CDATA section)', cdataEnd);
    if (this.ampersandBefore(from, to)) this.addText(this.references(from, to));
    else if (this.textLength === 0) {
      this.runStart = from;
      this.runEnd = to;
      this.textLength = to - from;
    } else this.addText(s.slice(from, to));
  }

  /** Whether [from, to) holds a `&`. */
  private ampersandBefore(from: number, to: number): boolean {
    return this.nextOf('&', from) < to;
  }

  /** Where `marker` next occurs at or after `from` (Infinity: nowhere); `from` never goes back between calls. */
  private nextOf(marker: keyof XmlReader['next'], from: number): number {
    if (this.next[marker] < from && this.next[marker] !== Number.POSITIVE_INFINITY) {
      const at = this.s.indexOf(marker, from);
      this.next[marker] = at < 0 ? Number.POSITIVE_INFINITY : at;
    }
    return this.next[marker];
  }

  /** Text that is not one plain run of the file: kept as a string, at most MAX_ELEMENT_TEXT characters. */
  private addText(more: string): void {
    if (this.textLength < MAX_ELEMENT_TEXT) {
      const sofar = this.textLength === 0 ? '' : (this.text ?? this.s.slice(this.runStart, this.runEnd));
      this.text = sofar + more.slice(0, MAX_ELEMENT_TEXT - this.textLength);
    }
    this.textLength += more.length;
  }

  private takeText(): string {
    let text = '';
    if (this.text !== undefined) text = this.text.trim();
    else if (this.textLength > 0) text = this.s.slice(this.runStart, Math.min(this.runEnd, this.runStart + MAX_ELEMENT_TEXT)).trim();
    this.text = undefined;
    this.textLength = 0;
    return text;
  }

  /**
   * [from, to) with its entity and character references replaced; in an attribute value, a literal
   * tab, line feed or carriage return first becomes a space (XML's attribute-value normalisation; a
   * character reference to one is kept).
   */
  private references(from: number, to: number, attribute = false): string {
    const { s } = this;
    let out = '';
    let i = from;
    while (i < to) {
      const amp = s.indexOf('&', i);
      if (amp < 0 || amp >= to) break;
      out += attribute ? spaced(s.slice(i, amp)) : s.slice(i, amp);
      const semi = s.indexOf(';', amp);
      if (semi < 0 || semi >= to || semi - amp > 12) this.fail('a "&" that does not start a reference (write &amp;)', amp);
      const ref = s.slice(amp + 1, semi);
      if (ref.charCodeAt(0) === 35) out += this.characterReference(ref, amp);
      else {
        const value = PREDEFINED[ref];
        if (value === undefined) this.fail(`undefined entity &${ref}; (only &amp; &lt; &gt; &quot; &apos; are defined)`, amp);
        out += value;
      }
      i = semi + 1;
    }
    return out + (attribute ? spaced(s.slice(i, to)) : s.slice(i, to));
  }

  private characterReference(ref: string, at: number): string {
    const hex = ref.charCodeAt(1) === 120;
    const digits = ref.slice(hex ? 2 : 1);
    const code = (hex ? /^[0-9A-Fa-f]+$/ : /^[0-9]+$/).test(digits) ? Number.parseInt(digits, hex ? 16 : 10) : Number.NaN;
    const allowed =
      code === 9 ||
      code === 10 ||
      code === 13 ||
      (code >= 0x20 && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      (code >= 0x10000 && code <= 0x10ffff);
    if (!allowed) this.fail(`the character reference &${ref}; names no character XML allows`, at);
    return String.fromCodePoint(code);
  }

  private openTag(lt: number): number {
    const { s } = this;
    let i = lt + 1;
    if (!isNameStart(s.charCodeAt(i))) this.fail('a "<" that starts no tag (write &lt;)', lt);
    while (isNameChar(s.charCodeAt(i))) i++;
    const qname = s.slice(lt + 1, i);
    if (this.open.length === 0 && this.rootSeen) this.fail(`a second root element <${qname}>`, lt);
    if (this.open.length >= MAX_XML_DEPTH)
      throw new IngestError('xml_too_deep', `The XML nests elements more than ${MAX_XML_DEPTH} levels deep (line ${this.lineOf(lt)}).`);
    let attributes: Record<string, string> = NO_ATTRIBUTES;
    let selfClosing = false;
    for (;;) {
      const before = i;
      while (isSpace(s.charCodeAt(i))) i++;
      const c = s.charCodeAt(i);
      if (c === 62) {
        i++;
        break;
      }
      if (c === 47 && s.charCodeAt(i + 1) === 62) {
        selfClosing = true;
        i += 2;
        break;
      }
      if (i === before || !isNameStart(c)) this.fail(`a malformed tag <${qname}>`, i);
      const nameStart = i;
      while (isNameChar(s.charCodeAt(i))) i++;
      const name = localName(s.slice(nameStart, i));
      while (isSpace(s.charCodeAt(i))) i++;
      if (s.charCodeAt(i) !== 61) this.fail(`the attribute ${s.slice(nameStart, i).trim()} of <${qname}> has no "="`, i);
      i++;
      while (isSpace(s.charCodeAt(i))) i++;
      const quote = s.charCodeAt(i);
      if (quote !== 34 && quote !== 39) this.fail(`the value of an attribute of <${qname}> is not quoted`, i);
      const close = s.indexOf(quote === 34 ? '"' : "'", i + 1);
      if (close < 0) this.fail(`an attribute value of <${qname}> is not closed`, i);
      const lessThan = s.indexOf('<', i + 1);
      if (lessThan >= 0 && lessThan < close) this.fail(`a "<" in an attribute value of <${qname}>`, lessThan);
      const value = this.ampersandBefore(i + 1, close) ? this.references(i + 1, close, true) : spaced(s.slice(i + 1, close));
      if (attributes === NO_ATTRIBUTES) attributes = {};
      else if (name in attributes) this.fail(`the attribute ${name} is written twice in <${qname}>`, nameStart);
      attributes[name] = value;
      i = close + 1;
    }
    this.rootSeen = true;
    const name = localName(qname);
    this.open.push(qname);
    this.path.push(name);
    this.text = undefined;
    this.textLength = 0;
    this.handler.open(name, attributes, this.path); // (a self-closing element closes at once)
    if (selfClosing) this.closeCurrent();
    return i;
  }

  private closeTag(lt: number): number {
    const { s, open } = this;
    const qname = open[open.length - 1];
    let i = lt + 2;
    if (qname === undefined || !s.startsWith(qname, i) || isNameChar(s.charCodeAt(i + qname.length))) {
      let end = i;
      while (isNameChar(s.charCodeAt(end))) end++;
      const found = s.slice(i, end);
      this.fail(qname === undefined ? `a closing tag </${found}> with no element open` : `</${found}> closes <${qname}>`, lt);
    }
    i += qname.length;
    while (isSpace(s.charCodeAt(i))) i++;
    if (s.charCodeAt(i) !== 62) this.fail(`a malformed closing tag </${qname}>`, i);
    this.closeCurrent();
    return i + 1;
  }

  private closeCurrent(): void {
    const name = this.path[this.path.length - 1]!;
    this.handler.close(name, this.takeText(), this.path);
    this.path.pop();
    this.open.pop();
  }

  /** `<!` starts a comment, a CDATA section (inside the root), or a DOCTYPE (refused). */
  private declaration(lt: number): number {
    const { s } = this;
    if (s.startsWith('<!--', lt)) return this.skipPast(lt + 4, '-->', 'a comment');
    if (s.startsWith('<![CDATA[', lt)) {
      if (this.open.length === 0) this.fail('a CDATA section outside the root element', lt);
      const end = s.indexOf(']]>', lt + 9);
      if (end < 0) this.fail('a CDATA section is not closed', lt);
      const content = s.slice(lt + 9, end);
      this.total += content.length;
      if (this.total > MAX_XML_TEXT)
        throw new IngestError('xml_too_large', `The XML holds more than ${MAX_XML_TEXT.toLocaleString('en-US')} characters of text.`);
      this.addText(content);
      return end + 3;
    }
    if (s.startsWith('<!DOCTYPE', lt))
      throw new IngestError(
        'invalid_xml',
        'The XML has a document type declaration (<!DOCTYPE …>): it is not processed, and GPX and TCX files have none.',
      );
    return this.fail('a "<!" that starts no comment or CDATA section', lt);
  }

  /** `<?target …?>`; the one named `xml` (any case) is the XML declaration, only at the very start and well formed. */
  private processingInstruction(lt: number): number {
    const { s } = this;
    let i = lt + 2;
    if (!isNameStart(s.charCodeAt(i))) this.fail('a processing instruction without a target name', lt);
    while (isNameChar(s.charCodeAt(i))) i++;
    if (!isSpace(s.charCodeAt(i)) && !s.startsWith('?>', i)) this.fail('a malformed processing instruction', i);
    if (i - lt === 5 && s.slice(lt + 2, i).toLowerCase() === 'xml') {
      if (lt !== 0) this.fail('an XML declaration that is not at the start of the file', lt);
      if (!XML_DECLARATION.test(s.slice(0, s.indexOf('?>') + 2))) this.fail('a malformed XML declaration', lt);
    }
    return this.skipPast(i, '?>', 'a processing instruction');
  }

  private skipPast(from: number, terminator: string, what: string): number {
    const end = this.s.indexOf(terminator, from);
    if (end < 0) this.fail(`${what} is not closed`, from);
    return end + terminator.length;
  }

  private lineOf(at: number): number {
    let line = 1;
    for (let k = this.s.indexOf('\n'); k >= 0 && k < at; k = this.s.indexOf('\n', k + 1)) line++;
    return line;
  }

  private fail(what: string, at: number): never {
    const line = this.lineOf(at);
    const column = at - (this.s.lastIndexOf('\n', at - 1) + 1) + 1;
    throw new IngestError('invalid_xml', `The XML is malformed: ${what} (line ${line}, column ${column}).`);
  }
}
