/**
 * A consumer's project with this package installed the way npm installs it: `npm run build`, `npm pack`, then
 * `npm install --offline --no-audit --no-fund <tarball>` into a fresh project, from the local npm cache only, so
 * no network is needed. Used by `tests/e2e/package/consume.test.ts` and by the bench's installed-layout figures.
 *
 * `npm ci` (what CI runs first) fills the cache with the lock's tarballs and their abbreviated registry
 * documents, but npm 11 resolves a dependency with no lock entry through the *full* registry document, which
 * `npm ci` never fetches: a bare `npm install --offline <tarball>` fails with ENOTCACHED on the first dependency.
 * So the consumer starts with a package-lock.json that lists this repository's locked versions of the tarball's
 * production dependency closure: the closure is walked from the `dependencies` of the package.json inside the
 * tarball, through the repository's package-lock.json. npm then reads the tarball's manifest itself, checks each
 * dependency against those entries, installs them from the cache and links the `bin`. A dependency the tarball
 * does not declare is not installed, as in a real consumer. `--prefer-offline` was not used: it would fetch every
 * full registry document and resolve newer versions than the lock's. No `--legacy-peer-deps` is needed: the
 * closure holds every required peer.
 *
 * @packageDocumentation
 */
import * as assert from "node:assert/strict";
import { spawnSync, SpawnSyncReturns } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Ran } from "../run-async";

/** This repository's root. */
export const REPO = path.resolve(__dirname, "..", "..", "..");

/** The consumer fixtures: the Pulumi program, the application and the Lambda host. */
export const FIXTURES = path.join(__dirname, "fixtures");

/** This repository's package.json: the name and version the tarball carries. */
export const MANIFEST = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")) as {
    name: string;
    version: string;
};

/** One `packages` entry of a package-lock.json (lockfileVersion 3). */
export interface LockEntry {
    version?: string;
    dev?: boolean;
    devOptional?: boolean;
    peer?: boolean;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    [field: string]: unknown;
}

/** This repository's package-lock.json `packages`, by location (`node_modules/a`). */
export function repositoryLock(): Record<string, LockEntry> {
    return (
        JSON.parse(fs.readFileSync(path.join(REPO, "package-lock.json"), "utf8")) as {
            packages: Record<string, LockEntry>;
        }
    ).packages;
}

/**
 * The lock locations (`node_modules/a`, `node_modules/a/node_modules/b`) that `roots` need, walked through
 * `lock` as Node resolves: from the requiring package's folder up to the root. Required peers are followed,
 * optional ones are not.
 *
 * @param lock - a package-lock.json's `packages`.
 * @param roots - the package names to start from.
 * @throws when a dependency has no lock entry: the package.json and package-lock.json are out of step.
 */
export function lockClosure(lock: Record<string, LockEntry>, roots: readonly string[]): Set<string> {
    const locate = (from: string, name: string): string | undefined => {
        for (let base = from; ;) {
            const location = `${base === "" ? "" : `${base}/`}node_modules/${name}`;
            if (lock[location] !== undefined) return location;
            if (base === "") return undefined;
            const up = base.lastIndexOf("/node_modules/");
            base = up < 0 ? "" : base.slice(0, up);
        }
    };
    const seen = new Set<string>();
    const queue: [string, string][] = roots.map((name) => ["", name]);
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        const [from, name] = next;
        const location = locate(from, name);
        if (location === undefined) {
            throw new Error(
                `${name} (needed by ${from || "the packed package.json"}) has no entry in package-lock.json: the lock is out of step with package.json; run npm install and commit package-lock.json`,
            );
        }
        if (seen.has(location)) continue;
        seen.add(location);
        const entry = lock[location]!;
        for (const dep of [...Object.keys(entry.dependencies ?? {}), ...Object.keys(entry.optionalDependencies ?? {})])
            queue.push([location, dep]);
        for (const dep of Object.keys(entry.peerDependencies ?? {}))
            if (entry.peerDependenciesMeta?.[dep]?.optional !== true) queue.push([location, dep]);
    }
    return seen;
}

