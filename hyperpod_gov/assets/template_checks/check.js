'use strict';
// aws-cdk-lib's "CloudFormation Validate" template check in a process of its own, so that its engine is built
// while the app is (on another core) instead of after it. The engine, its rules and the options are aws-cdk-lib's
// own: ENGINE_DIR is the @aws/cloudformation-validate that aws-cdk-lib bundles, RULES_DIR its
// core/lib/validation/rules, and the options below are those of core/lib/validation/cloudformation-validate-plugin.js
// (tests/stacks/test_template_checks.py compares them with it).
//
//   node check.js ENGINE_DIR RULES_DIR [IMAGE_DIR [RESULTS_DIR]]
//   stdin, a line each:  [{"templatePath", "accountId", "region"}, ...]
//   stdout, a line each: {"version": ..., "restored": (the engine came from its image), "results": [{"templatePath",
//   "diagnostics": [...], "reused"?}, ...]}
//   or {"watch": [{"templatePath", "accountId", "region"}, ...]}, later {"done": true}: the templates CDK is about to
//   write, each checked once it is whole, while the synth goes on; after "done" the answer, as above, for those
//   that were written;
//   or {"warmUp": N} (no answer), {"predicted": {...}} (no answer: a template rendered by predict.js, checked
//   ahead), {"settle": true} (the answer {"settled": N} once every prediction sent is checked).
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const IGNORE_RULES = ['W3005', 'W1020', 'E1018', 'W9002', 'W9013', 'W1103'];
const EXCLUDE_SERVICES = [{ ruleId: 'W3697', service: 'AWS::AutoScaling' }];
const DETAIL_LEVEL = 'STANDARD';
const SEVERITY_LEVEL = 'WARN';

// A line {"warmUp": N} (the caller sends it for a large app, before its templates exist) has the engine check a
// warm-up template (one resource of each type hyperpod-gov writes, its references replaced by text; the findings
// are dropped) N times, one check per turn of the event loop, with no answer. A fresh engine's first checks are its
// slow ones: a 300-team app's templates took 3.2 to 3.6 s on a cold engine and 2.1 to 2.6 s after three warm-up
// checks (more gained nothing), done while the app is built on the other core. For a small app the warm-up's CPU
// costs more than it saves, so it is asked for, not done always. A request waits for at most one warm-up check.
let requested = false;
let warmups = 0;
function warmUp() {
  if (requested || warmups <= 0) return;
  warmups -= 1;
  checkWarmUp(engine, validate);
  setImmediate(warmUp);
}

// CDK's options for a stack's template (its account and region, where the stack has them).
function options(stack) {
  return {
    detailLevel: DETAIL_LEVEL,
    pseudoParameterOverrides: { accountId: stack.accountId ?? undefined, region: stack.region ?? undefined },
    exclude: { ids: IGNORE_RULES, services: EXCLUDE_SERVICES },
    severityLevel: SEVERITY_LEVEL,
  };
}

// The engine as `new CompositeEngine({ regoRules })` builds it, or its image (engine_image.js: IMAGE_DIR, where
// given, keeps it), probed with the warm-up template.
const [engineDir, rulesDir, imageDir, resultsDir] = process.argv.slice(2);
const WARMUP = path.join(__dirname, 'warmup.template.json');
const checkWarmUp = (built, engineModule) => built.validateTemplate(new engineModule.TemplateFile(WARMUP),
  options({ region: 'us-east-1' }));
const probe = (built, engineModule) => JSON.stringify(checkWarmUp(built, engineModule).diagnostics);
const { engine, validate, restored, identity } = require('./engine_image').load(engineDir, rulesDir, imageDir ?? '',
  probe);

// The findings of a template are kept by its bytes, account and region, the engine (its identity: its files, its
// rules, Node.js's version) and this file (the options above): the same template gets the first check's
// diagnostics again, marked "reused". The engine keeps no state between checks and the options are the same for
// every check, so a kept answer is the one a check would give. Kept in this process (the tests, `hyperpod-gov
// diff`, whose two synths share most templates byte for byte) and, where RESULTS_DIR is given, in a file each
// (a later synth of a spec of which a team changed checks only the templates that changed; stored.js).
const checked = new Map();
const stored = require('./stored').open(resultsDir, crypto.createHash('sha256').update(identity)
  .update(fs.readFileSync(__filename)).digest('hex'));

function keyOf(bytes, accountId, region) {
  return crypto.createHash('sha256').update(bytes).update(JSON.stringify([accountId ?? null, region ?? null]))
    .digest('hex');
}

// The kept fields of the engine's findings for ``template`` (a TemplateFile or TemplateContent).
function findings(template, stack) {
  return engine.validateTemplate(template, options(stack)).diagnostics.map((d) => ({
    ruleId: d.ruleId,
    severity: d.severity,
    message: d.message,
    propertyPath: d.propertyPath ?? null,
    logicalId: d.entity?.entityType === 'Resource' ? d.entity.logicalId : null,
    suggestedFix: d.suggestedFix ?? null,
    category: d.category ?? null,
  }));
}

