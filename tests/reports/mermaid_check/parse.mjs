// Parses each file named on the command line with Mermaid's own parser, the
// one GitHub's renderer runs. Mermaid wants a DOM even to parse (it sanitises
// labels with DOMPurify), so jsdom provides one. Prints "ok <file>" or
// "error <file>: <message>" per file; exits 1 if any file failed.
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });

let failed = 0;
for (const file of process.argv.slice(2)) {
  try {
    const result = await mermaid.parse(readFileSync(file, 'utf8'));
    if (!result || result.diagramType !== 'sequence') throw new Error(`not a sequence diagram: ${JSON.stringify(result)}`);
    console.log(`ok ${file}`);
  } catch (e) {
    failed++;
    console.log(`error ${file}: ${String(e && e.message ? e.message : e).split('\n').join(' | ')}`);
  }
}
process.exit(failed ? 1 : 0);
