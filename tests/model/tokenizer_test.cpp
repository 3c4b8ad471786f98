// The byte-level BPE tokenizer on a tiny tokenizer.json written here: the
// 256 byte symbols (GPT-2's bytes_to_unicode, re-derived below), a few
// merges, added tokens and a template; pre-tokenisation of each known regex
// on strings that reach each of its alternatives (expected pieces derived by
// hand from the regexes' ordered alternation).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "hal/error.h"
#include "hal/io/json_writer.h"
#include "model/tokenizer.h"

namespace hal::model {
namespace {

std::string utf8(char32_t cp) {
  std::string s;
  if (cp < 0x80) s += static_cast<char>(cp);
  else if (cp < 0x800) s += static_cast<char>(0xC0 | (cp >> 6)), s += static_cast<char>(0x80 | (cp & 0x3F));
  else s += static_cast<char>(0xE0 | (cp >> 12)), s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), s += static_cast<char>(0x80 | (cp & 0x3F));
  return s;
}

// bytes_to_unicode as GPT-2's encoder.py defines it.
std::vector<std::string> byte_symbols() {
  std::vector<int> bs;
  for (int b = '!'; b <= '~'; ++b) bs.push_back(b);
  for (int b = 0xA1; b <= 0xAC; ++b) bs.push_back(b);
  for (int b = 0xAE; b <= 0xFF; ++b) bs.push_back(b);
  std::vector<std::string> out(256);
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    if (std::find(bs.begin(), bs.end(), b) != bs.end()) out[static_cast<std::size_t>(b)] = utf8(static_cast<char32_t>(b));
    else out[static_cast<std::size_t>(b)] = utf8(static_cast<char32_t>(256 + n++));
  }
  return out;
}

const char* kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// ids 0..255: the byte symbols in byte order; 256 "Ġt", 257 "he", 258 "Ġthe", 259 "ll".
std::string tokenizer_json(const std::string& pre, bool with_template, bool ignore_merges = false) {
  const std::vector<std::string> sym = byte_symbols();
  std::string vocab;
  for (int b = 0; b < 256; ++b) vocab += io::json_string(sym[static_cast<std::size_t>(b)]) + ":" + std::to_string(b) + ",";
  const std::string G = sym[' '];
  vocab += io::json_string(G + "t") + ":256," + io::json_string("he") + ":257," + io::json_string(G + "the") + ":258," +
           io::json_string("ll") + ":259";
  const std::string merges = "[" + io::json_string(G + " t") + ",\"h e\"," + io::json_string(G + "t he") + ",[\"l\",\"l\"]]";
  std::string post = "null";
  if (with_template)
    post = R"({"type":"Sequence","processors":[{"type":"ByteLevel","trim_offsets":false},{"type":"TemplateProcessing",
      "single":[{"SpecialToken":{"id":"<|begin|>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],
      "pair":[],"special_tokens":{"<|begin|>":{"id":"<|begin|>","ids":[301],"tokens":["<|begin|>"]}}}]})";
  return std::string(R"({"version":"1.0","added_tokens":[{"id":300,"content":"<|end|>","special":true},
      {"id":301,"content":"<|begin|>","special":true}],"normalizer":null,"pre_tokenizer":)") + pre +
         R"(,"post_processor":)" + post + R"(,"decoder":{"type":"ByteLevel"},"model":{"type":"BPE","dropout":null,
      "byte_fallback":false,"ignore_merges":)" + (ignore_merges ? "true" : "false") + R"(,"vocab":{)" + vocab +
         R"(},"merges":)" + merges + "}}";
}

std::string split_pre(const char* regex) {
  return std::string(R"({"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":)") + io::json_string(regex) +
         R"(},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]})";
}
const std::string kGpt2Pre = R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true})";

using Pieces = std::vector<std::string>;

