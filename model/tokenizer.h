#pragma once
// Byte-level BPE from a Hugging Face tokenizer.json (GPT-2, Llama 3, Qwen2).
//
// What is implemented, as the tokenizers library does it:
//  - added tokens are matched literally first (longest first) and map to
//    their ids;
//  - pre-tokenisation by one of three known regular expressions, recognised
//    by their exact text: GPT-2's (ByteLevel with use_regex), Llama 3's and
//    Qwen2's (a Split before ByteLevel). Each is a hand-written scanner over
//    code points with Unicode's letter, number and White_Space classes
//    (model/unicode_classes.h); the case-insensitive contractions fold ASCII
//    letters only;
//  - each piece's bytes mapped by GPT-2's bytes_to_unicode, then merged by
//    rank (ignore_merges: a piece that is itself in the vocabulary is kept);
//  - the post-processor's TemplateProcessing (single sequence) adds its
//    special tokens (Llama 3's <|begin_of_text|>);
//  - decoding maps the symbols back to bytes.
// Not implemented, and said so: normalizers other than none and NFC (an NFC
// normalizer is accepted but not applied: text that is not already in NFC
// may tokenise differently), added tokens' lstrip/rstrip/single_word flags,
// byte_fallback (SentencePiece-style BPE, Llama 2's tokenizer: refused).
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hal::model {

enum class PreTokenizer { gpt2, llama3, qwen2 };

class Tokenizer {
 public:
  // Parses tokenizer.json's text; `source` names it in errors. Throws
  // hal::Error(unsupported) for a tokenizer that is not byte-level BPE of a
  // known kind, io_error for malformed files.
  static Tokenizer parse(std::string_view json_text, const std::string& source);
  // The tokenizer of a checkpoint folder, or nullopt without tokenizer.json.
  static std::optional<Tokenizer> load(const std::string& dir);

  std::vector<std::int32_t> encode(std::string_view text) const;
  std::string decode(std::span<const std::int32_t> ids) const;
  // Pre-tokenisation alone (the pieces of text between added tokens).
  std::vector<std::string> pre_tokenize(std::string_view text) const;
  PreTokenizer pre_tokenizer() const noexcept { return pre_; }
  std::string description() const;

 private:
  void bpe(std::string_view piece, std::vector<std::int32_t>& out) const;
  PreTokenizer pre_ = PreTokenizer::gpt2;
  bool add_prefix_space_ = false, ignore_merges_ = false, nfc_ = false;
  std::unordered_map<std::string, std::int32_t> vocab_;
  std::vector<std::string> id_to_token_;
  std::unordered_map<std::string, std::int32_t> merge_rank_;  // "a b" -> rank
  std::vector<std::pair<std::string, std::int32_t>> added_;   // longest first
  std::vector<bool> is_added_;
  std::vector<std::int32_t> prefix_, suffix_;                 // post-processor
};

}  // namespace hal::model
