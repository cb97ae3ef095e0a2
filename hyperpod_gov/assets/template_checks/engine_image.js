'use strict';
// aws-cdk-lib's template-check engine, built once and then kept as an image: the engine's WebAssembly memory and
// its table of JavaScript values right after `new CompositeEngine(...)`. Every build of the same engine and rules
// ends in an equivalent state (not byte for byte: its hash tables are seeded at random). Building the engine
// parses CloudFormation's resource schemas inside the WebAssembly module: 1.8 s of CPU on a quiet machine, 3.9 s on
// a loaded one, in every process that checks templates. Restoring the image into a fresh instance of the same
// module takes 0.2 to 0.5 s (reading and decompressing 18 MB; the memory is 200 MB).
//
//   const { engine, validate, restored, identity } = load(ENGINE_DIR, RULES_DIR, IMAGE_DIR, probe)
//
// `identity` names the engine as its image's name does (below), whether or not there is an image: check.js keys
// the findings it keeps by it.
// `probe(engine, validate)` checks a template and returns the findings as text: the image keeps what the built
// engine answered, and a restored engine that answers otherwise (or throws) is not used.
//
// The image's name is a SHA-256 of everything the built state depends on: the engine's files (its WebAssembly
// module and the JavaScript that drives it), the rules, Node.js's version and architecture and FORMAT. A missing,
// damaged (zstd's checksum) or unreadable image, a table value of a kind the image cannot name, a Node.js without
// zstd, an IMAGE_DIR of '' or a folder that cannot be written: the engine is built as before, and nothing fails.
// tests/stacks/test_engine_image.py checks that a restored engine finds what a built one finds.
const crypto = require('crypto');
const fs = require('fs');
const Module = require('module');
const path = require('path');
const vm = require('vm');
const zlib = require('zlib');

const FORMAT = 1;
const PAGE = 65536;

// The engine's modules, loaded as `require(ENGINE_DIR)` loads them, except that the WebAssembly instance the
// bindings module makes (the binding `wasm`, module-private) is handed out by one line appended to its source.
// Compiled each time: in a process that restores an image the first instance is written over, so nothing else
// may share it.
function loadModules(engineDir) {
  const bindingsPath = path.join(engineDir, 'bindings_wasm.js');
  const source = `${fs.readFileSync(bindingsPath, 'utf-8')}\nmodule.exports.__instance = () => wasm;\n`;
  const bindings = new Module(bindingsPath, module);
  bindings.filename = bindingsPath;
  bindings.paths = Module._nodeModulePaths(engineDir);
  const wrapped = vm.compileFunction(source, ['exports', 'require', 'module', '__filename', '__dirname'],
    { filename: bindingsPath });
  wrapped.call(bindings.exports, bindings.exports, Module.createRequire(bindingsPath), bindings, bindingsPath,
    engineDir);
  bindings.loaded = true;
  require.cache[bindingsPath] = bindings;
  delete require.cache[require.resolve(path.resolve(engineDir))];
  const validate = require(path.resolve(engineDir));
  const instance = bindings.exports.__instance;
  return { validate, bridge: bindings.exports, wasm: typeof instance === 'function' ? instance() : null };
}

function regoRules(rulesDir) {
  return fs.readdirSync(rulesDir).filter((f) => f.endsWith('.rego')).sort()
    .map((f) => ({ name: f, content: fs.readFileSync(path.join(rulesDir, f), 'utf-8') }));
}

function imageName(engineDir, rules) {
  const hash = crypto.createHash('sha256').update(JSON.stringify([FORMAT, process.version, process.arch]));
  for (const file of fs.readdirSync(engineDir).filter((f) => /\.(js|wasm)$/.test(f)).sort()) {
    hash.update(file).update(fs.readFileSync(path.join(engineDir, file)));
  }
  hash.update(JSON.stringify(rules));
  return `engine-${hash.digest('hex').slice(0, 32)}.zst`;
}

// A table value as the image names it: the global object and `performance` (which the bindings keep), a string
// (a name the bindings interned), null, undefined, true or false. Anything else cannot be named: no image.
function nameOf(value) {
  if (value === undefined || value === null || typeof value === 'boolean' || typeof value === 'string') {
    return { v: value === undefined ? 'undefined' : value };
  }
  if (value === globalThis) return { global: true };
  if (value === globalThis.performance) return { performance: true };
  return null;
}

function valueOf(named) {
  if (named.global) return globalThis;
  if (named.performance) return globalThis.performance;
  return named.v === 'undefined' ? undefined : named.v;
}

// The image: a line of JSON (format, the engine's pointer, the memory's size in pages, the table, and the length of
// each compressed part), then the memory in parts of CHUNK bytes, each a zstd frame with its checksum: written and
// read a part at a time, so that a process never holds the memory twice.
const CHUNK = 64 * PAGE;