function check(stack) {
  const key = keyOf(fs.readFileSync(stack.templatePath), stack.accountId, stack.region);
  const known = checked.get(key) ?? stored.get(key);
  if (known !== undefined) {
    checked.set(key, known);
    if (unconfirmed.delete(key)) stored.set(key, known);
    return { templatePath: stack.templatePath, diagnostics: known, reused: true };
  }
  const diagnostics = findings(new validate.TemplateFile(stack.templatePath), stack);
  checked.set(key, diagnostics);
  stored.set(key, diagnostics);
  return { templatePath: stack.templatePath, diagnostics };
}

// A line {"predicted": {"accountId", "region", ...}}: a stack whose template predict.js can render from the plain-data
// fragments it includes (the rest of the request), sent by the synth while the app is still built. The rendered
// template is checked while nothing else is asked of the engine (after the warm-up), and its findings kept by
// its bytes in this process: when CDK writes the same bytes, the template is answered from them (reused, and
// only then kept in RESULTS_DIR); a template CDK writes otherwise is checked as it comes, so a prediction that
// misses costs only the time of a core the build leaves idle. Those not checked when the synth's check
// answers are dropped.
const { predict: render } = require('./predict');
const predicted = [];
const unconfirmed = new Set();  // keys of rendered templates CDK has not written yet
let predicting = false;
let rendered = 0;  // predicted templates rendered and checked (or found checked) so far
let settling = false;  // a {"settle": true} waits for the predictions queued to be checked: {"settled": rendered}

function settled() {
  if (!settling || predicted.length) return;
  settling = false;
  process.stdout.write(JSON.stringify({ settled: rendered }) + '\n');
}

function checkPredicted() {
  const stack = predicted.shift();
  const template = render(stack);
  if (template === null) return;
  rendered += 1;
  const bytes = Buffer.from(JSON.stringify(template, undefined, 1));
  const key = keyOf(bytes, stack.accountId, stack.region);
  if (checked.has(key)) return;
  const known = stored.get(key);
  checked.set(key, known ?? findings(new validate.TemplateContent(bytes), stack));
  if (known === undefined) unconfirmed.add(key);
}

function predict() {
  predicting = false;
  if (watching !== null || predicted.length === 0) return;  // a watch's poll takes them between its templates
  if (!requested && warmups > 0) {
    setImmediate(predict);
    predicting = true;
    return;
  }
  checkPredicted();
  if (predicted.length) {
    predicting = true;
    setImmediate(predict);
  } else {
    settled();
  }
}

function answer(results) {
  process.stdout.write(JSON.stringify({ version: validate.version(), restored, results }) + '\n');
}

// A watch: the templates the synth will write. CDK writes each one whole (writeFileSync) and never again, so a
// template is taken once its text parses (a template is one JSON object: no part of it short of the whole parses);
// the caller removes earlier synths' files first. Polled, between checks and every POLL_MS: each check runs on this
// core while Node.js synthesizes the next stacks on the other.
const POLL_MS = 10;
let watching = null;

function whole(templatePath) {
  try {
    JSON.parse(fs.readFileSync(templatePath, 'utf-8'));
    return true;
  } catch {
    return false;
  }
}

function poll() {
  if (watching === null) return;
  const ready = watching.pending.findIndex((stack) => watching.done || whole(stack.templatePath));
  if (ready >= 0) {
    const [stack] = watching.pending.splice(ready, 1);
    if (!watching.done || fs.existsSync(stack.templatePath)) watching.results.push(check(stack));
    setImmediate(poll);
  } else if (watching.done) {
    const { results } = watching;
    watching = null;
    predicted.length = 0;
    for (const key of unconfirmed) checked.delete(key);
    unconfirmed.clear();
    answer(results);
  } else if (predicted.length) {
    checkPredicted();
    settled();
    setImmediate(poll);
  } else {
    setTimeout(poll, POLL_MS);
  }
}

// One request per line (the stacks of one cloud assembly), one answer per line, until stdin closes: a process
// that synthesizes many apps (the tests) builds the engine once.
const lines = require('readline').createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (!line.trim()) return;
  const request = JSON.parse(line);
  if (Array.isArray(request)) {
    requested = true;
    answer(request.map(check));
  } else if (request.watch) {
    requested = true;
    watching = { pending: request.watch, results: [], done: false };
    setImmediate(poll);
  } else if (request.predicted) {
    predicted.push(request.predicted);
    if (!predicting && watching === null) {
      predicting = true;
      setImmediate(predict);
    }
  } else if (request.settle) {  // the tests: after the predictions, before the templates are checked
    settling = true;
    if (!predicting) settled();
  } else if (request.done) {
    if (watching === null) answer([]);
    else watching.done = true;  // the next poll checks what is left and answers
  } else {  // {"warmUp": N}
    warmups = request.warmUp;
    requested = false;
    setImmediate(warmUp);
  }
});
lines.on('close', () => process.exit(0));  // freeing the engine first takes seconds, for nothing