TEST(Tokenizer, PreTokenisersSplitAsTheirRegexes) {
  const std::string text = "Hello world's  123456 x\n\n  y!!\n";
  const Tokenizer llama3 = Tokenizer::parse(tokenizer_json(split_pre(kLlama3), false), "llama3");
  const Tokenizer qwen2 = Tokenizer::parse(tokenizer_json(split_pre(kQwen2), false), "qwen2");
  const Tokenizer gpt2 = Tokenizer::parse(tokenizer_json(kGpt2Pre, false), "gpt2");
  EXPECT_EQ(llama3.pre_tokenizer(), PreTokenizer::llama3);
  EXPECT_EQ(llama3.pre_tokenize(text),
            (Pieces{"Hello", " world", "'s", " ", " ", "123", "456", " x", "\n\n", " ", " y", "!!\n"}));
  EXPECT_EQ(qwen2.pre_tokenize(text),
            (Pieces{"Hello", " world", "'s", " ", " ", "1", "2", "3", "4", "5", "6", " x", "\n\n", " ", " y", "!!\n"}));
  EXPECT_EQ(gpt2.pre_tokenize(text), (Pieces{"Hello", " world", "'s", " ", " 123456", " x", "\n\n ", " y", "!!", "\n"}));
  // Contractions: case-insensitive for Llama 3, case-sensitive for GPT-2.
  EXPECT_EQ(llama3.pre_tokenize("IT'S"), (Pieces{"IT", "'S"}));
  EXPECT_EQ(gpt2.pre_tokenize("IT'S"), (Pieces{"IT", "'", "S"}));
  // Letters and numbers beyond ASCII: accented, CJK, Arabic-Indic digits.
  EXPECT_EQ(llama3.pre_tokenize("h\xC3\xA9llo w\xC3\xB6rld \xE6\x97\xA5\xE6\x9C\xAC \xD9\xA1\xD9\xA2"),
            (Pieces{"h\xC3\xA9llo", " w\xC3\xB6rld", " \xE6\x97\xA5\xE6\x9C\xAC", " ", "\xD9\xA1\xD9\xA2"}));
  // Trailing whitespace stays whole.
  EXPECT_EQ(gpt2.pre_tokenize("a  "), (Pieces{"a", "  "}));
}

TEST(Tokenizer, MergesByRankAddedTokensAndTemplate) {
  const Tokenizer t = Tokenizer::parse(tokenizer_json(kGpt2Pre, false), "t");
  // "the": t h e -> t he (rank 1); " hello": Ġ h e l l o -> Ġ he l l o -> Ġ he ll o.
  EXPECT_EQ(t.encode("the hello"), (std::vector<std::int32_t>{'t', 257, ' ', 257, 259, 'o'}));
  // " the": Ġ t (rank 0) -> Ġt h e -> Ġt he -> Ġthe (rank 2).
  EXPECT_EQ(t.encode(" the"), (std::vector<std::int32_t>{258}));
  // Added tokens are matched before pre-tokenisation.
  EXPECT_EQ(t.encode("a<|end|>b"), (std::vector<std::int32_t>{'a', 300, 'b'}));
  const Tokenizer with_bos = Tokenizer::parse(tokenizer_json(split_pre(kLlama3), true), "bos");
  EXPECT_EQ(with_bos.encode(" the"), (std::vector<std::int32_t>{301, 258}));
  EXPECT_EQ(with_bos.decode(with_bos.encode("hi <|end|> there")), "<|begin|>hi <|end|> there");
}

TEST(Tokenizer, DecodeInvertsEncodeOnAnyBytes) {
  const Tokenizer t = Tokenizer::parse(tokenizer_json(split_pre(kQwen2), false), "t");
  std::mt19937 rng(5);
  for (int i = 0; i < 300; ++i) {
    std::string s(static_cast<std::size_t>(rng() % 40), '\0');
    for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? "the ll\n'x"[rng() % 9] : rng() % 256);
    EXPECT_EQ(t.decode(t.encode(s)), s);
  }
}

TEST(Tokenizer, RefusesWhatItDoesNotImplement) {
  auto err = [](const std::string& json) {
    try {
      Tokenizer::parse(json, "tok.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  std::string s = tokenizer_json(kGpt2Pre, false);
  EXPECT_NE(err(std::string(s).replace(s.find("\"type\":\"BPE\""), 12, "\"type\":\"WordPiece\"")).find("WordPiece"), std::string::npos);
  EXPECT_NE(err(std::string(s).replace(s.find("\"byte_fallback\":false"), 21, "\"byte_fallback\":true")).find("byte_fallback"),
            std::string::npos);
  EXPECT_NE(err(tokenizer_json(split_pre(R"(\w+|\s+)"), false)).find("regex"), std::string::npos);
  EXPECT_NE(err(std::string(s).replace(s.find("\"normalizer\":null"), 17, R"("normalizer":{"type":"NFKC"})")).find("NFKC"),
            std::string::npos);
}

}  // namespace
}  // namespace hal::model
