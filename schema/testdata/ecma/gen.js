// Regenerates patterns.json: node gen.js > patterns.json
// Each case is an ECMA-262 pattern, the strings tried, and what
// JavaScript's RegExp says with the u flag (match) and without it
// (plain, kept to show where the flag matters). A pattern JavaScript
// rejects under the u flag has match null: the checker cannot read it.
const cases = [
  ["^\\s+$", ["\t\n\v\f\r ", "\u00a0", "\u1680", "\u2000\u200a", "\u2028\u2029", "\u202f\u205f\u3000\ufeff", "\u200b", "\u0085", "x"]],
  ["^\\S+$", ["abc", "a\u00a0b", "a\u2003b", "a\ufeffb", "a\u200bb", "a\u0085b"]],
  ["^[\\w\\s]+$", ["Price list", "Price\u00a0list", "Prix\u202ftotal", "a-b"]],
  ["^[^\\s]+$", ["abc", "a\u00a0b", "a\u3000b"]],
  ["^[\\S]+$", ["abc", "a\u00a0b", "a b"]],
  ["^[\\s\\d]+$", ["1 2", "1\u00a02", "1x2"]],
  ["^.+$", ["abc", "a\u2028b", "a\u2029b", "a\rb", "a\nb", "a\u0085b", "\ud83d\ude00"]],
  ["^.$", ["\ud83d\ude00", "x", "\u00e9"]],
  ["^[\\u0041-\\u005A]+$", ["ABC", "abc", "A1"]],
  ["^\\u0078-", ["x-a", "y-a"]],
  ["^\\u{1F600}$", ["\ud83d\ude00", "u"]],
  ["^\\uD83D\\uDE00$", ["\ud83d\ude00", "x"]],
  ["^[\\u{1F600}-\\u{1F64F}]+$", ["\ud83d\ude00\ud83d\ude4f", "a"]],
  ["^\\x41\\x{2}$", ["AA", "A\u0002"]],
  ["^\\cJ$", ["\n", "J"]],
  ["^a\\0b$", ["a\u0000b", "a0b"]],
  ["^[^]+$", ["a\nb", "\u2028"]],
  ["^[]$", ["", "a"]],
  ["^a[]?b$", ["ab"]],
  ["^[[:alpha:]]+$", ["abc", ":]", "[:]"]],
  ["^[a-c\\-]+$", ["a-b", "d"]],
  ["^[\\b]$", ["\b", "b"]],
  ["\\bfoo\\b", ["a foo b", "afoo"]],
  ["^\\/path\\.\\*$", ["/path.*", "/pathx*"]],
  ["^(?<year>\\d{4})-(?:\\d\\d)$", ["2026-12", "26-12"]],
  ["^\\p{Lu}+$", ["ABC", "\u00c9", "abc"]],
  ["^\\P{L}+$", ["123", "a1"]],
  ["^[\\p{L}\\d]+$", ["abc1", "\u00e91", "a-1"]],
  ["^a{2,3}$", ["aa", "aaaa"]],
  ["^(a|b)*?c$", ["ababc", "abd"]],
  ["^\\d+\\D$", ["12x", "123"]],
  ["^\\W$", ["-", "a"]],
  ["^a$", ["a\n", "a"]],
  ["^[\\t\\n]$", ["\t", " "]],
  ["^\\$\\^\\(\\)\\[\\]\\{\\}\\|\\+\\?$", ["$^()[]{}|+?"]],
  ["^(?!count$)[a-z]+$", ["count", "name"]],
  ["(?<=@)example\\.com$", ["a@example.com"]],
  ["^(a)\\1$", ["aa"]],
  ["^\\a$", ["a"]],
  ["^\\p{Script=Greek}$", ["\u03b1"]],
  ["^\\p{sc=Greek}\\p{gc=Lu}$", ["\u03b1A", "aA"]],
  ["^\\p{Greek}$", ["\u03b1", "p{Greek}"]],
  ["^\\p{Letter}$", ["a"]],
  ["^\\k<x>$", ["k<x>"]],
];
const out = [];
for (const [pattern, strings] of cases) {
  let u = null, plain = null;
  try { u = new RegExp(pattern, "u"); } catch (e) {}
  try { plain = new RegExp(pattern); } catch (e) {}
  out.push({
    pattern,
    strings: strings.map(s => ({
      s,
      match: u ? u.test(s) : null,
      plain: plain ? plain.test(s) : null,
    })),
  });
}
console.log(JSON.stringify(out, null, 1));
