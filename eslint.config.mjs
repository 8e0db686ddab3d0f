// The linter (`npm run lint`, part of `npm test`): typescript-eslint's recommended rules, no import cycle, the
// layers of docs/contributing.md#the-layers as import rules, and a warning for a function longer than a screen.
// tests/unit/lint/lint.test.ts runs this file, as it is, on a small tree with each fault in it.
import js from "@eslint/js";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import importX from "eslint-plugin-import-x";
import { defineConfig } from "eslint/config";
import globals from "globals";
import tseslint from "typescript-eslint";

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
        plugins: { "import-x": importX },
        settings: {
            // Every tsconfig extends tsconfig.base.json and none maps paths, so one config resolves the whole tree.
            "import-x/resolver-next": [createTypeScriptImportResolver({ project: `${root}/tsconfig.base.json` })],
            "import-x/extensions": [".ts", ".js", ".mjs"],
        },
        rules: {
            // Type-only imports are erased from the JavaScript, so the rule does not follow them.
            "import-x/no-cycle": ["error", { ignoreExternal: true }],
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
