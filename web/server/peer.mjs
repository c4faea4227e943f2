// The server parts' heavier npm packages (SQLite, the IP database and its reader) are optional peer dependencies of
// h3probe, so that a page-only install pulls none of them. They are loaded on first use, with an error that says what to
// install; the version ranges are package.json's peerDependencies.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function missing(err, name, feature) {
  if (err?.code !== 'MODULE_NOT_FOUND' || !String(err.message).includes(name)) return err;
  const range = require('../../package.json').peerDependencies?.[name] ?? '';
  return new Error(`${feature} needs the npm package ${name}: npm install ${name}${range ? `@"${range}"` : ''}`);
}

/** require(name), or an Error naming the package and the feature that needs it. */
export function peer(name, feature) {
  try {
    return require(name);
  } catch (err) {
    throw missing(err, name, feature);
  }
}

/** The path of a file inside a peer package, with the same error. */
export function peerFile(name, file, feature) {
  try {
    return require.resolve(`${name}/${file}`);
  } catch (err) {
    throw missing(err, name, feature);
  }
}
