/**
 * Run a TypeScript program's source under the shared Pulumi mocks, the way a README block or an example
 * program would run in its own project.
 */
import * as assert from "node:assert/strict";
import * as vm from "node:vm";
import * as ts from "typescript";
import * as pulumi from "@pulumi/pulumi";
import * as aws from "@pulumi/aws";

/** The modules an example may import beyond `@pulumi/pulumi` and `@pulumi/aws`, by the name it imports. */
export type ProvidedModules = Readonly<Record<string, unknown>>;

/** Transpile an example to CommonJS and wrap it as a function of `exports`, `require` and `module`. */
function compile(
    source: string,
    filename: string,
    wrapper: "function" | "async function",
): (e: unknown, r: unknown, m: unknown) => unknown {
    const out = ts.transpileModule(source, {
        fileName: filename,
        reportDiagnostics: true,
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    });
    assert.deepEqual(
        (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")),
        [],
        "the example parses",
    );
    return vm.runInThisContext(`(${wrapper} (exports, require, module) {\n${out.outputText}\n})`, { filename }) as (
        e: unknown,
        r: unknown,
        m: unknown,
    ) => unknown;
}

/** A `require` that gives the example only what the test provides, so it cannot quietly depend on anything else. */
function shim(filename: string, extra: ProvidedModules): (id: string) => unknown {
    const provided: Record<string, unknown> = { "@pulumi/pulumi": pulumi, "@pulumi/aws": aws, ...extra };
    return (id: string): unknown => {
        if (!(id in provided))
            throw new Error(`${filename} imports ${id}; the test provides only ${Object.keys(provided).join(", ")}`);
        return provided[id];
    };
}

/**
 * Runs TypeScript module source as CommonJS under the shared mocks and returns its exports. Its imports resolve
 * to this process's `@pulumi/pulumi` and `@pulumi/aws` (the instances the mocks are installed on), plus `extra`;
 * any other import fails, so the example cannot quietly depend on something a reader does not have.
 *
 * @param extra - further modules the example may import, by name. @default {}
 */
export function runModule(source: string, filename: string, extra: ProvidedModules = {}): Record<string, unknown> {
    const module = { exports: {} as Record<string, unknown> };
    compile(source, filename, "function")(module.exports, shim(filename, extra), module);
    return module.exports;
}

/**
 * {@link runModule} for an example with top-level `await` (a docs block written as an ES module): its body runs
 * as an async function, and the promise settles when the example's last statement has.
 *
 * @param extra - further modules the example may import, by name. @default {}
 */
export async function runAsyncModule(
    source: string,
    filename: string,
    extra: ProvidedModules = {},
): Promise<Record<string, unknown>> {
    const module = { exports: {} as Record<string, unknown> };
    await compile(source, filename, "async function")(module.exports, shim(filename, extra), module);
    return module.exports;
}
