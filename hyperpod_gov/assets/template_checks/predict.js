'use strict';
// The template CDK will write for a stack whose resources and outputs are all plain-data fragments included with
// CfnInclude (hyperpod_gov/constructs/plain.py), rendered here from those fragments, as CDK renders them, so that
// the template check can check it while the app is still built (check.js, "predicted"). A prediction is only ever
// a guess: its findings are kept by the bytes rendered here, and a template CDK writes otherwise is checked as it
// comes. tests/stacks/test_predicted_templates.py compares what this renders with what CDK writes.
//
// What CDK does to an included fragment, and what is done here likewise:
// - a parameter reference {"Ref": <fragment text parameter>} becomes the parameter's value (CfnInclude);
// - a token in a string becomes what it resolves to in the stack (the caller gives each token's rendering): a
//   string that is one token is its value, a string with text around tokens an Fn::Join (CloudFormationLang);
// - each resource is rendered by its type's L1 class: its attributes in CfnResource's order, its properties in the
//   order of the class's property renderer (the names in code-unit order, at every level of a property type),
//   but for properties typed as JSON (policy documents), kept as written; custom resources and the types in
//   GENERIC as written; a stack with another type is not predicted;
// - taggable types get the stack's tags (the Tags aspect; TagManager renders them sorted by localeCompare of key);
// - outputs render Description before Value (CfnOutput).

const TOKEN = /\$\{Token\[[^\]]+\]\}/g;
const TEXT_PARAMETER = 'HyperpodGovFragmentText';

// type -> [taggable, JSON-typed properties (a path of names; '*' for each element of a list)]
const SHAPES = {
  'AWS::CloudWatch::Alarm': [true, []],
  'AWS::CloudWatch::Dashboard': [true, []],
  'AWS::EKS::AccessEntry': [true, []],
  'AWS::EKS::PodIdentityAssociation': [true, []],
  'AWS::IAM::Policy': [false, [['PolicyDocument']]],
  'AWS::IAM::Role': [true, [['AssumeRolePolicyDocument'], ['Policies', '*', 'PolicyDocument']]],
  'AWS::SNS::Subscription': [false, [['FilterPolicy'], ['DeliveryPolicy'], ['RedrivePolicy'], ['ReplayPolicy']]],
  'AWS::SNS::Topic': [true, []],
  'AWS::SNS::TopicPolicy': [false, [['PolicyDocument']]],
};
// Types aws-cdk-lib has no L1 class for: CfnInclude makes each a plain CfnResource, which renders its properties as
// written and takes no tags (as custom resources).
const GENERIC = ['AWS::SageMaker::ComputeQuota'];
// CfnResource's order of a resource's attributes (core/lib/cfn-resource.ts, _toCloudFormation)
const ATTRIBUTES = ['Type', 'Properties', 'DependsOn', 'CreationPolicy', 'UpdatePolicy', 'UpdateReplacePolicy',
  'DeletionPolicy', 'Version', 'Description', 'Metadata', 'Condition'];

class Unpredictable extends Error {}

function isIntrinsic(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === 'Ref' || keys[0].startsWith('Fn::'));
}

// CDK's minimalCloudFormationJoin: nested joins of the same delimiter spliced, adjacent texts merged.
function join(parts, delimiter = '') {
  const out = [];
  for (const part of parts) {
    const nested = isIntrinsic(part) && part['Fn::Join'];
    if (nested && nested[0] === delimiter && Array.isArray(nested[1])) {
      for (const inner of join(nested[1], delimiter)) append(out, inner, delimiter);
    } else {
      append(out, part, delimiter);
    }
  }
  return out;
}

function append(out, part, delimiter) {
  if (typeof part === 'string' && out.length && typeof out[out.length - 1] === 'string') {
    out[out.length - 1] += delimiter + part;
  } else {
    out.push(part);
  }
}

function resolveText(text, tokens) {
  if (!text.includes('${Token[')) return text;
  const parts = [];
  let at = 0;
  for (const match of text.matchAll(TOKEN)) {
    if (!(match[0] in tokens)) throw new Unpredictable(`unknown token ${match[0]}`);
    parts.push(text.slice(at, match.index), tokens[match[0]]);
    at = match.index + match[0].length;
  }
  parts.push(text.slice(at));
  const joined = join(parts.filter((p) => p !== ''));
  return joined.length === 1 ? joined[0] : { 'Fn::Join': ['', joined] };
}

