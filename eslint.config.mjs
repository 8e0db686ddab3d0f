// The linter (`npm run lint`, part of `npm test`): typescript-eslint's recommended rules, no import cycle (type-only
// imports included), the layers of docs/contributing.md#the-layers and the runtime's rooms as import rules, and a
// warning for a function longer than a screen.
// tests/unit/lint/lint.test.ts runs this file, as it is, on a small tree with each fault in it.
import * as fs from "node:fs";
import * as path from "node:path";
import js from "@eslint/js";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import importX from "eslint-plugin-import-x";
import { defineConfig } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";
import ts from "typescript";

// The repository root: every path below is relative to it.
const root = import.meta.dirname;

/** What ships: the folders tsconfig.build.json compiles into dist/, the launcher and the entry. */
const SHIPPED = ["runtime", "components", "policy", "cli", "bin", "index.ts"];

/**
 * The layers, as import-x/no-restricted-paths zones: no file under `target` imports a file under `from`. The
 * rule judges the file an import resolves to, however it is spelled. Packages are no-restricted-imports' job.
 */
const ZONES = [
    {
        target: "runtime",
        from: ["components", "policy", "cli", "bin", "program", "index.ts"],
        message: "runtime/ runs in an application or a Lambda: it imports only runtime/ and the AWS SDK.",
    },
    {
        target: ["runtime/*.ts", "runtime/!(testing)/**"],
        from: ["runtime/testing/**"],
        message: "runtime/testing/ is the test kit (dynamodb-outbox/testing): nothing else in the runtime imports it.",
    },
    {
        target: "runtime/relay",
        from: ["runtime/writer", "runtime/inbox"],
        message:
            "runtime/relay/ never imports the writer or the inbox: they share only what sits below them (the runtime's root files, record/, store/, destination/, observability/).",
    },
    {
        target: "runtime/inbox",
        from: ["runtime/writer", "runtime/relay"],
        message: "runtime/inbox/ (the consumer's side) never imports the writer or the relay.",
    },
    {
        target: "runtime/writer",
        from: ["runtime/relay", "runtime/inbox"],
        message: "runtime/writer/ never imports the relay or the inbox.",
    },
    {
        target: "runtime/claim-check",
        from: ["runtime/writer", "runtime/relay"],
        message:
            "runtime/claim-check/ serves the writer and the inbox: it never imports the writer or the relay (what it shares with the writer sits in record/).",
    },
    {
        target: [
            "runtime/!(index).ts",
            "runtime/record",
            "runtime/store",
            "runtime/destination",
            "runtime/observability",
        ],
        from: ["runtime/writer", "runtime/relay", "runtime/inbox", "runtime/claim-check"],
        message:
            "The runtime's root files (but the entry), record/, store/, destination/ and observability/ are what the writer, the relay, the inbox and the claim check share: they never import them.",
    },
    {
        target: "runtime/observability",
        from: ["runtime/record", "runtime/store", "runtime/destination"],
        message: "runtime/observability/ imports only the runtime's root files.",
    },
    {
        target: "components",
        from: ["policy", "cli", "bin", "program", "index.ts"],
        message: "components/ imports runtime/ and Pulumi; the policy pack, the CLI and the entry sit above it.",
    },
    {
        target: "policy",
        from: ["cli", "bin", "program", "index.ts"],
        message: "policy/ imports runtime/ and components/, nothing above them.",
    },
    {
        target: "index.ts",
        from: ["policy", "cli", "bin", "program"],
        message: "The package entry (dynamodb-outbox) is runtime/ and components/; the policy pack has its own entry.",
    },
    {
        target: ["cli", "bin"],
        from: ["components", "policy", "program", "index.ts"],
        message: "The CLI imports runtime/ and the AWS SDK, never the Pulumi side.",
    },
    {
        target: "cli/shared",
        from: ["cli/verify", "cli/migrate", "cli/doctor", "cli/redrive", "cli/main.ts"],
        message: "Each command's folder imports cli/shared/, never the other way.",
    },
    {
        target: [...SHIPPED, "program"],
        from: ["dev", "tests", "examples"],
        message: "What ships never imports what is for development only.",
    },
];

/**
 * `outbox/no-cycle`: no import cycle, type-only imports included. import-x/no-cycle (4.x) skips every type-only
 * import and has no option to follow them, yet a type-only circle still means two modules each need the other to be
 * understood. This rule reads each module's relative imports with TypeScript (`import`, `import type`,
 * `export … from`, `require`, `import()`), resolves them as tsc does, and reports an import whose module leads back
 * to the importing file. Packages are not followed.
 */
const noCycle = {
    meta: {
        type: "problem",
        docs: { description: "No import cycle, type-only imports included." },
        schema: [],
        messages: { cycle: "Dependency cycle detected (type-only imports count): {{via}} leads back to this file." },
    },
    create(context) {
        const file = path.resolve(context.physicalFilename);
        if (!fs.existsSync(file)) return {};
        const check = (node) => {
            const spec = node.source?.value ?? node.moduleReference?.expression?.value;
            if (typeof spec !== "string") return;
            const target = resolveRelative(spec, file);
            if (target !== undefined && target !== file && sameComponent(target, file))
                context.report({ node, messageId: "cycle", data: { via: spec } });
        };
        return {
            ImportDeclaration: check,
            ExportNamedDeclaration: check,
            ExportAllDeclaration: check,
            ImportExpression: check,
            TSImportEqualsDeclaration: check,
            CallExpression: (node) => {
                const [arg] = node.arguments;
                if (node.callee.type === "Identifier" && node.callee.name === "require" && arg?.type === "Literal")
                    check({ ...node, source: arg });
            },
        };
    },
};

const RESOLVE_OPTIONS = {
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    allowJs: true,
    resolveJsonModule: true,
};

