/**
 * Readers for the programs under `examples/`, enough to check each resource type, property and output they use
 * against the package schema: the YAML program through js-yaml (installed with @pulumi/pulumi), the Python
 * program through a small test-local reader of the one call and the exports (no Python needed to read it).
 *
 * @packageDocumentation
 */
import * as fs from "node:fs";

/** What a property value is, in schema terms. */
export type ValueKind = "string" | "number" | "boolean" | "object" | "array" | "expression";

/** One resource a program declares. */
export interface DeclaredResource {
    /** The logical name (YAML key, or the Python call's first argument). */
    readonly name: string;
    /** The type token (YAML), or the SDK class the Python program calls. */
    readonly type: string;
    /** Each property the program sets, by the name it uses, with the kind of value. */
    readonly properties: Record<string, ValueKind>;
}

/** One stack output: its name, and the resource output it reads. */
export interface ProgramOutput {
    readonly name: string;
    readonly resource: string;
    /** The output as the program spells it (camelCase in YAML, snake_case in Python). */
    readonly output: string;
}

/** A program's packages, resources and outputs. */
export interface ProgramUse {
    readonly packages: Record<string, string>;
    readonly resources: DeclaredResource[];
    readonly outputs: ProgramOutput[];
}

// js-yaml ships no types here; only `load` is used.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = require("js-yaml") as { load(text: string): unknown };

function kindOf(value: unknown): ValueKind {
    if (Array.isArray(value)) return "array";
    if (value === null) return "expression";
    switch (typeof value) {
        case "string":
            return /^\$\{.*\}$/.test(value) ? "expression" : "string";
        case "number":
            return "number";
        case "boolean":
            return "boolean";
        case "object":
            return "object";
        default:
            return "expression";
    }
}

/** Reads a Pulumi YAML program. */
export function readYamlProgram(file: string): ProgramUse {
    const doc = yaml.load(fs.readFileSync(file, "utf8")) as {
        packages?: Record<string, string>;
        resources?: Record<string, { type: string; properties?: Record<string, unknown> }>;
        outputs?: Record<string, string>;
    };
    const resources = Object.entries(doc.resources ?? {}).map(([name, r]) => ({
        name,
        type: r.type,
        properties: Object.fromEntries(Object.entries(r.properties ?? {}).map(([k, v]) => [k, kindOf(v)])),
    }));
    const outputs = Object.entries(doc.outputs ?? {}).map(([name, expr]) => {
        const m = /^\$\{([A-Za-z0-9_-]+)\.([A-Za-z0-9_]+)\}$/.exec(String(expr));
        if (m === null) throw new Error(`${file}: output ${name} is ${JSON.stringify(expr)}, not \${resource.output}`);
        return { name, resource: m[1]!, output: m[2]! };
    });
    return { packages: doc.packages ?? {}, resources, outputs };
}

/** The text between the parenthesis at `open` and its match, skipping strings and nested brackets. */
function balanced(text: string, open: number): string {
    let depth = 0;
    for (let i = open; i < text.length; i++) {
        const c = text[i]!;
        if (c === '"' || c === "'") {
            const end = text.indexOf(c, i + 1);
            if (end < 0) break;
            i = end;
        } else if ("([{".includes(c)) depth++;
        else if (")]}".includes(c) && --depth === 0) return text.slice(open + 1, i);
    }
    throw new Error(`unbalanced brackets from offset ${open}`);
}

/** `args` split at the commas outside strings and brackets. */
function topLevel(args: string): string[] {
    const parts: string[] = [];
    let depth = 0;
    let start = 0;
    for (let i = 0; i < args.length; i++) {
        const c = args[i]!;
        if (c === '"' || c === "'") i = args.indexOf(c, i + 1);
        else if ("([{".includes(c)) depth++;
        else if (")]}".includes(c)) depth--;
        else if (c === "," && depth === 0) {
            parts.push(args.slice(start, i));
            start = i + 1;
        }
    }
    parts.push(args.slice(start));
    return parts.map((p) => p.trim()).filter((p) => p !== "");
}

function pythonKind(value: string): ValueKind {
    if (/^-?\d+(\.\d+)?$/.test(value)) return "number";
    if (value === "True" || value === "False") return "boolean";
    if (/^(["']).*\1$/s.test(value)) return "string";
    if (value.startsWith("{")) return "object";
    if (value.startsWith("[")) return "array";
    return "expression";
}

/**
 * Reads a Python program's calls of `<module alias>.<Class>(...)` for the SDK module `module` (imported as
 * `import module as alias`), and its `pulumi.export("name", resource.attribute)` lines.
 */
export function readPythonProgram(file: string, module: string): ProgramUse & { imported: boolean } {
    const text = fs.readFileSync(file, "utf8");
    const imported = new RegExp(`^import ${module} as (\\w+)$`, "m").exec(text);
    const alias = imported?.[1] ?? module;
    const resources: DeclaredResource[] = [];
    const variables = new Map<string, string>();
    for (const m of text.matchAll(new RegExp(`^(\\w+)\\s*=\\s*${alias}\\.(\\w+)\\(`, "gm"))) {
        const args = topLevel(balanced(text, m.index! + m[0].length - 1));
        const [name, ...rest] = args;
        const logical = /^(["'])(.*)\1$/.exec(name ?? "")?.[2];
        if (logical === undefined) throw new Error(`${file}: ${m[2]}(...) has no resource name first`);
        const properties: Record<string, ValueKind> = {};
        for (const arg of rest) {
            const kw = /^(\w+)\s*=\s*([\s\S]+)$/.exec(arg);
            if (kw === null) throw new Error(`${file}: ${m[2]}(...) argument ${arg} is not a keyword argument`);
            properties[kw[1]!] = pythonKind(kw[2]!.trim());
        }
        resources.push({ name: logical, type: m[2]!, properties });
        variables.set(m[1]!, logical);
    }
    const outputs = [...text.matchAll(/^pulumi\.export\(\s*(["'])(\w+)\1\s*,\s*(\w+)\.(\w+)\s*\)$/gm)].map((m) => ({
        name: m[2]!,
        resource: variables.get(m[3]!) ?? m[3]!,
        output: m[4]!,
    }));
    return { packages: {}, resources, outputs, imported: imported !== null };
}

/** The snake_case name Pulumi's Python SDK generator gives a camelCase schema property (`kmsKeyArn` → `kms_key_arn`). */
export function pythonName(camel: string): string {
    return camel
        .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
        .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
        .toLowerCase();
}

/** The Python module Pulumi generates for a package name (`dynamodb-outbox` → `pulumi_dynamodb_outbox`). */
export function pythonModule(packageName: string): string {
    return `pulumi_${packageName.replace(/-/g, "_")}`;
}
