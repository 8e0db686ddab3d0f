/**
 * The dynamodb-outbox policy pack's entry file: the only module that constructs a `PolicyPack` (constructing
 * one starts the analyzer server). The policies themselves live beside it: `outbox-policies.ts`, `security.ts`
 * and `alarms.ts`, with `scope.ts`.
 *
 * Run: `pulumi preview --policy-pack policy` from the repository root (or any stack, with the path to here).
 *
 * @packageDocumentation
 */
import { PolicyPack } from "@pulumi/policy";
import { outboxPolicyPackArgs } from "./outbox-policies";

new PolicyPack("dynamodb-outbox", outboxPolicyPackArgs);
