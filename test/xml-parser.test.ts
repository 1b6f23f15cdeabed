import test from 'ava';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readXml } from '../engine/ingest/xml.ts';
import { IngestError } from '../engine/ingest/recording.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { saxesEvents } from './helpers/saxes-reference.ts';
import { buildRideGpx, buildRideTcx } from './helpers/synthetic-tracks.ts';

/**
 * engine/ingest/xml.ts, the project's own XML parser, against saxes (a conforming parser we did not
 * write, test/helpers/saxes-reference.ts): the same elements, attributes and texts for every real
 * track fixture, the synthetic exports and generated documents; refusals for malformed XML that saxes
 * refuses too; and never more lenient than saxes on documents mutated at random.
 */

function ourEvents(text: string): { events: string[] } | { error: string; code: string } {
  const events: string[] = [];
  try {
    readXml(new TextEncoder().encode(text), {
      open: (_name, attributes, p) =>
        events.push(
          `open ${p.join('/')} ${Object.entries(attributes)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(' ')}`,
        ),
      close: (_name, own, p) => events.push(`close ${p.join('/')} ${JSON.stringify(own)}`),
    });
  } catch (e) {
    if (!(e instanceof IngestError)) throw e;
    return { error: e.message, code: e.code };
  }
  return { events };
}

test('every real GPX and TCX fixture gives the events saxes gives', (t) => {
  const dir = path.join(fixturesDir(), 'tracks');
  const files = readdirSync(dir).filter((f) => /\.(gpx|tcx)$/.test(f));
  t.true(files.length >= 10);
  for (const file of files) {
    const text = readFileSync(path.join(dir, file), 'utf8');
    const reference = saxesEvents(text);
    t.true('events' in reference, file);
    t.deepEqual(ourEvents(text), reference, file);
  }
});

test('synthetic Strava GPX and Garmin Connect TCX rides give the events saxes gives', (t) => {
  const start = new Date('2025-06-01T07:00:00Z');
  for (const text of [buildRideGpx({ start, seconds: 900, seed: 1 }), buildRideTcx({ start, seconds: 900, seed: 2 })]) {
    t.deepEqual(ourEvents(text), saxesEvents(text));
  }
});

test('what well-formed files may hold: a BOM, declaration, comments, PIs, CDATA, references, quotes, self-closing tags, prefixes', (t) => {
  const text =
    '\uFEFF<?xml version="1.0" encoding="UTF-8"?>\n<!-- exported -->\n<?pi data?>\n' +
    '<g:root xmlns:g=\'urn:x\' a = \'single &amp; "q"\' b="t&#x41;b&#9;&#10;">\n' +
    '  <name>Morning &lt;ride&gt; &#233;&#x1F6B4; &quot;x&apos;</name>\n' +
    '  <n><![CDATA[<raw> & ]]></n><e/><e />\n' +
    '  <mixed>one<!-- c -->two<?p?>three<inner>4</inner> tail </mixed>\n' +
    '</g:root>\n<!-- after -->\n';
  const ours = ourEvents(text);
  t.deepEqual(ours, saxesEvents(text));
  t.true('events' in ours && ours.events.includes('close root/name "Morning <ride> é🚴 \\"x\'"'));
  t.true('events' in ours && ours.events.includes('close root/n "<raw> &"'));
  t.true('events' in ours && ours.events.includes('close root/mixed "tail"'));
});

const MALFORMED: [string, string, RegExp][] = [
  ['unclosed', '<gpx><trk>', /<trk> is not closed/],
  ['mismatched', '<gpx><trk></trkseg></gpx>', /<\/trkseg> closes <trk>/],
  ['a prefix of the open name', '<gpx><trkpt></trk></gpx>', /<\/trk> closes <trkpt>/],
  ['close with nothing open', '</gpx>', /no element open/],
  ['text after the root', '<gpx/>text', /text outside the root/],
  ['text before the root', 'x<gpx/>', /text outside the root/],
  ['two roots', '<gpx/><gpx/>', /second root/],
  ['no root', '<!-- only -->', /no root element/],
  ['undefined entity', '<gpx>&nbsp;</gpx>', /undefined entity &nbsp;/],
  ['bare ampersand', '<gpx>fish & chips</gpx>', /does not start a reference/],
  ['entity in an attribute', '<gpx a="&x;"/>', /undefined entity/],
  ['NUL', '<gpx>a\u0000b</gpx>', /U\+0000/],
  ['a control character', '<gpx a="\u0007"/>', /U\+0007/],
  ['a reference to NUL', '<gpx>&#0;</gpx>', /names no character/],
  ['a reference to a surrogate', '<gpx>&#xD800;</gpx>', /names no character/],
  ['a reference that is no number', '<gpx>&#x;</gpx>', /names no character/],
  ['unquoted attribute', '<gpx a=1/>', /not quoted/],
  ['attribute without value', '<gpx a/>', /has no "="/],
  ['attribute twice', '<gpx a="1" a="2"/>', /written twice/],
  ['attributes not apart', '<gpx a="1"b="2"/>', /malformed tag/],
  ['"<" in a value', '<gpx a="<"/>', /"<" in an attribute value/],
  ['unclosed value', '<gpx a="1/>', /not closed/],
  ['"<" alone', '<gpx>< x</gpx>', /starts no tag/],
  ['unclosed comment', '<gpx><!-- </gpx>', /comment is not closed/],
  ['unclosed CDATA', '<gpx><![CDATA[ </gpx>', /CDATA section is not closed/],
  ['CDATA outside the root', '<![CDATA[x]]><gpx/>', /CDATA section outside/],
  ['unclosed PI', '<gpx><?pi </gpx>', /processing instruction is not closed/],
  ['PI without a target', '<gpx><? x?></gpx>', /without a target/],
  ['declaration not first', ' <?xml version="1.0"?><gpx/>', /not at the start/],
  ['declaration malformed', '<?xml version=1.0?><gpx/>', /malformed XML declaration/],
  ['"<!" of nothing', '<gpx><!x></gpx>', /starts no comment/],
  ['a tag cut short', '<gpx', /malformed tag/],
];

