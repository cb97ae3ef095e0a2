// Preloaded into jsii's Node.js (hyperpod_gov/cdk_start.py, resolve_modules_once): each module specifier is resolved
// once per requiring file, conditions and process, through Node.js's public module hooks (module.registerHooks,
// Node.js 22.15 and later; elsewhere this file does nothing).
//
// Why: CfnInclude builds each resource it reads as its type's L1 class, and finds that class with
// `require("aws-cdk-lib")` for every resource. Node.js keeps a per-file shortcut for a specifier only when that call
// is the one that loads the module; aws-cdk-lib was loaded by jsii's kernel first, so each of those calls resolved
// the package again (its package.json exports, about 300 entries, and a stat of every folder up the path). At
// 300 teams (5,546 resources) that was 0.56 s of CPU in isolation (0.09 s with this file: bench/module_resolution.py)
// and 0.76 s in a profile of the synth, the largest cost per resource after the YAML parser
// (docs/synth-performance.md). The answer is the one Node.js gave the first time: a module that is
// not found is not kept, and an import with attributes is resolved as usual.
"use strict";
const { registerHooks } = require("node:module");

if (typeof registerHooks === "function") {
  const resolved = new Map();
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const attributes = context.importAttributes;
      if (attributes && Object.keys(attributes).length > 0) {
        return nextResolve(specifier, context);
      }
      const key = `${specifier}\0${context.parentURL}\0${context.conditions}`;
      let answer = resolved.get(key);
      if (answer === undefined) {
        answer = { ...nextResolve(specifier, context), shortCircuit: true };
        resolved.set(key, answer);
      }
      return answer;
    },
  });
}