function write(imagePath, { wasm, validate }, engine, probe) {
  const pointer = engine.inner.__wbg_ptr;
  const table = wasm.__wbindgen_externrefs;
  const values = [];
  for (let i = 0; i < table.length; i += 1) {
    const named = nameOf(table.get(i));
    if (named === null) return;
    values.push(named);
  }
  const memory = new Uint8Array(wasm.memory.buffer);
  const parts = [];
  for (let at = 0; at < memory.length; at += CHUNK) {
    parts.push(zlib.zstdCompressSync(memory.subarray(at, at + CHUNK),
      { params: { [zlib.constants.ZSTD_c_checksumFlag]: 1 } }));
  }
  const header = JSON.stringify({ format: FORMAT, pointer, pages: memory.length / PAGE, table: values,
    parts: parts.map((part) => part.length), probe: probe(engine, validate) });  // probed once the memory is kept
  fs.mkdirSync(path.dirname(imagePath), { recursive: true });
  const staging = `${imagePath}.${process.pid}.tmp`;
  try {
    const fd = fs.openSync(staging, 'w');
    try {
      fs.writeSync(fd, `${header}\n`);
      for (const part of parts) fs.writeSync(fd, part);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(staging, imagePath);
  } finally {
    fs.rmSync(staging, { force: true });
  }
  for (const old of fs.readdirSync(path.dirname(imagePath))) {  // the same engine's images for another Node.js
    if (old !== path.basename(imagePath) && /^engine-.*\.zst$/.test(old)) {
      fs.rmSync(path.join(path.dirname(imagePath), old), { force: true });
    }
  }
}

// The image's header and compressed parts, checked for size against the instance, or null.
function read(imagePath, wasm) {
  try {
    const data = fs.readFileSync(imagePath);
    const end = data.indexOf(10);
    const header = JSON.parse(data.subarray(0, end).toString('utf-8'));
    const fits = header.format === FORMAT && Number.isInteger(header.pointer) && Number.isInteger(header.pages)
      && header.pages * PAGE >= wasm.memory.buffer.byteLength && Array.isArray(header.parts)
      && header.parts.length === Math.ceil(header.pages * PAGE / CHUNK)
      && header.parts.reduce((a, b) => a + b, end + 1) === data.length
      && Array.isArray(header.table) && header.table.length >= wasm.__wbindgen_externrefs.length;
    return fits ? { header, data, start: end + 1 } : null;
  } catch {
    return null;
  }
}

// The image's engine, written into the fresh instance of `modules` a part at a time (a damaged part throws).
function restore({ header, data, start }, modules) {
  const { wasm } = modules;
  const table = wasm.__wbindgen_externrefs;
  wasm.memory.grow(header.pages - wasm.memory.buffer.byteLength / PAGE);
  const memory = new Uint8Array(wasm.memory.buffer);
  let offset = start;
  header.parts.forEach((length, i) => {
    const part = zlib.zstdDecompressSync(data.subarray(offset, offset + length));
    if (part.length !== Math.min(CHUNK, memory.length - i * CHUNK)) throw new Error('a part of the wrong size');
    memory.set(part, i * CHUNK);
    offset += length;
  });
  table.grow(header.table.length - table.length);
  header.table.forEach((named, i) => table.set(i, valueOf(named)));
  const inner = Object.create(modules.bridge.WasmCompositeEngine.prototype);
  inner.__wbg_ptr = header.pointer;
  const engine = Object.create(modules.validate.CompositeEngine.prototype);
  engine.inner = inner;
  return engine;
}

function load(engineDir, rulesDir, imageDir, probe) {
  const rules = regoRules(rulesDir);
  let modules = loadModules(engineDir);
  const usable = imageDir && modules.wasm && modules.wasm.__wbindgen_externrefs && zlib.zstdCompressSync;
  const name = imageName(engineDir, rules);
  const imagePath = usable ? path.join(imageDir, name) : null;
  const image = imagePath && fs.existsSync(imagePath) ? read(imagePath, modules.wasm) : null;
  if (image !== null) {
    try {
      const engine = restore(image, modules);
      if (probe(engine, modules.validate) === image.header.probe) {
        return { engine, validate: modules.validate, restored: true, identity: name };
      }
    } catch {
      // a damaged part, an engine that does not answer as the one imaged did: built again, the image replaced
    }
    modules = loadModules(engineDir);  // a fresh instance: this one was written over
  }
  const engine = new modules.validate.CompositeEngine(rules.length > 0 ? { regoRules: rules } : {});
  if (imagePath) {
    try {
      write(imagePath, modules, engine, probe);
    } catch {
      // no room, no folder to write: the next process builds the engine too
    }
  }
  return { engine, validate: modules.validate, restored: false, identity: name };
}

module.exports = { load, FORMAT };