test('malformed XML is invalid_xml, naming what is wrong and where; saxes refuses each too', (t) => {
  for (const [what, text, message] of MALFORMED) {
    const ours = ourEvents(text);
    t.true('error' in ours && ours.code === 'invalid_xml', what);
    if ('error' in ours) {
      t.regex(ours.error, message, what);
      t.regex(ours.error, /\(line \d+, column \d+\)\.$/, what);
    }
    t.true('error' in saxesEvents(text), `saxes accepts ${what}`);
  }
  const where = ourEvents('<gpx>\n  <trk>\n    <bad a=1/>\n</gpx>');
  t.true('error' in where && /line 3, column 12/.test(where.error));
});

/** Random well-formed documents from a small vocabulary: names with and without prefixes, attributes, text with references, CDATA, comments. */
const nameArb = fc.constantFrom('gpx', 'trk', 'trkpt', 'ns3:hr', 'gpxtpx:TrackPointExtension', 'a-b.c', '_x', 'Ünïcode');
const textArb = fc
  .array(fc.constantFrom('12.5', ' ', '\n', '&amp;', '&lt;', '&#65;', '&#x1F6B4;', 'é', '<!-- c -->', '<![CDATA[<&>]]>', '>', '"', "'"), {
    maxLength: 6,
  })
  .map((parts) => parts.join(''));
const attrsArb = fc.uniqueArray(fc.tuple(fc.constantFrom('lat', 'lon', 'x:id', 'v'), fc.constantFrom('1', '&amp;', "'", '\t')), {
  selector: ([k]) => k,
  maxLength: 3,
});
const elementArb: fc.Arbitrary<string> = fc.letrec((tie) => ({
  element: fc.tuple(nameArb, attrsArb, fc.array(fc.oneof(textArb, tie('element')), { maxLength: 4 })).map(([name, attrs, children]) => {
    const a = attrs.map(([k, v]) => ` ${k}="${v.replace(/"/g, '&quot;')}"`).join('');
    return children.length ? `<${name}${a}>${children.join('')}</${name}>` : `<${name}${a}/>`;
  }),
})).element as fc.Arbitrary<string>;

test('generated well-formed documents: the events saxes gives', (t) => {
  fc.assert(
    fc.property(elementArb, fc.constantFrom('', '<?xml version="1.0"?>\n', '\uFEFF'), (root, prolog) => {
      const text = `${prolog}${root}\n`;
      const ours = ourEvents(text);
      const reference = saxesEvents(text);
      return JSON.stringify(ours) === JSON.stringify(reference);
    }),
    { seed: Number(process.env.XML_SEED ?? 39), numRuns: Number(process.env.XML_RUNS ?? 500) },
  );
  t.pass();
});

test('documents mutated at random: whatever this parser accepts, saxes accepts with the same events', (t) => {
  const base =
    '<?xml version="1.0"?><gpx creator="x"><trk><trkseg><trkpt lat="1.5" lon="2"><ele>3</ele><time>2024-01-01T00:00:00Z</time>' +
    '<extensions><ns3:hr>140</ns3:hr><power>2&amp;0</power></extensions></trkpt></trkseg></trk></gpx>';
  const pieces = [
    '<',
    '>',
    '/',
    '&',
    ';',
    '"',
    "'",
    '=',
    ' ',
    '!',
    '?',
    '-',
    '[',
    ']',
    'a',
    ':',
    '#',
    '\u0001',
    '<!--',
    '-->',
    '<![CDATA[',
    ']]>',
  ];
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(base.length), fc.nat(3), fc.constantFrom(...pieces)), { minLength: 1, maxLength: 3 }), (edits) => {
      let text = base;
      for (const [at, cut, insert] of edits) {
        const p = Math.min(at, text.length);
        text = text.slice(0, p) + insert + text.slice(p + cut);
      }
      const ours = ourEvents(text);
      if ('error' in ours) return ours.code === 'invalid_xml';
      return JSON.stringify(ours) === JSON.stringify(saxesEvents(text));
    }),
    { seed: Number(process.env.XML_SEED ?? 3900), numRuns: Number(process.env.XML_RUNS ?? 3000) },
  );
  t.pass();
});
