#include "model/tokenizer.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <fstream>
#include <sstream>

#include "hal/error.h"
#include "hal/io/json_reader.h"
#include "model/text_file.h"
#include "model/unicode_classes.h"

namespace hal::model {

using io::JsonValue;

using io::append_utf8;

namespace {

constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Code points of `text` with the byte offset where each starts. A malformed
// sequence counts as one code point per byte (U+FFFD: neither letter,
// number nor space), so its bytes still reach the byte-level mapping.
struct CodePoints {
  std::vector<char32_t> cp;
  std::vector<std::size_t> at;  // at[i]: byte offset of cp[i]; at[n] = text size
};

CodePoints decode_utf8(std::string_view s) {
  CodePoints r;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    char32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    bool ok = len > 0 && i + static_cast<std::size_t>(len) <= s.size();
    for (int k = 1; ok && k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
      if ((c >> 6) != 2) ok = false;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (!ok) len = 1, cp = 0xFFFD;
    r.cp.push_back(cp);
    r.at.push_back(i);
    i += static_cast<std::size_t>(len);
  }
  r.at.push_back(s.size());
  return r;
}

// GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the
// others to U+0100 onwards in byte order.
struct ByteMap {
  std::string to_symbol[256];
  std::unordered_map<char32_t, unsigned char> from_symbol;
  ByteMap() {
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t cp = printable ? static_cast<char32_t>(b) : next++;
      append_utf8(to_symbol[b], cp);
      from_symbol[cp] = static_cast<unsigned char>(b);
    }
  }
};
const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}

// One match of the pre-tokeniser's expression at cp[i], as the regex's
// ordered alternation would find it (see the patterns above).
std::size_t match_at(const std::vector<char32_t>& c, std::size_t i, PreTokenizer kind) {
  using namespace unicode;
  const std::size_t n = c.size();
  auto L = [&](std::size_t k) { return k < n && is_letter(c[k]); };
  auto N = [&](std::size_t k) { return k < n && is_number(c[k]); };
  auto S = [&](std::size_t k) { return k < n && is_space(c[k]); };
  auto other = [&](std::size_t k) { return k < n && !is_space(c[k]) && !is_letter(c[k]) && !is_number(c[k]); };
  auto newline = [&](std::size_t k) { return k < n && (c[k] == '\r' || c[k] == '\n'); };
  const bool gpt2 = kind == PreTokenizer::gpt2;
  // Contractions ('s 't 're 've 'm 'll 'd), case-insensitive for Llama 3 / Qwen2.
  if (c[i] == '\'' && i + 1 < n) {
    auto lower = [&](std::size_t k) { return k < n ? (gpt2 ? c[k] : (c[k] < 128 ? (c[k] | 0x20) : c[k])) : 0; };
    const char32_t a = lower(i + 1), b = lower(i + 2);
    if (a == 's' || a == 't') return 2;
    if ((a == 'r' || a == 'v') && b == 'e') return 3;
    if (a == 'm') return 2;
    if (a == 'l' && b == 'l') return 3;
    if (a == 'd') return 2;
  }
  auto run = [&](std::size_t k, auto pred) {
    while (pred(k)) ++k;
    return k;
  };
  if (gpt2) {
    const std::size_t j = c[i] == ' ' ? i + 1 : i;
    if (L(j)) return run(j, L) - i;                        //  ?\p{L}+
    if (N(j)) return run(j, N) - i;                        //  ?\p{N}+
    if (other(j)) return run(j, other) - i;                //  ?[^\s\p{L}\p{N}]+
  } else {
    if (L(i)) return run(i, L) - i;                        // [^\r\n\p{L}\p{N}]?\p{L}+
    if (!newline(i) && !N(i) && L(i + 1)) return run(i + 1, L) - i;
    if (N(i)) {                                            // \p{N}{1,3} (Qwen2: \p{N})
      std::size_t j = i + 1;
      if (kind == PreTokenizer::llama3)
        while (j < i + 3 && N(j)) ++j;
      return j - i;
    }
    const std::size_t j = c[i] == ' ' && other(i + 1) ? i + 1 : i;
    if (other(j)) return run(run(j, other), newline) - i;  //  ?[^\s\p{L}\p{N}]+[\r\n]*
    if (S(i)) {                                            // \s*[\r\n]+
      const std::size_t e = run(i, S);
      for (std::size_t k = e; k > i; --k)
        if (newline(k - 1)) return k - i;
    }
  }
  if (S(i)) {
    const std::size_t e = run(i, S);
    if (e == n || e - i == 1) return e - i;  // \s+(?!\S) at the end; else \s+ of one
    return e - i - 1;                        // \s+(?!\S): leaves the last space to the next piece
  }
  return 1;
}

