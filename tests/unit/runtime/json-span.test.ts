/**
 * jsonTextAt: the text of a value inside a JSON document, as written there (the inbox reads an EventBridge event's
 * `detail.payload` with it). No I/O.
 */
import assert from "node:assert/strict";
import { jsonTextAt } from "../../../runtime/inbox/json-span";

describe("jsonTextAt", function () {
    it("gives a nested value's own text: big numbers, 1.0 and spacing kept", function () {
        const text =
            '{ "version":"0", "detail" : { "outbox":{"id":"a"},\n "payload" : {"n": 12345678901234567890, "f": 1.0} } }';
        assert.equal(jsonTextAt(text, ["detail", "payload"]), '{"n": 12345678901234567890, "f": 1.0}');
        assert.equal(jsonTextAt(text, ["detail", "payload", "n"]), "12345678901234567890");
        assert.equal(jsonTextAt(text, ["version"]), '"0"');
        assert.equal(jsonTextAt(text, []), text.trim());
    });
    it("reads past strings holding quotes, braces and brackets, and past arrays", function () {
        const text = '{"a":"x\\"}]{[","b":[1,{"c":"}"},[2]],"payload":[1,"]",{"d":null}],"z":true}';
        assert.equal(jsonTextAt(text, ["payload"]), '[1,"]",{"d":null}]');
        assert.equal(jsonTextAt(text, ["z"]), "true");
        assert.equal(jsonTextAt(text, ["b"]), '[1,{"c":"}"},[2]]');
    });
    it("takes the last of a repeated name, as JSON.parse does", function () {
        const text = '{"p":1,"p":{"q":2}}';
        assert.equal(jsonTextAt(text, ["p"]), '{"q":2}');
        assert.deepEqual(JSON.parse(jsonTextAt(text, ["p"])!), JSON.parse(text).p);
    });
    it("is undefined for a missing member, or a path through a value that is not an object", function () {
        assert.equal(jsonTextAt('{"a":{"b":1}}', ["a", "c"]), undefined);
        assert.equal(jsonTextAt('{"a":[{"b":1}]}', ["a", "b"]), undefined);
        assert.equal(jsonTextAt('{"a":"{\\"b\\":1}"}', ["a", "b"]), undefined);
        assert.equal(jsonTextAt("[1]", ["a"]), undefined);
        assert.equal(jsonTextAt("{}", ["a"]), undefined);
    });
});