/**
 * The consumer's package-lock.json before the install: this repository's locked versions of the tarball's
 * production closure (its `dependencies` and `optionalDependencies`, as npm installs both for a consumer; its
 * peers are optional, so npm installs none of them), of the consumer's own `dependencies` (the Pulumi packages of
 * a Pulumi project) and of its devDependencies (flagged dev when only they need them). The package itself is not
 * in it: npm adds it from the tarball.
 *
 * @param packedDependencies - the tarball's `dependencies` and `optionalDependencies`, merged.
 * @param devDependencies - the consumer's own devDependencies.
 * @param dependencies - the consumer's own dependencies. @default none
 * @param lock - the lock whose entries are copied. @default this repository's, {@link repositoryLock}
 */
export function consumerLock(
    packedDependencies: Record<string, string>,
    devDependencies: Record<string, string>,
    dependencies: Record<string, string> = {},
    lock: Record<string, LockEntry> = repositoryLock(),
): object {
    const production = lockClosure(lock, [...Object.keys(packedDependencies), ...Object.keys(dependencies)]);
    const dev = lockClosure(lock, Object.keys(devDependencies));
    const root = {
        name: "consumer",
        version: "1.0.0",
        ...(Object.keys(dependencies).length > 0 ? { dependencies } : {}),
        ...(Object.keys(devDependencies).length > 0 ? { devDependencies } : {}),
    };
    const packages: Record<string, object> = { "": root };
    for (const location of [...new Set([...production, ...dev])].sort()) {
        const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = lock[location]!;
        packages[location] = production.has(location) ? entry : { ...entry, dev: true };
    }
    return { name: "consumer", version: "1.0.0", lockfileVersion: 3, requires: true, packages };
}

/**
 * The environment for npm in the consumer: this process's, without the `npm_*` variables an enclosing
 * `npm test` sets (`npm_config_local_prefix` would point npm at this repository), but with `npm_config_cache`,
 * so that a cache chosen that way still applies.
 */
export function npmEnvironment(): NodeJS.ProcessEnv {
    return Object.fromEntries(
        Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) || /^npm_config_cache$/i.test(key)),
    );
}

/**
 * Run `command` to completion, collecting its output (64 MB at most).
 *
 * @param command - the executable.
 * @param args - its arguments.
 * @param options - its working directory, and its environment. @default this process's environment
 * @throws the spawn error when it could not start.
 */
export function run(
    command: string,
    args: string[],
    options: { cwd: string; env?: NodeJS.ProcessEnv },
): SpawnSyncReturns<string> {
    const result = spawnSync(command, args, {
        cwd: options.cwd,
        env: options.env ?? process.env,
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
    });
    if (result.error) throw result.error;
    return result;
}

/**
 * The command's stdout, after asserting that it exited 0 (the assertion shows its output).
 *
 * @param result - how the command ended.
 * @param what - what it was, for the message.
 */
