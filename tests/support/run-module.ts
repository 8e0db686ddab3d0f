/**
 * Run a TypeScript program's source under the shared Pulumi mocks, the way a README block or an example
 * program would run in its own project.
 */
import * as assert from "node:assert/strict";
import * as vm from "node:vm";
import * as ts from "typescript";
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";

/**
 * Runs TypeScript module source as CommonJS under the shared mocks and returns its exports. Its imports resolve
 * to this process's `@pulumi/pulumi` and `@pulumi/aws` (the instances the mocks are installed on); any other
 * import fails, so the example cannot quietly depend on something a reader does not have.
 */
export function runModule(source: string, filename: string): Record<string, unknown> {
    const out = ts.transpileModule(source, { fileName: filename, reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
    assert.deepEqual((out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")), [], "the example parses");
    const provided: Record<string, unknown> = { "@pulumi/pulumi": pulumi, "@pulumi/aws": aws };
    const shimRequire = (id: string): unknown => {
        if (!(id in provided)) throw new Error(`${filename} imports ${id}; the test provides only ${Object.keys(provided).join(", ")}`);
        return provided[id];
    };
    const module = { exports: {} as Record<string, unknown> };
    const run = vm.runInThisContext(`(function (exports, require, module) {\n${out.outputText}\n})`, { filename }) as (e: unknown, r: unknown, m: unknown) => void;
    run(module.exports, shimRequire, module);
    return module.exports;
}

