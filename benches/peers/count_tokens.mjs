// The pure-JavaScript peer for raw counting speed: o200k tokens of a whole file with
// gpt-tokenizer. `node count_tokens.mjs FILE` prints the count.
import fs from "node:fs";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

const text = fs.readFileSync(process.argv[2], "utf8");
console.log(countTokens(text));