export function ok(result: Ran, what: string): string {
    assert.equal(
        result.status,
        0,
        `${what} exited ${result.status}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
    return result.stdout;
}

/**
 * The environment of the consumer's programs: `PATH` and a scratch `HOME` (so that no user's Pulumi or npm
 * settings apply), nothing else: no `NODE_PATH`, no `npm_*`.
 *
 * @param home - a scratch folder.
 */
export function consumerEnvironment(home: string): NodeJS.ProcessEnv {
    return { PATH: process.env.PATH ?? "", HOME: home, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" };
}

/** The package.json inside the tarball: the fields the tests read. */
export interface PackedManifest {
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    scripts?: Record<string, string>;
    engines?: Record<string, string>;
    bin?: unknown;
}

/** The package built and packed, as `npm pack` leaves it. */
export interface PackedPackage {
    /** The tarball's path. */
    readonly tarball: string;
    /** The tarball's file name. */
    readonly tarballName: string;
    /** The packed files, sorted, as `npm pack --json` lists them. */
    readonly packed: string[];
    /** The package.json inside the tarball. */
    readonly packedManifest: PackedManifest;
    /** The tarball's bytes and the unpacked files' bytes, as `npm pack --json` reports them. */
    readonly packedBytes: { readonly tarball: number; readonly unpacked: number };
}

/** The consumer's project after the install. */
export interface ConsumerProject extends PackedPackage {
    /** The project's folder (the consumer's `package.json`, `node_modules`). */
    readonly project: string;
    /** Where npm installed this package: `<project>/node_modules/<name>`. */
    readonly installed: string;
    /** What `npm install` printed on stderr (its warnings). */
    readonly installLog: string;
}

/**
 * The Pulumi packages of a Pulumi project as `pulumi new aws-typescript` makes it, at this repository's locked
 * versions (its devDependencies, pinned at the latest releases), plus `@pulumi/policy` for the policy entry.
 */
export function pulumiConsumerDependencies(): Record<string, string> {
    const lock = repositoryLock();
    return Object.fromEntries(
        ["@pulumi/aws", "@pulumi/policy", "@pulumi/pulumi"].map((name) => [
            name,
            lock[`node_modules/${name}`]!.version!,
        ]),
    );
}

/**
 * Build this package and pack it into `work`. Fails (assertion) with npm's output when a step fails.
 *
 * @param work - the folder that receives the tarball.
 */
export function packPackage(work: string): PackedPackage {
    ok(run("npm", ["run", "--silent", "build"], { cwd: REPO }), "npm run build");
    // --ignore-scripts: prepack would build a second time.
    const pack = JSON.parse(
        ok(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], { cwd: REPO }), "npm pack"),
    ) as { filename: string; files: { path: string }[]; size: number; unpackedSize: number }[];
    const packed = pack[0]!.files.map((f) => f.path).sort();
    const tarballName = pack[0]!.filename;
    const tarball = path.join(work, tarballName);
    const packedManifest = JSON.parse(
        ok(run("tar", ["-xOzf", tarball, "package/package.json"], { cwd: work }), "tar (package.json)"),
    ) as PackedManifest;
    const packedBytes = { tarball: pack[0]!.size, unpacked: pack[0]!.unpackedSize };
    return { tarball, tarballName, packed, packedManifest, packedBytes };
}

/**
 * Install the packed package into `<work>/<name>`, a fresh project with `dependencies` and `devDependencies` of
 * its own, offline (see the module notes). Fails (assertion) with npm's output when the install fails.
 */
function installInto(
    work: string,
    name: string,
    pack: PackedPackage,
    dependencies: Record<string, string>,
    devDependencies: Record<string, string>,
    lock: Record<string, LockEntry> = repositoryLock(),
): ConsumerProject {
    const project = path.join(work, name);
    fs.mkdirSync(project);
    const manifest = {
        name: "consumer",
        version: "1.0.0",
        private: true,
        main: "index.js",
        ...(Object.keys(dependencies).length > 0 ? { dependencies } : {}),
        ...(Object.keys(devDependencies).length > 0 ? { devDependencies } : {}),
    };
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify(manifest, null, 2));
    const shipped = {
        ...(pack.packedManifest.dependencies ?? {}),
        ...(pack.packedManifest.optionalDependencies ?? {}),
    };
    fs.writeFileSync(
        path.join(project, "package-lock.json"),
        JSON.stringify(consumerLock(shipped, devDependencies, dependencies, lock), null, 2),
    );
    const installed = run("npm", ["install", "--offline", "--no-audit", "--no-fund", pack.tarball], {
        cwd: project,
        env: npmEnvironment(),
    });
    ok(installed, `npm install --offline ${pack.tarballName} in ${name}`);
    return {
        ...pack,
        project,
        installed: path.join(project, "node_modules", MANIFEST.name),
        installLog: installed.stderr,
    };
}

/**
 * Build, pack and install this package into `<work>/project`, a Pulumi project as `pulumi new aws-typescript`
 * leaves it: `@pulumi/pulumi` and `@pulumi/aws` (and `@pulumi/policy`) at the latest releases as its own
 * dependencies, `@types/node` as its devDependency, and `@aws-sdk/client-dynamodb-streams` too, as a project whose
 * tests use the test kit installs it (an optional peer: the kit's mapping reads through it, and its types name it),
 * and `@aws-sdk/client-s3`, as a project whose `OutboxConsumer` reads claim checks installs it (an optional peer).
 * Fails (assertion) with npm's output when a step fails.
 *
 * @param work - an empty folder that receives the tarball and the project.
 * @param pack - the packed package. @default built and packed into `work`
 */
export function installConsumerProject(work: string, pack: PackedPackage = packPackage(work)): ConsumerProject {
    const lock = repositoryLock();
    const devDependencies = Object.fromEntries(
        ["@types/node", "@aws-sdk/client-dynamodb-streams", "@aws-sdk/client-s3"].map((name) => [
            name,
            lock[`node_modules/${name}`]!.version!,
        ]),
    );
    return installInto(work, "project", pack, pulumiConsumerDependencies(), devDependencies);
}

/**
 * Install the packed package into `<work>/app`, a plain Node application with no dependency of its own (one that
 * only writes events with `dynamodb-outbox/runtime`). Fails (assertion) with npm's output when the install fails.
 *
 * @param work - the folder of the tarball.
 * @param pack - the packed package, from {@link packPackage}.
 */
export function installRuntimeApp(work: string, pack: PackedPackage): ConsumerProject {
    return installInto(work, "app", pack, {}, {});
}

/**
 * The repository's devDependency that installs a newer `@aws-sdk/client-dynamodb` than the lower bound of the
 * package's caret range, under an npm alias (`npm:@aws-sdk/client-dynamodb@<version>`): `npm ci` puts its tarball,
 * and those of its dependencies, in the npm cache, so a consumer can install it offline.
 */
export const NEWER_DYNAMODB_ALIAS = "aws-sdk-client-dynamodb-newer";

/**
 * `lock` with the aliased package's entries (`node_modules/<alias>`, and what npm nested under it) moved to the
 * package's own name, in place of that name's entries: the lock of a project that depends on that version by name.
 *
 * @param lock - a package-lock.json's `packages`.
 * @param alias - the alias's folder name.
 * @param name - the package it stands for.
 * @throws when `lock` has no entry for `alias`.
 */
export function lockWithAliasAs(
    lock: Record<string, LockEntry>,
    alias: string,
    name: string,
): Record<string, LockEntry> {
    const from = `node_modules/${alias}`;
    const to = `node_modules/${name}`;
    if (lock[from] === undefined) throw new Error(`package-lock.json has no ${from}: run npm ci`);
    const under = (location: string, root: string): boolean => location === root || location.startsWith(`${root}/`);
    const moved: Record<string, LockEntry> = {};
    for (const [location, entry] of Object.entries(lock)) {
        if (under(location, to)) continue;
        if (!under(location, from)) moved[location] = entry;
        else if (location === from) {
            const { name: _aliased, ...own } = entry;
            moved[to] = own;
        } else moved[to + location.slice(from.length)] = entry;
    }
    return moved;
}

/**
 * Install the packed package into `<work>/<name>`, a plain Node application that writes events and
 * depends, by name, on a newer `@aws-sdk/client-dynamodb` than the lower bound of the package's range: the version
 * of {@link NEWER_DYNAMODB_ALIAS}. Fails (assertion) with npm's output when the install fails.
 *
 * @param work - the folder of the tarball.
 * @param pack - the packed package, from {@link packPackage}.
 * @param name - the project's folder under `work`. @default "newer-sdk-app"
 * @returns the project, and the version of `@aws-sdk/client-dynamodb` it asked for.
 */
export function installNewerSdkApp(
    work: string,
    pack: PackedPackage,
    name = "newer-sdk-app",
): ConsumerProject & { readonly dynamodbVersion: string } {
    const lock = lockWithAliasAs(repositoryLock(), NEWER_DYNAMODB_ALIAS, "@aws-sdk/client-dynamodb");
    const dynamodbVersion = lock["node_modules/@aws-sdk/client-dynamodb"]!.version!;
    const project = installInto(work, name, pack, { "@aws-sdk/client-dynamodb": dynamodbVersion }, {}, lock);
    return { ...project, dynamodbVersion };
}

/** Every installed package folder under `modules` (a `node_modules`), at any depth: `@scope/name` or `name`. */
export function installedPackages(modules: string): string[] {
    const found: string[] = [];
    const walk = (dir: string): void => {
        if (!fs.existsSync(dir)) return;
        for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
            if (entry.name.startsWith(".")) continue;
            const folders =
                entry.name.startsWith("@") && entry.isDirectory()
                    ? fs.readdirSync(path.join(dir, entry.name)).map((n) => path.join(dir, entry.name, n))
                    : [path.join(dir, entry.name)];
            for (const folder of folders) {
                if (!fs.existsSync(path.join(folder, "package.json"))) continue;
                found.push(folder);
                walk(path.join(folder, "node_modules"));
            }
        }
    };
    walk(modules);
    return found.sort();
}

/** The bytes of every file under `dir` (links not followed). */
export function bytesUnder(dir: string): number {
    let total = 0;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) total += bytesUnder(full);
        else if (entry.isFile()) total += fs.statSync(full).size;
    }
    return total;
}

/**
 * Run the consumer's Pulumi program (`fixtures/consumer-program.js`, copied to `<project>/index.js`, with
 * the `fixtures/mock-cloud.js` it requires beside it) under fresh
 * mocks in a child process: it declares `new Outbox("orders", {})` and writes each function's archive to
 * `<out>/publisher` and `<out>/sweeper`, then prints one JSON line describing them (see {@link ConsumerArchives}).
 *
 * @param project - the consumer's project, from {@link installConsumerProject}.
 * @param out - the folder the archives are written to.
 * @param env - the program's environment (no `NODE_PATH`, no `npm_*`).
 * @returns how the program ended; parse its output with {@link consumerArchivesOf}.
 */
export function runConsumerProgram(project: string, out: string, env: NodeJS.ProcessEnv): SpawnSyncReturns<string> {
    fs.copyFileSync(path.join(FIXTURES, "consumer-program.js"), path.join(project, "index.js"));
    fs.copyFileSync(path.join(FIXTURES, "mock-cloud.js"), path.join(project, "mock-cloud.js"));
    return run(process.execPath, ["index.js", out], { cwd: project, env });
}

/** One function's archive as the consumer program wrote it. */
export interface ArchiveReport {
    /** Each archive entry's name, and whether it was a text asset or a file or folder. */
    entries: Record<string, "text" | "path">;
    /** The function's environment variables as the component set them. */
    environment: Record<string, string>;
}

/** What the consumer program saw of the component it declared. */
export interface ComponentReport {
    /** `outbox instanceof pulumi.ComponentResource`, with the program's own `@pulumi/pulumi`. */
    instanceOfComponentResource: boolean;
    /** Where `@pulumi/pulumi` resolves from the program, and from the installed package's `dist/`. */
    pulumiFromProgram: string;
    pulumiFromPackage: string;
}

/** The publisher's and sweeper's archives, as the consumer program describes them, and the component. */
export type ConsumerArchives = { publisher: ArchiveReport; sweeper: ArchiveReport; component: ComponentReport };

/**
 * The archives the consumer program recorded, from its last line of output; fails (assertion) with the
 * program's output if it failed.
 *
 * @param program - how {@link runConsumerProgram} ended.
 */
export function consumerArchivesOf(program: Ran): ConsumerArchives {
    return JSON.parse(
        ok(program, "the consumer program (node index.js in the consumer project)").trim().split("\n").pop() as string,
    ) as ConsumerArchives;
}
