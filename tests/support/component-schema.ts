/**
 * Pulumi's component schema analyzer (what `pulumi package add` and the provider host run to generate other
 * languages' SDKs) run over this package, as the multi-language tests of every component read it.
 */
import * as assert from "node:assert/strict";
import * as path from "node:path";

/** The repository root, where package.json and the components live. */
const root = path.join(__dirname, "..", "..");

/** This package's package.json. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- JSON by a computed path
const pkg: { name: string } = require(path.join(root, "package.json"));

/**
 * The type token component hosting validates: `<package name>:index:<class name>`.
 * @param className - The component's class name.
 */
export function typeToken(className: string): string {
    return `${pkg.name}:index:${className}`;
}

/** What the analyzer says of the components it was asked for and the types they use (its schema, loosely typed). */
export interface AnalyzedSchema {
    /** Each component by class name: its `inputs`, `outputs` and `description`. */
    readonly components: Record<string, any>;
    /** Each named type (enum, object) the components use, by name. */
    readonly typeDefinitions: Record<string, any>;
}

/**
 * Runs the analyzer over this package for the named components.
 * @param classNames - The components' class names.
 */
export function analyzeComponents(...classNames: string[]): AnalyzedSchema {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- experimental API of @pulumi/pulumi
    const { Analyzer } = require("@pulumi/pulumi/provider/experimental/analyzer");
    return new Analyzer(root, "dynamodb-outbox", pkg, new Set(classNames)).analyze();
}

/**
 * The values of a named enum in the schema.
 * @param schema - The analyzer's schema.
 * @param name - The enum type's name.
 */
export function enumValues(schema: AnalyzedSchema, name: string): string[] {
    return schema.typeDefinitions[name].enum.map((e: { value: string }) => e.value);
}

/**
 * Asserts that each named input has the type and takes an expression (is not `plain`).
 * @param component - The analyzed component.
 * @param inputs - The input names.
 * @param type - The schema type each has.
 */
export function assertExpressionInputs(component: any, inputs: readonly string[], type: string): void {
    for (const input of inputs) {
        assert.equal(component.inputs[input]?.type, type, input);
        assert.notEqual(component.inputs[input].plain, true, `${input} takes an expression`);
    }
}
