// The conformance CLI imports fs.globSync (Node 22+) at load time; on Node 20 this hook gives it an fs that has one.
import { register } from 'node:module';

if (!('globSync' in (await import('node:fs')))) {
  register(
    'data:text/javascript,' +
      encodeURIComponent(`
        const SHIM = 'data:text/javascript,' + encodeURIComponent(
          "export * from 'node:fs'; export { default } from 'node:fs';" +
          "export function globSync() { throw new Error('fs.globSync needs Node 22; this conformance command is unavailable on Node 20.'); }");
        export async function resolve(specifier, context, next) {
          if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) return { url: SHIM, shortCircuit: true };
          return next(specifier, context);
        }`),
  );
}