/** The project file `spec` names from `from`, or undefined for a package or an unresolved name. */
function resolveRelative(spec, from) {
    if (!spec.startsWith(".")) return undefined;
    const resolved = ts.resolveModuleName(spec, from, RESOLVE_OPTIONS, ts.sys).resolvedModule;
    if (resolved === undefined || resolved.isExternalLibraryImport) return undefined;
    return path.resolve(resolved.resolvedFileName);
}

/** Each file's resolved imports, by path and modification time: a lint run reads each file once. */
const importsCache = new Map();
function importsOf(file) {
    const key = `${file}:${fs.statSync(file).mtimeMs}`;
    let imports = importsCache.get(key);
    if (imports === undefined) {
        const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true);
        imports = importedFiles.map((i) => resolveRelative(i.fileName, file)).filter((f) => f !== undefined);
        importsCache.set(key, imports);
    }
    return imports;
}

/** Whether `a` and `b` import each other, directly or not: one strongly connected component (Tarjan's). */
function sameComponent(a, b) {
    const index = new Map();
    const low = new Map();
    const component = new Map();
    const stack = [];
    let next = 0;
    const visit = (v) => {
        index.set(v, next);
        low.set(v, next);
        next += 1;
        stack.push(v);
        for (const w of importsOf(v)) {
            if (!index.has(w)) {
                visit(w);
                low.set(v, Math.min(low.get(v), low.get(w)));
            } else if (!component.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
        }
        if (low.get(v) === index.get(v)) {
            let w;
            do {
                w = stack.pop();
                component.set(w, v);
            } while (w !== v);
        }
    };
    visit(b);
    return component.has(a) && component.get(a) === component.get(b);
}

/** The `no-restricted-imports` setting that forbids the packages of `patterns`. */
const forbidPackages = (...patterns) => ["error", { patterns }];
const PULUMI = { group: ["@pulumi/*"], message: "runtime/ and the CLI never import Pulumi." };
const PULUMI_POLICY = {
    group: ["@pulumi/policy", "@pulumi/policy/*"],
    message: "Only policy/ imports @pulumi/policy.",
};

export default defineConfig(
    {
        // .gitignore's folders, and the generated API pages.
        ignores: ["dist/", "docs/api/", "**/node_modules/", ".serialized/", ".docs-blocks*/", "tmp/", "scratch/"],
    },
    js.configs.recommended,
    tseslint.configs.recommended,
    {
        languageOptions: { globals: globals.node },
        linterOptions: { reportUnusedDisableDirectives: "error" },
        rules: {
            // tsc's noUnusedLocals (tsconfig.base.json) checks this already, and counts a TSDoc {@link} as a use.
            "@typescript-eslint/no-unused-vars": "off",
            // `import x = require(…)` keeps the module object itself, which tests/support/unit-tier.ts patches.
            "@typescript-eslint/no-require-imports": ["error", { allowAsImport: true }],
        },
    },
    {
        // The launcher and the fixtures Node and Lambda load are CommonJS on purpose.
        files: ["**/*.js"],
        languageOptions: { sourceType: "commonjs" },
        rules: { "@typescript-eslint/no-require-imports": "off" },
    },
    {
        // The tests write holes on purpose: the writer and the inbox refuse sparse arrays, by name.
        files: ["tests/**"],
        rules: { "no-sparse-arrays": "off" },
    },
    {
        // `any` stays where the code meets untyped shapes: Pulumi's CallbackFunction<any, any> and resource
        // inputs, test doubles. runtime/ and cli/ have none, and keep it that way.
        files: ["**/*.ts"],
        ignores: ["runtime/**", "cli/**"],
        rules: { "@typescript-eslint/no-explicit-any": "off" },
    },
    {
        plugins: { "import-x": importX, outbox: { rules: { "no-cycle": noCycle } } },
        settings: {
            // Every tsconfig extends tsconfig.base.json and none maps paths, so one config resolves the whole tree.
            "import-x/resolver-next": [createTypeScriptImportResolver({ project: `${root}/tsconfig.base.json` })],
            "import-x/extensions": [".ts", ".js", ".mjs"],
        },
        rules: {
            // import-x/no-cycle does not follow type-only imports; outbox/no-cycle (above) does, and finds the others too.
            "outbox/no-cycle": "error",
            "import-x/no-restricted-paths": ["error", { basePath: root, zones: ZONES }],
        },
    },
    {
        files: SHIPPED.map((p) => (p.endsWith(".ts") ? p : `${p}/**`)),
        rules: {
            // An install has the dependencies and, optionally, the Pulumi peers; never a devDependency.
            "import-x/no-extraneous-dependencies": [
                "error",
                { devDependencies: false, optionalDependencies: false, peerDependencies: true, packageDir: root },
            ],
        },
    },
    { files: ["runtime/**", "cli/**", "bin/**"], rules: { "no-restricted-imports": forbidPackages(PULUMI) } },
    { files: ["components/**", "index.ts"], rules: { "no-restricted-imports": forbidPackages(PULUMI_POLICY) } },
    {
        files: ["runtime/schema.ts"],
        rules: {
            "no-restricted-syntax": [
                "error",
                {
                    selector:
                        "ImportDeclaration, ImportExpression, ExportAllDeclaration, ExportNamedDeclaration[source]",
                    message:
                        "runtime/schema.ts imports nothing: Lambda code, Pulumi programs and policy packs all load it.",
                },
            ],
        },
    },
    {
        // One screen of code: blank lines and comments (the why) do not count.
        files: ["runtime/**", "components/**", "policy/**", "cli/**"],
        rules: { "max-lines-per-function": ["warn", { max: 80, skipBlankLines: true, skipComments: true }] },
    },
);