[[noreturn]] void refuse(const std::string& source, std::string_view what) {
  throw Error(ErrorCode::unsupported,
              fmt::format("'{}': {}; hal implements byte-level BPE only (GPT-2, Llama 3, Qwen2): tokenise with the "
                          "model's own tokenizer and pass --tokens", source, what));
}

std::string type_of(const JsonValue* v) {
  if (v == nullptr || !v->is_object()) return {};
  const JsonValue* t = v->find("type");
  return t && t->is_string() ? t->text() : std::string();
}

std::optional<PreTokenizer> pattern_kind(const JsonValue& split) {
  const JsonValue* p = split.find("pattern");
  const JsonValue* re = p && p->is_object() ? p->find("Regex") : nullptr;
  if (re == nullptr || !re->is_string()) return std::nullopt;
  if (re->text() == kLlama3Pattern) return PreTokenizer::llama3;
  if (re->text() == kQwen2Pattern) return PreTokenizer::qwen2;
  if (re->text() == kGpt2Pattern) return PreTokenizer::gpt2;
  return std::nullopt;
}

}  // namespace

Tokenizer Tokenizer::parse(std::string_view text, const std::string& source) {
  const JsonValue root = io::parse_json(text, source);
  if (!root.is_object()) throw Error(ErrorCode::io_error, fmt::format("'{}': expected a JSON object", source));
  Tokenizer t;
  const JsonValue* model = root.find("model");
  if (type_of(model) != "BPE") refuse(source, fmt::format("model type '{}'", type_of(model)));
  if (const JsonValue* bf = model->find("byte_fallback"); bf && bf->is_bool() && bf->boolean())
    refuse(source, "byte_fallback BPE (SentencePiece style)");
  if (const JsonValue* im = model->find("ignore_merges"); im && im->is_bool()) t.ignore_merges_ = im->boolean();

  // Pre-tokeniser: ByteLevel(use_regex) or Sequence[Split(known regex), ByteLevel(no regex)].
  const JsonValue* pre = root.find("pre_tokenizer");
  const std::string pre_type = type_of(pre);
  const JsonValue* byte_level = nullptr;
  if (pre_type == "ByteLevel") {
    const JsonValue* ur = pre->find("use_regex");
    if (ur && ur->is_bool() && !ur->boolean()) refuse(source, "a ByteLevel pre-tokenizer without its regex");
    t.pre_ = PreTokenizer::gpt2;
    byte_level = pre;
  } else if (pre_type == "Sequence") {
    const JsonValue* items = pre->find("pretokenizers");
    if (!items || !items->is_array() || items->items().size() != 2 || type_of(&items->items()[0]) != "Split" ||
        type_of(&items->items()[1]) != "ByteLevel")
      refuse(source, "a pre_tokenizer Sequence other than [Split, ByteLevel]");
    const auto kind = pattern_kind(items->items()[0]);
    if (!kind) refuse(source, "a Split pre-tokenizer whose regex is not GPT-2's, Llama 3's or Qwen2's");
    const JsonValue* behavior = items->items()[0].find("behavior");
    const JsonValue* invert = items->items()[0].find("invert");
    if ((behavior && behavior->is_string() && behavior->text() != "Isolated") || (invert && invert->is_bool() && invert->boolean()))
      refuse(source, "a Split pre-tokenizer other than behavior Isolated, invert false");
    const JsonValue* ur = items->items()[1].find("use_regex");
    if (ur && ur->is_bool() && ur->boolean()) refuse(source, "two pre-tokenizer regexes");
    t.pre_ = *kind;
    byte_level = &items->items()[1];
  } else {
    refuse(source, fmt::format("pre_tokenizer '{}'", pre_type.empty() ? "none" : pre_type));
  }
  if (const JsonValue* aps = byte_level->find("add_prefix_space"); aps && aps->is_bool()) t.add_prefix_space_ = aps->boolean();

  const JsonValue* norm = root.find("normalizer");
  if (norm && !norm->is_null()) {
    if (type_of(norm) == "NFC") t.nfc_ = true;
    else refuse(source, fmt::format("normalizer '{}'", type_of(norm)));
  }
  const JsonValue* dec = root.find("decoder");
  if (dec && !dec->is_null() && type_of(dec) != "ByteLevel") refuse(source, fmt::format("decoder '{}'", type_of(dec)));

  const JsonValue* vocab = model->find("vocab");
  if (!vocab || !vocab->is_object()) throw Error(ErrorCode::io_error, fmt::format("'{}': model.vocab is not an object", source));
  auto set_id = [&](const std::string& token, const JsonValue& v, std::string_view where) {
    if (!v.is_number() || !v.integer() || *v.integer() < 0 || *v.integer() > INT32_MAX)
      throw Error(ErrorCode::io_error, fmt::format("'{}': {} '{}': id is not a non-negative int32", source, where, token));
    const auto id = static_cast<std::int32_t>(*v.integer());
    if (static_cast<std::size_t>(id) >= t.id_to_token_.size()) t.id_to_token_.resize(static_cast<std::size_t>(id) + 1);
    t.id_to_token_[static_cast<std::size_t>(id)] = token;
    return id;
  };
  for (const io::JsonMember& m : vocab->members()) t.vocab_[m.key] = set_id(m.key, m.value, "vocab token");
  const JsonValue* merges = model->find("merges");
  if (!merges || !merges->is_array()) throw Error(ErrorCode::io_error, fmt::format("'{}': model.merges is not a list", source));
  std::int32_t rank = 0;
  for (const JsonValue& m : merges->items()) {
    std::string key;
    if (m.is_string()) key = m.text();
    else if (m.is_array() && m.items().size() == 2 && m.items()[0].is_string() && m.items()[1].is_string())
      key = m.items()[0].text() + " " + m.items()[1].text();
    if (key.find(' ') == std::string::npos || key.find(' ') != key.rfind(' '))
      throw Error(ErrorCode::io_error, fmt::format("'{}': merge {} is not a pair of symbols", source, rank));
    t.merge_rank_.emplace(key, rank++);
  }
  t.is_added_.assign(t.id_to_token_.size(), false);
  if (const JsonValue* added = root.find("added_tokens"); added && added->is_array()) {
    for (const JsonValue& a : added->items()) {
      const JsonValue* id = a.find("id");
      const JsonValue* content = a.find("content");
      if (!id || !content || !content->is_string() || content->text().empty())
        throw Error(ErrorCode::io_error, fmt::format("'{}': an added token without id or content", source));
      const std::int32_t i = set_id(content->text(), *id, "added token");
      if (t.is_added_.size() < t.id_to_token_.size()) t.is_added_.resize(t.id_to_token_.size(), false);
      t.is_added_[static_cast<std::size_t>(i)] = true;
      t.added_.emplace_back(content->text(), i);
    }
  }
  std::stable_sort(t.added_.begin(), t.added_.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });

  // Post-processor: TemplateProcessing's single-sequence template, possibly inside a Sequence.
  std::vector<const JsonValue*> procs;
  const JsonValue* post = root.find("post_processor");
  if (type_of(post) == "Sequence") {
    if (const JsonValue* ps = post->find("processors"); ps && ps->is_array())
      for (const JsonValue& p : ps->items()) procs.push_back(&p);
  } else if (post && !post->is_null()) {
    procs.push_back(post);
  }
  for (const JsonValue* p : procs) {
    const std::string type = type_of(p);
    if (type == "ByteLevel") continue;  // offsets only
    if (type != "TemplateProcessing") refuse(source, fmt::format("post_processor '{}'", type));
    const JsonValue* single = p->find("single");
    const JsonValue* specials = p->find("special_tokens");
    if (!single || !single->is_array()) throw Error(ErrorCode::io_error, fmt::format("'{}': TemplateProcessing without 'single'", source));
    bool seen_sequence = false;
    for (const JsonValue& item : single->items()) {
      if (item.find("Sequence")) {
        seen_sequence = true;
        continue;
      }
      const JsonValue* st = item.find("SpecialToken");
      const JsonValue* name = st ? st->find("id") : nullptr;
      const JsonValue* entry = name && name->is_string() && specials ? specials->find(name->text()) : nullptr;
      const JsonValue* ids = entry ? entry->find("ids") : nullptr;
      if (!ids || !ids->is_array())
        throw Error(ErrorCode::io_error, fmt::format("'{}': TemplateProcessing names a special token it does not define", source));
      for (const JsonValue& v : ids->items()) {
        if (!v.is_number() || !v.integer()) throw Error(ErrorCode::io_error, fmt::format("'{}': special token id", source));
        (seen_sequence ? t.suffix_ : t.prefix_).push_back(static_cast<std::int32_t>(*v.integer()));
      }
    }
  }
  return t;
}

