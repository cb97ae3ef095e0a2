'use strict';
// The template check's findings kept in files, one a template, so that a later process answers a template it has
// seen without checking it again (check.js).
//
//   const stored = open(RESULTS_DIR, identity);  stored.get(key) -> diagnostics or undefined;  stored.set(key, d)
//
// `key` names the template (a SHA-256 of its bytes, account and region), `identity` the check (a SHA-256 of the
// engine's files, its rules, Node.js's version and check.js itself). A file is RESULTS_DIR/<SHA-256 of both>.json
// and holds the identity again beside the diagnostics: a file of another format or identity, one that does not
// parse or has no list of diagnostics, is not used (and is written over by the next check of that template).
// Written to a staging file and renamed, so that a reader sees a whole file or none. At most MAX_FILES are kept: a
// process that writes looks at the folder once and removes the least recently used beyond that (each use touches
// its file), and staging files a stopped process left. A folder that cannot be read or written keeps nothing, and
// nothing fails. Without RESULTS_DIR nothing is kept.
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const FORMAT = 1;
const MAX_FILES = 4096;  // a 300-team app writes 26 templates; a test run about 300
const STALE_MS = 10 * 60 * 1000;  // a staging file this old belongs to no running process

function open(dir, identity) {
  if (!dir) return { get: () => undefined, set: () => {} };
  const file = (key) => path.join(dir,
    `${crypto.createHash('sha256').update(identity).update(key).digest('hex')}.json`);
  let pruned = false;
  return {
    get(key) {
      try {
        const name = file(key);
        const kept = JSON.parse(fs.readFileSync(name, 'utf-8'));
        if (kept.format !== FORMAT || kept.identity !== identity || !Array.isArray(kept.diagnostics)) return undefined;
        const now = new Date();
        fs.utimesSync(name, now, now);
        return kept.diagnostics;
      } catch {
        return undefined;
      }
    },
    set(key, diagnostics) {
      const name = file(key);
      const staging = `${name}.${process.pid}.tmp`;
      try {
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(staging, JSON.stringify({ format: FORMAT, identity, diagnostics }));
        fs.renameSync(staging, name);
        if (!pruned) {
          pruned = true;
          prune(dir);
        }
      } catch {
        fs.rmSync(staging, { force: true });  // no room, no folder to write: this template is checked next time
      }
    },
  };
}

function prune(dir) {
  const now = Date.now();
  const kept = [];
  for (const entry of fs.readdirSync(dir)) {
    let modified;
    try {
      modified = fs.statSync(path.join(dir, entry)).mtimeMs;
    } catch {
      continue;  // removed by another process meanwhile
    }
    if (entry.endsWith('.tmp') && now - modified > STALE_MS) fs.rmSync(path.join(dir, entry), { force: true });
    else if (entry.endsWith('.json')) kept.push([modified, entry]);
  }
  kept.sort((a, b) => a[0] - b[0]);
  for (const [, entry] of kept.slice(0, Math.max(0, kept.length - MAX_FILES))) {
    fs.rmSync(path.join(dir, entry), { force: true });
  }
}

module.exports = { open, FORMAT, MAX_FILES };
