/**
 * `import()` of a module that is not part of Dimsum's own code: a plugin file, pdfjs. The bundled CLI
 * replaces this module (scripts/bundle-cli.mjs) with one that hands the import to bin/dimsum.js, since
 * on Node 20 `import()` fails in code that V8 loaded from its code cache.
 */
export function importExternal(specifier: string): Promise<unknown> {
  return import(specifier);
}
