// The unit tier's mocha config (`npm run test:unit`): the repository's .mocharc.json, plus the hook that refuses
// every child process, loaded after ts-node so that it is compiled like the tests.
const base = require("../../.mocharc.json");

module.exports = { ...base, require: [...base.require, "tests/support/unit-tier.ts"] };
