#pragma once
// Unicode classes of code points, for the tokenizer's pre-tokenisation:
// letters (\p{L}), numbers (\p{N}) and White_Space (\s). Tables generated from
// Python's unicodedata by scripts/gen_unicode_classes.py.
#include <iterator>

namespace hal::model::unicode {

struct CodePointRange {
  char32_t first, last;
};

bool is_letter(char32_t cp);
bool is_number(char32_t cp);
bool is_space(char32_t cp);
const char* unicode_version();

}  // namespace hal::model::unicode