std::optional<Tokenizer> Tokenizer::load(const std::string& dir) {
  const std::string path = dir + "/tokenizer.json";
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return parse(read_text(path), path);
}

std::vector<std::string> Tokenizer::pre_tokenize(std::string_view text) const {
  std::string prefixed;
  if (add_prefix_space_ && !text.empty() && text[0] != ' ') {
    prefixed = " ";
    prefixed += text;
    text = prefixed;
  }
  const CodePoints cps = decode_utf8(text);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < cps.cp.size();) {
    const std::size_t len = match_at(cps.cp, i, pre_);
    out.emplace_back(text.substr(cps.at[i], cps.at[i + len] - cps.at[i]));
    i += len;
  }
  return out;
}

void Tokenizer::bpe(std::string_view piece, std::vector<std::int32_t>& out) const {
  const ByteMap& bm = byte_map();
  std::string mapped;
  std::vector<std::string> symbols;
  for (char ch : piece) {
    symbols.push_back(bm.to_symbol[static_cast<unsigned char>(ch)]);
    mapped += symbols.back();
  }
  if (ignore_merges_) {
    if (const auto it = vocab_.find(mapped); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  while (symbols.size() > 1) {
    std::int32_t best = INT32_MAX;
    std::size_t at = 0;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto it = merge_rank_.find(symbols[i] + " " + symbols[i + 1]);
      if (it != merge_rank_.end() && it->second < best) best = it->second, at = i;
    }
    if (best == INT32_MAX) break;
    // Merge every occurrence of the best pair, left to right.
    const std::string a = symbols[at], b = symbols[at + 1];
    std::vector<std::string> next;
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      if (i + 1 < symbols.size() && symbols[i] == a && symbols[i + 1] == b) {
        next.push_back(a + b);
        ++i;
      } else {
        next.push_back(symbols[i]);
      }
    }
    symbols = std::move(next);
  }
  for (const std::string& s : symbols) {
    const auto it = vocab_.find(s);
    if (it == vocab_.end())
      throw Error(ErrorCode::invalid_argument, fmt::format("tokenizer: symbol '{}' of '{}' is not in the vocabulary", s, piece));
    out.push_back(it->second);
  }
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<std::int32_t> out = prefix_;
  std::size_t start = 0, i = 0;
  auto flush = [&](std::size_t end) {
    if (end > start)
      for (const std::string& piece : pre_tokenize(text.substr(start, end - start))) bpe(piece, out);
  };
  while (i < text.size()) {
    const auto hit = std::find_if(added_.begin(), added_.end(),
                                  [&](const auto& a) { return text.substr(i, a.first.size()) == a.first; });
    if (hit == added_.end()) {
      ++i;
      continue;
    }
    flush(i);
    out.push_back(hit->second);
    i += hit->first.size();
    start = i;
  }
  flush(text.size());
  out.insert(out.end(), suffix_.begin(), suffix_.end());
  return out;
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids) const {
  const ByteMap& bm = byte_map();
  std::string out;
  for (std::int32_t id : ids) {
    if (id < 0 || static_cast<std::size_t>(id) >= id_to_token_.size())
      throw_invalid_argument("tokenizer decode", "ids", fmt::format("ids in [0, {})", id_to_token_.size()), std::to_string(id));
    const std::string& tok = id_to_token_[static_cast<std::size_t>(id)];
    if (is_added_[static_cast<std::size_t>(id)]) {
      out += tok;
      continue;
    }
    const CodePoints cps = decode_utf8(tok);
    for (char32_t cp : cps.cp) {
      const auto it = bm.from_symbol.find(cp);
      if (it != bm.from_symbol.end()) out += static_cast<char>(it->second);
      else append_utf8(out, cp);
    }
  }
  return out;
}

std::string Tokenizer::description() const {
  const char* kind = pre_ == PreTokenizer::gpt2 ? "GPT-2" : pre_ == PreTokenizer::llama3 ? "Llama 3" : "Qwen2";
  return fmt::format("byte-level BPE, {} pre-tokenizer, {} tokens, {} merges{}", kind, vocab_.size(), merge_rank_.size(),
                     nfc_ ? " (its NFC normalizer is not applied)" : "");
}

}  // namespace hal::model