// ``value`` with parameters and tokens resolved, and with ``sort`` (a property type's fields) its objects' keys
// sorted at every level, but for an intrinsic function's arguments.
function render(value, context, sort) {
  if (typeof value === 'string') return resolveText(value, context.tokens);
  if (Array.isArray(value)) return value.map((v) => render(v, context, sort));
  if (value === null || typeof value !== 'object') return value;
  if (isIntrinsic(value)) {
    const ref = value.Ref;
    if (typeof ref === 'string' && ref.startsWith(TEXT_PARAMETER)) {
      if (!(ref in context.parameters)) throw new Unpredictable(`no value for ${ref}`);
      return resolveText(context.parameters[ref], context.tokens);
    }
    const [key] = Object.keys(value);
    if (key === 'Fn::Join' && Array.isArray(value[key][1])) {  // FnJoin: minimal, and one value is that value
      const [delimiter, parts] = value[key];
      const joined = join(render(parts, context, false), delimiter);
      return joined.length === 1 ? joined[0] : { [key]: [delimiter, joined] };
    }
    return { [key]: render(value[key], context, false) };
  }
  const keys = Object.keys(value);
  if (sort) keys.sort();
  const out = {};
  for (const k of keys) out[k] = render(value[k], context, sort);
  return out;
}

function properties(type, props, context) {
  const [, jsonPaths] = SHAPES[type];
  const out = {};
  for (const name of Object.keys(props).sort()) {
    const json = jsonPaths.filter((p) => p[0] === name);
    if (json.some((p) => p.length === 1)) {
      out[name] = render(props[name], context, false);
    } else if (json.length && Array.isArray(props[name])) {  // ['Policies', '*', 'PolicyDocument']
      out[name] = props[name].map((item) => {
        const rendered = {};
        for (const k of Object.keys(item).sort()) {
          rendered[k] = render(item[k], context, !json.some((p) => p[2] === k));
        }
        return rendered;
      });
    } else {
      out[name] = render(props[name], context, true);
    }
  }
  return out;
}

function withTags(props, tags) {
  if (!tags.length) return props;
  const merged = new Map();
  for (const t of props.Tags ?? []) merged.set(t.Key, t.Value);
  for (const t of tags) merged.set(t.Key, t.Value);
  const keys = [...merged.keys()].sort((a, b) => a.localeCompare(b));
  const out = { ...props, Tags: keys.map((k) => ({ Key: k, Value: merged.get(k) })) };
  const sorted = {};
  for (const k of Object.keys(out).sort()) sorted[k] = out[k];
  return sorted;
}

function resource(r, context) {
  const custom = r.Type.startsWith('Custom::') || GENERIC.includes(r.Type);
  if (!custom && !(r.Type in SHAPES)) throw new Unpredictable(`type ${r.Type}`);
  const out = {};
  for (const attribute of ATTRIBUTES) {
    if (!(attribute in r)) continue;
    if (attribute === 'Properties') {
      let props = custom ? render(r.Properties, context, false) : properties(r.Type, r.Properties, context);
      if (!custom && SHAPES[r.Type][0]) props = withTags(props, context.tags);
      if (Object.keys(props).length) out.Properties = props;
    } else {
      out[attribute] = render(r[attribute], context, false);
    }
  }
  if (Object.keys(r).some((k) => !ATTRIBUTES.includes(k))) throw new Unpredictable('an attribute CDK does not render');
  return out;
}

// request: {description, fragments: [{text, parameters}], tokens, tags: [{Key, Value}], parameters, rules}: the
// stack's description, its fragments in include order (each a template's JSON text and the values of its text
// parameters), each token's rendering, the stack's tags in the order added, the synthesizer's parameters and rules.
// The template as CDK would write it (an object, to be written with JSON.stringify(t, undefined, 1)), or null.
function predict(request) {
  try {
    const resources = {};
    const outputs = {};
    for (const fragment of request.fragments) {
      const template = JSON.parse(fragment.text);
      const context = { tokens: request.tokens, parameters: fragment.parameters ?? {}, tags: request.tags ?? [] };
      for (const [id, r] of Object.entries(template.Resources ?? {})) resources[id] = resource(r, context);
      for (const [id, o] of Object.entries(template.Outputs ?? {})) {
        outputs[id] = {
          ...(o.Description !== undefined ? { Description: render(o.Description, context, false) } : {}),
          Value: render(o.Value, context, false),
        };
        if (Object.keys(o).some((k) => k !== 'Description' && k !== 'Value')) throw new Unpredictable('output');
      }
    }
    const out = {};
    if (request.description) out.Description = request.description;
    out.Resources = resources;
    if (Object.keys(outputs).length) out.Outputs = outputs;
    if (request.parameters) out.Parameters = request.parameters;
    if (request.rules) out.Rules = request.rules;
    return out;
  } catch (e) {
    if (e instanceof Unpredictable) return null;
    throw e;
  }
}

module.exports = { predict };

// node predict.js: a request a line on stdin, its template on stdout (as CDK writes one, on one line as JSON text;
// null where it cannot be predicted), for the tests.
if (require.main === module) {
  const lines = require('readline').createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    const template = predict(JSON.parse(line));
    process.stdout.write(JSON.stringify(template === null ? null : JSON.stringify(template, undefined, 1)) + '\n');
  });
}
